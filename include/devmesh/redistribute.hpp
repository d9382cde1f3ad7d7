// devmesh/redistribute.hpp: redistribute on a device_mesh (opt-in, with a backend): the
// sharding layer's plans run on the mesh's communicators. Include after, or instead of,
// devmesh.hpp with the MPI backend. See docs/sharding.md.
#pragma once
#include "devmesh.hpp"
#include "sharding.hpp"
#include "runtime/device_mesh.hpp"
#include "redistribute/executor.hpp"
#include "redistribute/redistribute.hpp"
#include "redistribute/distribute.hpp"
#include "redistribute/links.hpp"
#include "redistribute/calibrate.hpp"
