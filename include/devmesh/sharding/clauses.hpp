// devmesh/sharding/clauses.hpp: a static spec's clauses (dm::on, dm::shard_order,
// dm::chunks) turned into a placement_table at compile time, with one diagnostic per misuse
// (naming the dims): the same checks as a dynamic spec's (table.hpp), fired as static_asserts.
#pragma once
#include "../core/diagnostics.hpp"
#include "../core/names.hpp"
#include "diagnostics.hpp"
#include "placement.hpp"
#include "table.hpp"

namespace devmesh::detail {

template <class... L>
struct concat_names;
template <>
struct concat_names<> {
  using type = names<>;
};
template <class... A>
struct concat_names<names<A...>> {
  using type = names<A...>;
};
template <class... A, class... B, class... Rest>
struct concat_names<names<A...>, names<B...>, Rest...> {
  using type = typename concat_names<names<A..., B...>, Rest...>::type;
};

template <class List, template <class...> class To>
struct rename_list;
template <class... A, template <class...> class To>
struct rename_list<names<A...>, To> {
  using type = To<A...>;
};

/// The dim index of each name of an entry list in the mesh's names (-1 if unknown).
template <class Names, class... A>
constexpr auto entry_dims(names<A...>) {
  struct dims {
    int d[sizeof...(A) > 0 ? sizeof...(A) : 1];
  };
  return dims{{find_name<A>(Names{})...}};
}

/// A built table, or the first issue: which entry (over every clause's names, in order) and
/// which clause raised it.
template <int N>
struct built_table {
  placement_table<N> table{};
  table_issue issue{};
  int entry = -1;
  int clause = -1;
};

/// Adds clause C (number `clause`, its entries from `entry` on) to r, unless r has an issue.
template <class Names, auto L, class C, int N>
constexpr bool add_clause(built_table<N>& r, int& entry, int clause) {
  if (!r.issue.ok()) return false;
  if constexpr (requires { C::rule; }) r.table.rule = C::rule;
  constexpr auto dims = entry_dims<Names>(typename C::entry_names{});
  for (int i = 0; i < C::count; ++i)
    if (dims.d[i] < 0 && r.issue.ok()) r.issue = {table_issue_kind::unknown_dim, -1, -1, -1}, r.entry = entry + i;
  if (r.issue.ok() && C::ordered_tensor_dim >= 0)
    r.issue = begin_shard_order(r.table, C::ordered_tensor_dim, dims.d, C::count), r.entry = entry;
  for (int i = 0; i < C::count && r.issue.ok(); ++i) {
    r.issue = add_placement(r.table, L, dims.d[i], C::placements[i], C::ordered_tensor_dim >= 0 ? i : -1);
    r.entry = entry + i;
  }
  entry += C::count;
  r.clause = clause;
  return r.issue.ok();
}

template <class Names, auto L, class... C>
constexpr built_table<L.ndims> build_table() {
  built_table<L.ndims> r{};
  if constexpr (sizeof...(C) > 0) {  // no clause: every dim Replicate (no empty fold: g++ warns)
    int entry = 0, clause = 0;
    (void)(add_clause<Names, L, C>(r, entry, clause++) && ...);
  }
  if (r.issue.ok()) r.entry = r.clause = -1;
  return r;
}

template <int I, class... C>
using clause_at = name_at<I, C...>;

/// The table of clauses C... on a mesh with layout L and names Names; `ok` false after the
/// one diagnostic has fired.
template <class Names, auto L, class... C>
struct clause_table {
  static constexpr built_table<L.ndims> built = build_table<Names, L, C...>();
  using all_names = typename concat_names<typename C::entry_names...>::type;
  using existing = typename as_existing<Names>::type;

  static constexpr bool report() {
    constexpr table_issue i = built.issue;
    if constexpr (i.kind == table_issue_kind::unknown_dim) {
      require<false, error::placement_on_unknown_dim<name_of<all_names, built.entry>, existing>>();
    } else if constexpr (i.kind == table_issue_kind::placed_twice) {
      require<false, error::placed_twice<name_of<all_names, built.entry>, name_of<Names, i.other>,
                                         typename rename_list<all_names, placed>::type>>();
    } else if constexpr (i.kind == table_issue_kind::order_repeats) {
      using clause = clause_at<built.clause, C...>;
      using listed = typename rename_list<typename clause::entry_names, in_order>::type;
      require<false, error::shard_order_repeats_dim<name_of<Names, i.dim>, tensor_dim_of<i.tensor_dim>, listed>>();
    } else if constexpr (i.kind == table_issue_kind::order_not_exclusive) {
      require<false, error::shard_order_not_exclusive<name_of<Names, i.dim>, tensor_dim_of<i.tensor_dim>>>();
    } else if constexpr (i.kind == table_issue_kind::partials_differ) {
      require<false, error::partial_reductions_differ<name_of<Names, i.dim>, name_of<Names, i.other>>>();
    }
    return i.ok();
  }
  static constexpr bool ok = report();
  /// The table (every dim replicated after a diagnostic: no cascade).
  static constexpr placement_table<L.ndims> value = ok ? built.table : placement_table<L.ndims>{};
};

}  // namespace devmesh::detail
