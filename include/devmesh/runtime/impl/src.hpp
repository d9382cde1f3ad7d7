// devmesh/runtime/impl/src.hpp: the runtime's compiled part, what every backend shares
// (docs/design.md, "Compiled once"). Included by exactly one translation unit, compiled with
// DEVMESH_SEPARATE_COMPILATION: the CMake target devmesh::runtime builds it, and
// <devmesh/src.hpp> includes it for builds without CMake.
#pragma once
#if !defined(DEVMESH_SEPARATE_COMPILATION)
#error "devmesh/runtime/impl/src.hpp is compiled with DEVMESH_SEPARATE_COMPILATION (docs/quickstart.md)"
#endif
#include "../../core/config.hpp"
#include "deadline.ipp"
#include "layout_description.ipp"
#include "layout_view.ipp"
#include "topology.ipp"
#include "digest.ipp"
#include "rank_placement.ipp"
#include "flight_recorder.ipp"
#include "flight_trace.ipp"
#include "report.ipp"
#include "../../core/impl/print.ipp"
