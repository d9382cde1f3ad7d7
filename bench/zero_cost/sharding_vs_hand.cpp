// bench/zero_cost/sharding_vs_hand.cpp: a static spec on a static mesh and static extents
// costs nothing: each named_<x> (a sharding query) must compile at -O2 to what hand_<x>, the
// answer written as a constant, compiles to. The spec is PyTorch's (S(0), S(1)) on a (2, 4)
// mesh of a 13 x 6 tensor: rank 5 is (dp 1, tp 1), rows 7-12 and columns 2-3; the (S(0), S(0))
// spec nests tp's chunks in dp's (13 rows: 7 then 6, in chunks of 2, 2, 2, 1 and 2, 2, 2, 0).
#include <devmesh/sharding.hpp>

namespace dm = devmesh;
using mesh2d = dm::mesh<dm::dim<"dp", 2>, dm::dim<"tp", 4>>;
using rows_cols = dm::sharding<mesh2d, dm::on<"dp", dm::shard<0>>, dm::on<"tp", dm::shard<1>>>;
using nested = dm::sharding<mesh2d, dm::on<"dp", dm::shard<0>>, dm::on<"tp", dm::shard<0>>>;
constexpr dm::extents<13, 6> global{};

long long named_local_rows(void) { return rows_cols{}.local_shape(global, 5)[0]; }
long long hand_local_rows(void) { return 6; }
long long named_local_cols(void) { return rows_cols{}.local_shape(global, 5)[1]; }
long long hand_local_cols(void) { return 2; }
long long named_offset_rows(void) { return rows_cols{}.global_offset(global, 5)[0]; }
long long hand_offset_rows(void) { return 7; }
long long named_local_size(void) { return rows_cols{}.local_size(global, 5); }
long long hand_local_size(void) { return 12; }
long long named_nested_empty_offset(void) { return nested{}.global_offset(global, 7)[0]; }
long long hand_nested_empty_offset(void) { return 13; }  // an empty shard's offset: the extent
long long named_nested_global_index(void) { return nested{}.global_index(global, 6, 0, 1); }
long long hand_nested_global_index(void) { return 12; }
bool named_holds(void) { return rows_cols{}.holds(global, 5, {8, 3}); }
bool hand_holds(void) { return true; }

#if defined(ZERO_COST_DRIVER)
int main() {
  long long s = 0;
  for (int i = 0; i < 1000; ++i)
    s += named_local_rows() + hand_local_rows() + named_local_cols() + hand_local_cols() + named_offset_rows() +
         hand_offset_rows() + named_local_size() + hand_local_size() + named_nested_empty_offset() +
         hand_nested_empty_offset() + named_nested_global_index() + hand_nested_global_index() + named_holds() +
         hand_holds();
  return static_cast<int>(s & 1);
}
#endif
