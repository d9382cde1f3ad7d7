// devmesh/core/config.hpp: portability macros shared by every header, and the build mode.
#pragma once

// The build mode (docs/design.md, "Compiled once"). The runtime's untyped code (init steps,
// consensus, deadlines, the communicator cache, options, topology, the flight recorder, the
// backends' calls, redistribute's executor) is written once, in implementation files under
// include/devmesh/**/impl/, and reached in one of two ways:
//   - header-only (the default): the headers include their implementation files, and every
//     definition is inline, as in any header-only library;
//   - compiled: with DEVMESH_SEPARATE_COMPILATION (which the CMake targets devmesh::mpi and
//     devmesh::nccl define), the headers only declare, and one translation unit compiles the
//     definitions (<devmesh/src.hpp>; the CMake targets build it into a library).
// DEVMESH_DECL starts every untyped definition: inline in header-only mode, nothing otherwise.
// DEVMESH_INLINE_DEFINITIONS says whether the headers include their implementation files: in
// the header-only mode, except in nvcc's (or clang's) device pass (__CUDA_ARCH__), which
// compiles no host code: there the runtime is declared only, as in the compiled mode, and the
// device compiler (cicc) parses none of its definitions.
#if defined(DEVMESH_SEPARATE_COMPILATION)
#define DEVMESH_HEADER_ONLY 0
#else
#define DEVMESH_HEADER_ONLY 1
#endif
#if DEVMESH_HEADER_ONLY && !defined(__CUDA_ARCH__)
#define DEVMESH_INLINE_DEFINITIONS 1
#define DEVMESH_DECL inline
#else
#define DEVMESH_INLINE_DEFINITIONS 0
#define DEVMESH_DECL
#endif

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
