// The quickstart's train.cpp (docs/quickstart.md, "A first program") written by hand with MPI:
// the same (replicate=2, shard=4) groups from MPI_Comm_split, the same two averages, the same
// output. bench/compile/program_cost.py compiles it next to the devmesh version: the compile
// time a user pays for names, checks and the mesh, against the code they would write instead.
#include <mpi.h>

#include <cstdio>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int replicate = 2, shards = 4;  // row-major (replicate, shard), as the devmesh mesh
  if (size != replicate * shards) {
    if (rank == 0) std::fprintf(stderr, "needs %d ranks, got %d\n", replicate * shards, size);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  // The shard group holds the ranks of one row, the replicate group those of one column.
  MPI_Comm shard_comm, replicate_comm;
  MPI_Comm_split(MPI_COMM_WORLD, rank / shards, rank % shards, &shard_comm);
  MPI_Comm_split(MPI_COMM_WORLD, rank % shards, rank / shards, &replicate_comm);

  std::vector<float> grad(8, float(rank)), shard(2);
  MPI_Reduce_scatter_block(grad.data(), shard.data(), 2, MPI_FLOAT, MPI_SUM, shard_comm);
  for (float& v : shard) v /= shards;
  MPI_Allreduce(MPI_IN_PLACE, shard.data(), 2, MPI_FLOAT, MPI_SUM, replicate_comm);
  for (float& v : shard) v /= replicate;
  int shard_rank = 0, shard_size = 0, replicate_rank = 0;
  MPI_Comm_rank(shard_comm, &shard_rank);
  MPI_Comm_size(shard_comm, &shard_size);
  MPI_Comm_rank(replicate_comm, &replicate_rank);
  std::printf("rank %d: replicate %d, shard %d of %d, grad %g\n", rank, replicate_rank, shard_rank, shard_size,
              shard[0]);
  if (rank == 0) {
    std::string nested = "[";
    for (int r = 0; r < replicate; ++r) {
      nested += r ? ", [" : "[";
      for (int s = 0; s < shards; ++s) nested += (s ? ", " : "") + std::to_string(r * shards + s);
      nested += "]";
    }
    std::printf("mesh %s]\n", nested.c_str());
  }
  MPI_Comm_free(&shard_comm);
  MPI_Comm_free(&replicate_comm);
  MPI_Finalize();
}
