// tests/gpu/bench.hpp: check 5, busbw through devmesh against raw NCCL calls (bench.cpp).
#pragma once
#include <devmesh/devmesh.hpp>

#include "common.hpp"

namespace gpu_check {

/// all_reduce, all_gather, reduce_scatter from 8 B to opt.bench_max_bytes over `world`
/// (collective), through a 1-D devmesh mesh and through raw NCCL calls on the same
/// communicator; writes the tables to opt.report_path (rank 0).
void bench(report& rep, const devmesh::nccl::communicator& world, const options& opt);

}  // namespace gpu_check
