// bench/zero_cost/named_vs_hand.cpp: pairs of functions, named_<x> (a devmesh named query)
// and hand_<x> (the arithmetic written by hand), that must compile to the same code at -O2.
// compare_asm.py compiles this file with and without DEVMESH_NO_RANK_CHECKS and compares
// each pair's assembly. With rank checks on, the hand-written side checks the same range
// and calls its own out-of-line error function (defined in the TU, as in a header-only
// library), as a careful hand-written version would.
#include <array>
#include <stdexcept>
#include <string>
#include <devmesh/devmesh.hpp>

namespace dm = devmesh;
using mesh3d = dm::mesh<dm::dim<"dp", 2>, dm::dim<"cp", 2>, dm::dim<"tp", 2>>;  // static
using mesh3 = dm::mesh<dm::dim<"dp">, dm::dim<"cp">, dm::dim<"tp">>;           // dynamic

// What a careful hand-written dynamic row-major mesh stores: its rank count, the sizes, and
// the one stride that is not a size or 1 (dp's; cp's stride is tp's size, tp's is 1). This
// is also what devmesh stores for mesh3 (its dynamic layout values, see layout.hpp).
struct hand_mesh {
  int ranks;
  int dp;
  int dp_stride;
  int cp;
  int tp;
};

#if defined(DEVMESH_NO_RANK_CHECKS)
#define HAND_CHECK(r, n) (void)0
#else
// A header-only library's error function, as devmesh's: defined here, kept out of line.
[[noreturn, gnu::noinline]] inline void rank_error_by_hand(int r, int n) {
  throw std::out_of_range("rank " + std::to_string(r) + " is not in [0, " + std::to_string(n) + ")");
}
#define HAND_CHECK(r, n) \
  if ((r) < 0 || (r) >= (n)) rank_error_by_hand(r, n)
#endif

// ---- static mesh (2, 2, 2): sizes and strides are constants ------------------------------
int named_static_local_rank_tp(int r) { return mesh3d{}.local_rank<"tp">(r); }
int hand_static_local_rank_tp(int r) {
  HAND_CHECK(r, 8);
  return (r / 1) % 2;
}

int named_static_local_rank_dp(int r) { return mesh3d{}.local_rank<"dp">(r); }
int hand_static_local_rank_dp(int r) {
  HAND_CHECK(r, 8);
  return (r / 4) % 2;
}

std::array<int, 3> named_static_coordinate(int r) { return mesh3d{}.coordinate(r); }
std::array<int, 3> hand_static_coordinate(int r) {
  HAND_CHECK(r, 8);
  return {(r / 4) % 2, (r / 2) % 2, (r / 1) % 2};
}

int named_static_group_member(int r, int i) { return mesh3d{}.group<"dp", "cp">(r)[i]; }
int hand_static_group_member(int r, int i) {
  HAND_CHECK(r, 8);
  const int base = r - ((r / 4) % 2) * 4 - ((r / 2) % 2) * 2;
  return base + (i % 2) * 2 + ((i / 2) % 2) * 4;
}

dm::split_args named_static_comm_split_dp(int r) { return mesh3d{}.comm_split<"dp">(r); }
dm::split_args hand_static_comm_split_dp(int r) {
  HAND_CHECK(r, 8);
  const int d = (r / 4) % 2;
  return {r - d * 4, d};
}

// ---- dynamic mesh: sizes and strides are loaded from the object (a static 1 is not) --------------------------
int named_dynamic_local_rank_tp(const mesh3& m, int r) { return m.local_rank<"tp">(r); }
int hand_dynamic_local_rank_tp(const hand_mesh& m, int r) {
  HAND_CHECK(r, m.ranks);
  return r % m.tp;
}

int named_dynamic_local_rank_cp(const mesh3& m, int r) { return m.local_rank<"cp">(r); }
int hand_dynamic_local_rank_cp(const hand_mesh& m, int r) {
  HAND_CHECK(r, m.ranks);
  return (r / m.tp) % m.cp;
}

dm::split_args named_dynamic_comm_split_tp(const mesh3& m, int r) { return m.comm_split<"tp">(r); }
dm::split_args hand_dynamic_comm_split_tp(const hand_mesh& m, int r) {
  HAND_CHECK(r, m.ranks);
  const int d = r % m.tp;
  return {r - d, d};
}

#if defined(ZERO_COST_DRIVER)
// For the instruction count under callgrind: call every function with valid ranks
// through volatile pointers (so no call is inlined into the driver).
#include <cstdio>
#include <cstdlib>
template <class F, class... A>
void repeat(F* f, A... a) {
  F* volatile call = f;
  for (int i = 0; i < 1000; ++i) {
    const auto v = call(a..., i % 8);
    static_cast<void>(*reinterpret_cast<const volatile char*>(&v));
  }
}
int main() {
  const mesh3 dyn(2, 2, 2);
  const hand_mesh hand{8, 2, 4, 2, 2};
  repeat(named_static_local_rank_tp), repeat(hand_static_local_rank_tp);
  repeat(named_static_local_rank_dp), repeat(hand_static_local_rank_dp);
  repeat(named_static_coordinate), repeat(hand_static_coordinate);
  repeat(named_static_comm_split_dp), repeat(hand_static_comm_split_dp);
  repeat(named_dynamic_local_rank_tp, dyn), repeat(hand_dynamic_local_rank_tp, hand);
  repeat(named_dynamic_local_rank_cp, dyn), repeat(hand_dynamic_local_rank_cp, hand);
  repeat(named_dynamic_comm_split_tp, dyn), repeat(hand_dynamic_comm_split_tp, hand);
  for (int i = 0; i < 1000; ++i) {  // group member: (rank, index)
    int (*volatile named)(int, int) = named_static_group_member;
    int (*volatile hand_fn)(int, int) = hand_static_group_member;
    static_cast<void>(named(i % 8, i % 4) + hand_fn(i % 8, i % 4));
  }
}
#endif
