// tests/sharding: real PyTorch 2.15 answers (scripts/pytorch-reference) as test input: a small
// JSON reader for the committed files, PyTorch's placement spelling, and a dynamic spec built
// from PyTorch's placements as a parser would (_StridedShard decoded into a shard order).
#pragma once
#include <doctest/doctest.h>

#include <devmesh/sharding.hpp>

#include <array>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace devmesh_test {
namespace dm = devmesh;

// ---- a small JSON reader (objects, arrays, strings without escapes beyond \", numbers, booleans as 0/1)
struct json {
  enum kind_t { null, number, string, array, object } kind = null;
  double num = 0;
  std::string str;
  std::vector<json> items;      // an array's items, or an object's values
  std::vector<std::string> keys;  // an object's keys (std::vector<json> allows an incomplete json)
  const json& operator[](std::string_view key) const {
    for (std::size_t i = 0; i < keys.size(); ++i)
      if (keys[i] == key) return items[i];
    static const json none;
    return none;
  }
  bool has(std::string_view key) const { return (*this)[key].kind != null; }
};

struct reader {
  std::string_view s;
  std::size_t at = 0;
  void skip() {
    while (at < s.size() && (s[at] == ' ' || s[at] == '\n' || s[at] == '\r' || s[at] == '\t')) ++at;
  }
  std::string text() {
    std::string out;
    for (++at; s[at] != '"'; ++at) out += s[at] == '\\' ? s[++at] : s[at];
    ++at;
    return out;
  }
  json value() {
    skip();
    json v;
    if (s[at] == '{' || s[at] == '[') {
      const bool obj = s[at++] == '{';
      v.kind = obj ? json::object : json::array;
      for (skip(); s[at] != (obj ? '}' : ']'); skip()) {
        if (s[at] == ',') ++at, skip();
        if (obj) {
          std::string key = text();
          skip();
          ++at;  // ':'
          v.keys.push_back(std::move(key));
          v.items.push_back(value());
        } else {
          v.items.push_back(value());
        }
      }
      ++at;
    } else if (s[at] == '"') {
      v.kind = json::string, v.str = text();
    } else if (s.substr(at, 4) == "null") {
      at += 4;
    } else if (s.substr(at, 4) == "true" || s.substr(at, 5) == "false") {
      v.kind = json::number, v.num = s[at] == 't';
      at += s[at] == 't' ? 4 : 5;
    } else {
      std::size_t used = 0;
      v.kind = json::number, v.num = std::stod(std::string(s.substr(at, 32)), &used);
      at += used;
    }
    return v;
  }
};

inline json load(const char* path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  const std::string s = text.str();
  REQUIRE_MESSAGE(!s.empty(), "cannot read " << path);
  return reader{s}.value();
}

// ---- PyTorch's placements as a dynamic spec -----------------------------------------------
struct parsed {
  char kind = 'R';  // R, S, P, _ (_StridedShard)
  int dim = -1;
  long long split_factor = 1;
  dm::reduction op = dm::reduction::sum;
};
inline parsed parse_placement(const std::string& p) {
  parsed out;
  if (p == "R") return out;
  if (p[0] == 'P') {
    const std::string op = p.substr(2, p.size() - 3);
    out.kind = 'P';
    out.op = op == "avg" ? dm::reduction::avg : op == "min" ? dm::reduction::min : op == "max" ? dm::reduction::max
                                                                                                : dm::reduction::sum;
    return out;
  }
  out.kind = p[0] == '_' ? '_' : 'S';
  std::sscanf(p.c_str() + (p[0] == '_' ? 3 : 2), "%d,%lld", &out.dim, &out.split_factor);
  return out;
}

// DTensorSpec._maybe_convert_StridedShard_to_shard_order for tensor dim t: right to left, each
// shard-like placement goes where the product of the sizes before it equals its split factor.
// Empty if no shard order gives those split factors (a view op's _StridedShard).
inline std::vector<int> shard_order_of(const std::vector<parsed>& ps, const std::vector<int>& sizes, int t) {
  std::vector<int> order;
  for (int d = static_cast<int>(ps.size()) - 1; d >= 0; --d) {
    if ((ps[d].kind != 'S' && ps[d].kind != '_') || ps[d].dim != t) continue;
    long long acc = 1;
    std::size_t at = 0;
    while (acc != ps[d].split_factor && at < order.size()) acc *= sizes[order[at++]];
    if (acc != ps[d].split_factor) return {};
    order.insert(order.begin() + static_cast<std::ptrdiff_t>(at), d);
  }
  return order;
}

// As a parser would: the tensor dims whose _StridedShards decode into a shard order get it
// (dynamic_sharding::order); the others keep PyTorch's split factors (placement::strided).
struct decoding_counts {
  int decoded_orders = 0, kept_split_factors = 0;
};
template <class Mesh>
dm::dynamic_sharding<Mesh> spec_of(const Mesh& mesh, const std::vector<parsed>& ps, const std::vector<int>& sizes,
                                   decoding_counts* counts = nullptr) {
  dm::dynamic_sharding<Mesh> spec(mesh);
  std::array<bool, 4> ordered{};
  for (int t = 0; t < 4; ++t) {
    bool strided = false;
    for (const auto& p : ps) strided = strided || (p.kind == '_' && p.dim == t);
    const std::vector<int> order = strided ? shard_order_of(ps, sizes, t) : std::vector<int>{};
    if (order.empty()) {
      if (counts) counts->kept_split_factors += strided;
      continue;
    }
    std::vector<std::string_view> names;
    for (int d : order) names.push_back(Mesh::names_type::views[d]);
    spec.order(t, names);
    ordered[t] = true;
    if (counts) ++counts->decoded_orders;
  }
  for (int d = 0; d < static_cast<int>(ps.size()); ++d) {
    const parsed& p = ps[d];
    if (p.kind != 'R' && p.kind != 'P' && p.dim >= 0 && p.dim < 4 && ordered[p.dim]) continue;
    spec.place(d, p.kind == 'R'   ? dm::placement::replicated()
                  : p.kind == 'P' ? dm::placement::partial_of(p.op)
                  : p.kind == '_' ? dm::placement::strided(p.dim, p.split_factor)
                                  : dm::placement::sharded(p.dim));
  }
  return spec;
}

/// A dynamic mesh of type Mesh with the recorded case's sizes (its names checked).
template <class Mesh>
Mesh mesh_of(const json& c, std::vector<int>& sizes) {
  std::array<int, Mesh::ndim> s{};
  for (int d = 0; d < Mesh::ndim; ++d) {
    s[d] = static_cast<int>(c["mesh"]["shape"].items[d].num), sizes.push_back(s[d]);
    REQUIRE(c["mesh"]["names"].items[d].str == Mesh::names_type::views[d]);
  }
  return [&]<std::size_t... I>(std::index_sequence<I...>) { return Mesh(s[I]...); }(std::make_index_sequence<Mesh::ndim>{});
}

using mesh1 = dm::mesh<dm::dim<"dp">>;
using mesh2 = dm::mesh<dm::dim<"dp">, dm::dim<"tp">>;
using mesh3 = dm::mesh<dm::dim<"dp">, dm::dim<"cp">, dm::dim<"tp">>;

}  // namespace devmesh_test
