// devmesh/redistribute/impl/blocks.hpp: the blocks a redistribute step meets, read from plain
// data (call.hpp): a spec's block at a position as its index maps, one per tensor dim (the
// sharding layer's map_dim over a table view: the same arithmetic a spec's queries run), made
// once per step and position and kept in the thread's store (no heap once warm); the elements
// two blocks share as runs (the sharding layer's for_each_shared_run_in); the positions of a
// step's group. Compiled once: inline, in each backend's library (or header-only).
#pragma once
#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "../../core/diagnostics.hpp"
#include "../../sharding/block_overlap.hpp"
#include "../../sharding/index_map.hpp"
#include "../call.hpp"

namespace devmesh::detail {

/// A step that cannot be run as planned: a planner bug, never a user error (the simulator of
/// tests/sharding/redistribute_plan.cpp checks every plan it makes against the same rules).
[[noreturn]] inline void fail_step(const char* kind, const std::string& what) {
  throw mesh_error("devmesh: redistribute: internal error in a " + std::string(kind) + " step: " + what);
}

/// The positions of the group over the mesh dims `dims` (bit d: dim d) that holds position
/// `pos`, in the order of the group's communicator (row-major over the dims in mesh order), into
/// out; returns pos's index there. (The core's rank_at over the mesh's values.)
inline int group_positions(const mesh_data& m, unsigned dims, int pos, std::vector<int>& out) {
  const layout_values& l = m.layout;
  const int D = l.ndim;
  int c[max_view_dims]{}, size[max_view_dims]{}, n = 1;
  int base = pos;  // the first position of pos's (sub)mesh: its digits in the mesh dims' modes zeroed
  for (int k = 0; k < l.first[D]; ++k) base -= (pos / l.stride[k]) % l.shape[k] * l.stride[k];
  for (int d = 0; d < D; ++d) {
    c[d] = m.coordinate(pos, d), size[d] = m.size(d);
    if ((dims >> d) & 1u) n *= size[d];
  }
  out.clear();
  int me = 0;
  for (int i = 0; i < n; ++i) {
    for (int d = D - 1, rest = i; d >= 0; --d)
      if ((dims >> d) & 1u) c[d] = rest % size[d], rest /= size[d];
    int q = base;
    for (int d = 0; d < D; ++d)
      for (int k = l.first[d + 1] - 1, rest = c[d]; k >= l.first[d]; --k) {
        q += (rest % l.shape[k]) * l.stride[k];
        rest /= l.shape[k];
      }
    if (q == pos) me = i;
    out.push_back(q);
  }
  return me;
}

/// One tensor dim of a block as the executor keeps it: a map of a mesh of up to max_view_dims
/// dims (written in place: only what it reads).
using block_map = dim_map<max_view_dims>;
/// A block: one map per tensor dim.
using block_maps = std::span<const block_map>;

/// Number of elements a block holds.
inline tensor_index block_size(block_maps b) {
  tensor_index n = 1;
  for (const auto& m : b) n *= m.length();
  return n;
}

/// What the thread keeps for the executor's blocks: the maps (R per block), which block each
/// slot holds (2 p + side), the walk of two blocks (one entry per tensor dim).
struct block_store {
  std::vector<block_map> maps;
  std::vector<int> keys;
  std::vector<block_walk_dim> walk;
};
inline block_store& thread_block_store() {
  thread_local block_store store;
  return store;
}

/// Mesh m's dim sizes and position p's coordinates, what a block's maps read (dims of t).
struct block_site {
  int sizes[max_view_dims]{}, coords[max_view_dims]{};
  block_site(const mesh_data& m, const table_view& t, int p) {
    for (int d = 0; d < t.ndims; ++d) sizes[d] = m.size(d), coords[d] = m.coordinate(p, d);
  }
};

/// A block's maps into out[0, ext.size()): spec t at position p of mesh m, a tensor of extents ext.
inline void block_maps_into(const mesh_data& m, const table_view& t, int p, std::span<const tensor_index> ext,
                            block_map* out) {
  const block_site at(m, t, p);
  for (std::size_t k = 0; k < ext.size(); ++k)
    map_dim_into(out[k], t, m.order, at.sizes, at.coords, static_cast<int>(k), ext[k]);
}

/// Number of elements spec t's block at position p holds (nothing kept).
inline tensor_index local_size(const mesh_data& m, const table_view& t, int p, std::span<const tensor_index> ext) {
  const block_site at(m, t, p);
  thread_local block_map one;  // (a map is large: not cleared for every query)
  tensor_index n = 1;
  for (std::size_t k = 0; k < ext.size(); ++k) {
    map_dim_into(one, t, m.order, at.sizes, at.coords, static_cast<int>(k), ext[k]);
    n *= one.length();
  }
  return n;
}

/// The blocks of one step's two specs (`before` at some positions, `after` at others) for a tensor
/// of extents ext on mesh m: each block's maps made on first use and kept for the step, `blocks`
/// of them at most (a step meets each position of its group twice at most). One at a time per
/// thread: it uses the thread's store.
class step_blocks {
 public:
  step_blocks(const mesh_data& m, std::span<const tensor_index> ext, const table_view& before,
              const table_view& after, int blocks)
      : m_(m), ext_(ext), tables_{before, after}, store_(thread_block_store()), capacity_(blocks) {
    const std::size_t r = ext.size();
    if (store_.maps.size() < static_cast<std::size_t>(blocks) * r) store_.maps.resize(static_cast<std::size_t>(blocks) * r);
    if (store_.walk.size() < r) store_.walk.resize(r);
    store_.keys.clear();
  }
  step_blocks(const step_blocks&) = delete;
  step_blocks& operator=(const step_blocks&) = delete;

  /// The block `before` gives position p.
  block_maps before(int p) { return block(0, p); }
  /// The block `after` gives position p.
  block_maps after(int p) { return block(1, p); }
  /// for_each_shared_run between blocks a and b: f(offset in a, offset in b, n) per run, in the
  /// tensor's row-major order; returns the number of elements.
  template <class F>
  tensor_index runs(block_maps a, block_maps b, F&& f) {
    return for_each_shared_run_in(a, b, std::span<block_walk_dim>(store_.walk.data(), ext_.size()), f);
  }

 private:
  block_maps block(int side, int p) {
    const int key = 2 * p + side;
    const std::size_t r = ext_.size();
    for (std::size_t i = 0; i < store_.keys.size(); ++i)
      if (store_.keys[i] == key) return {store_.maps.data() + i * r, r};
    if (static_cast<int>(store_.keys.size()) == capacity_) fail_step("block", "more blocks than the step meets");
    block_map* at = store_.maps.data() + store_.keys.size() * r;
    block_maps_into(m_, tables_[side], p, ext_, at);
    store_.keys.push_back(key);
    return {at, r};
  }

  mesh_data m_;  // (a copy: a few pointers)
  std::span<const tensor_index> ext_;
  table_view tables_[2];
  block_store& store_;
  int capacity_;
};

/// Where the elements two blocks share lie in one of them: their first offset and number
/// when they are one contiguous range there (a collective then reads or writes them in
/// place), else first == -1. ranges_of_shared gives both blocks' in one pass.
struct shared_range {
  tensor_index first = -1, count = 0;
};
struct shared_ranges {
  shared_range in_a{0, 0}, in_b{0, 0};
};
inline shared_ranges ranges_of_shared(step_blocks& blocks, block_maps a, block_maps b) {
  shared_ranges r;
  bool contiguous_a = true, contiguous_b = true;
  blocks.runs(a, b, [&](tensor_index oa, tensor_index ob, tensor_index n) {
    if (r.in_a.count == 0) r.in_a.first = oa, r.in_b.first = ob;
    else
      contiguous_a = contiguous_a && oa == r.in_a.first + r.in_a.count,
      contiguous_b = contiguous_b && ob == r.in_b.first + r.in_b.count;
    r.in_a.count += n, r.in_b.count += n;
  });
  if (!contiguous_a) r.in_a.first = -1;
  if (!contiguous_b) r.in_b.first = -1;
  return r;
}

}  // namespace devmesh::detail
