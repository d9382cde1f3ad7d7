// devmesh/core/config.hpp: portability macros shared by every header.
#pragma once

// Layout functions run on host and device alike (CuTe's CUTE_HOST_DEVICE idea):
// nvcc rejects device calls to constexpr functions that are not __host__ __device__.
#if defined(__CUDACC__)
#define DEVMESH_HOST_DEVICE __host__ __device__
#else
#define DEVMESH_HOST_DEVICE
#endif

// Before a host-device function template that also forwards to host-only functions (a free
// query on a device mesh): nvcc then checks the call only where it is made, in host or
// device code, instead of rejecting the template's host instantiation.
#if defined(__CUDACC__) && !defined(__clang__)
#define DEVMESH_FORWARDING _Pragma("nv_exec_check_disable")
#else
#define DEVMESH_FORWARDING
#endif

// Code path taken while compiling device code (no exceptions there).
#if defined(__CUDA_ARCH__)
#define DEVMESH_DEVICE_PASS 1
#else
#define DEVMESH_DEVICE_PASS 0
#endif

namespace devmesh {

/// Size of a dim whose extent is only known at run time (std::dynamic_extent's role).
inline constexpr int dynamic_size = -1;

}  // namespace devmesh
