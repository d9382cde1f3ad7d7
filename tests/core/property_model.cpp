// tests/core/property_model.cpp: the model of property_model.hpp (see there why apart).
#include "property_model.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace property_model {

std::vector<int> tensor::strides() const {
  std::vector<int> s(shape.size(), 1);
  for (int i = static_cast<int>(shape.size()) - 2; i >= 0; --i) s[i] = s[i + 1] * shape[i + 1];
  return s;
}

std::vector<int> tensor::unravel(int flat) const {
  std::vector<int> idx(shape.size());
  for (int i = static_cast<int>(shape.size()) - 1; i >= 0; --i) {
    idx[i] = flat % shape[i];
    flat /= shape[i];
  }
  return idx;
}

int tensor::ravel(const std::vector<int>& idx) const {
  int flat = 0;
  for (std::size_t i = 0; i < shape.size(); ++i) flat = flat * shape[i] + idx[i];
  return flat;
}

tensor permute(const tensor& t, const std::vector<int>& perm) {
  tensor out;
  for (int p : perm) out.shape.push_back(t.shape[p]);
  out.data.resize(t.data.size());
  const auto st = t.strides();
  for (int flat = 0; flat < static_cast<int>(out.data.size()); ++flat) {
    const auto idx = out.unravel(flat);
    int src = 0;
    for (std::size_t i = 0; i < perm.size(); ++i) src += idx[i] * st[perm[i]];
    out.data[flat] = t.data[src];
  }
  return out;
}

model model::root(const std::vector<std::string>& names, const std::vector<int>& sizes) {
  model m;
  m.t.shape.push_back(1);
  m.world = 1;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    m.t.shape.push_back(sizes[i]);
    m.world *= sizes[i];
    m.dims.push_back({names[i], {static_cast<int>(i) + 1}});
  }
  m.t.data.resize(m.world);
  std::iota(m.t.data.begin(), m.t.data.end(), 0);
  m.nprimary = static_cast<int>(sizes.size());
  return m;
}

int model::find(const std::string& n) const {
  for (std::size_t i = 0; i < dims.size(); ++i)
    if (dims[i].name == n) return static_cast<int>(i);
  FAIL("model: no dim " << n);
  return -1;
}

int model::size_of(const std::vector<int>& axes) const {
  int n = 1;
  for (int a : axes) n *= t.shape[a];
  return n;
}

std::vector<int> model::primary_axes() const {
  std::vector<int> a;
  for (int d = 0; d < nprimary; ++d) a.insert(a.end(), dims[d].axes.begin(), dims[d].axes.end());
  return a;
}

std::vector<int> model::group_at(int flat, const std::vector<int>& axes) const {
  auto idx = t.unravel(flat);
  std::vector<int> out;
  const int n = size_of(axes);
  for (int k = 0; k < n; ++k) {
    int rest = k;
    for (int j = static_cast<int>(axes.size()) - 1; j >= 0; --j) {
      idx[axes[j]] = rest % t.shape[axes[j]];
      rest /= t.shape[axes[j]];
    }
    out.push_back(t.data[t.ravel(idx)]);
  }
  return out;
}

int model::coordinate_at(int flat, const std::vector<int>& axes) const {
  const auto idx = t.unravel(flat);
  int c = 0;
  for (int a : axes) c = c * t.shape[a] + idx[a];
  return c;
}

model model::slice(const std::vector<std::string>& names) const {
  std::vector<int> sel;
  std::vector<int> taken_axes;
  for (const auto& n : names) {
    sel.push_back(find(n));
    for (int a : dims[sel.back()].axes) taken_axes.push_back(a);
  }
  std::vector<int> perm{0};
  for (int a = 1; a < static_cast<int>(t.shape.size()); ++a)
    if (std::find(taken_axes.begin(), taken_axes.end(), a) == taken_axes.end()) perm.push_back(a);
  const int nrest = static_cast<int>(perm.size());
  perm.insert(perm.end(), taken_axes.begin(), taken_axes.end());
  model out;
  out.world = world;
  tensor p = permute(t, perm);
  out.t.data = p.data;
  int g = 1;
  for (int i = 0; i < nrest; ++i) g *= p.shape[i];
  out.t.shape.push_back(g);
  for (std::size_t i = nrest; i < p.shape.size(); ++i) out.t.shape.push_back(p.shape[i]);
  auto remap = [&](int a) {
    return static_cast<int>(std::find(taken_axes.begin(), taken_axes.end(), a) - taken_axes.begin()) + 1;
  };
  auto covered = [&](const model_dim& d) {
    return std::all_of(d.axes.begin(), d.axes.end(), [&](int a) {
      return std::find(taken_axes.begin(), taken_axes.end(), a) != taken_axes.end();
    });
  };
  for (int d : sel) {
    model_dim nd{dims[d].name, {}};
    for (int a : dims[d].axes) nd.axes.push_back(remap(a));
    out.dims.push_back(nd);
  }
  out.nprimary = static_cast<int>(sel.size());
  for (int d = 0; d < static_cast<int>(dims.size()); ++d) {
    if (std::find(sel.begin(), sel.end(), d) != sel.end() || !covered(dims[d])) continue;
    model_dim nd{dims[d].name, {}};
    for (int a : dims[d].axes) nd.axes.push_back(remap(a));
    out.dims.push_back(nd);
  }
  return out;
}

model model::flatten_alias(const std::string& alias, const std::vector<std::string>& names) const {
  model out = *this;
  model_dim nd{alias, {}};
  for (const auto& n : names)
    for (int a : dims[find(n)].axes) nd.axes.push_back(a);
  out.dims.push_back(nd);
  return out;
}

model model::flatten_all(const std::string& alias) const {
  model out = *this;
  out.dims.clear();
  out.dims.push_back({alias, primary_axes()});
  out.dims.insert(out.dims.end(), dims.begin(), dims.end());
  out.nprimary = 1;
  return out;
}

std::optional<model> model::unflatten(const std::string& name, std::vector<new_dim> news) const {
  const int d = find(name);
  const auto& axes = dims[d].axes;
  const long long whole = size_of(axes);
  long long known = 1;
  int unknown = -1;
  for (int j = 0; j < static_cast<int>(news.size()); ++j) {
    if (news[j].size < 0)
      unknown = j;
    else
      known *= news[j].size;
  }
  if (unknown >= 0) {
    if (whole % known != 0) return std::nullopt;
    news[unknown].size = static_cast<int>(whole / known);
  } else if (known != whole) {
    return std::nullopt;
  }
  const int k = static_cast<int>(news.size());
  // Digit weights inside the dim, least significant = 1: new dim j spans [lo_new[j], lo_new[j] * size).
  std::vector<long long> lo_new(k);
  for (long long w = 1, j = k - 1; j >= 0; --j) {
    lo_new[j] = w;
    w *= news[j].size;
  }
  // The pieces of each axis of the dim: (size, owning new dim), high first.
  std::map<int, std::vector<std::pair<int, int>>> pieces;
  long long w = 1;
  for (int i = static_cast<int>(axes.size()) - 1; i >= 0; --i) {
    const long long lo = w, hi = w * t.shape[axes[i]];
    w = hi;
    // Walk the new dims from the most significant: each takes the part of the axis in its range.
    std::vector<std::pair<int, int>> ps;
    for (int j = 0; j < k; ++j) {
      const long long a = std::max(lo, lo_new[j]), b = std::min(hi, lo_new[j] * news[j].size);
      if (b <= a) continue;  // no overlap (or an empty range)
      REQUIRE_MESSAGE((b % a == 0 && a % lo == 0), "model: unflatten of " << name << " cuts an axis unevenly");
      ps.push_back({static_cast<int>(b / a), j});
    }
    pieces[axes[i]] = ps;
  }
  // New axes: every old axis replaced by its pieces (in place), others kept.
  model out;
  out.world = world;
  out.t.data = t.data;
  out.t.shape.push_back(t.shape[0]);
  std::map<int, std::vector<int>> new_axes;  // old axis -> its new axes, high first
  for (int a = 1; a < static_cast<int>(t.shape.size()); ++a) {
    auto it = pieces.find(a);
    if (it == pieces.end() || it->second.empty()) {  // not in the dim, or of size 1
      new_axes[a].push_back(static_cast<int>(out.t.shape.size()));
      out.t.shape.push_back(t.shape[a]);
      continue;
    }
    for (auto piece : it->second) {
      new_axes[a].push_back(static_cast<int>(out.t.shape.size()));
      out.t.shape.push_back(piece.first);
    }
  }
  // Each new dim owns its pieces, in the order of the dim's axes (most significant first).
  std::vector<std::vector<int>> owned(k);
  for (int a : axes) {
    const auto& ps = pieces[a];
    for (std::size_t p = 0; p < ps.size(); ++p) owned[ps[p].second].push_back(new_axes[a][p]);
  }
  std::map<int, int> order_in_dim;  // new axis -> its position in the dim, high first
  for (int a : axes)
    for (int na : new_axes[a]) order_in_dim.emplace(na, static_cast<int>(order_in_dim.size()));
  auto rank_in_dim = [&](int x) { return order_in_dim[x]; };
  // Size-1 things own no digit, so where they go is a convention; devmesh's is:
  // splitting one axis gives a new dim of size 1 an axis of its own (as a reshape does);
  // splitting several gives it none, and a size-1 axis of the dim goes to the first new
  // dim whose digit range touches it.
  for (int j = 0; j < k; ++j)
    if (news[j].size == 1 && axes.size() == 1) {
      owned[j].push_back(static_cast<int>(out.t.shape.size()));
      out.t.shape.push_back(1);
    }
  if (axes.size() > 1) {
    long long lo = 1;
    for (int i = static_cast<int>(axes.size()) - 1; i >= 0; --i) {
      if (t.shape[axes[i]] == 1)
        for (int j = 0; j < k; ++j)
          if (lo >= lo_new[j] && lo <= lo_new[j] * news[j].size) {
            owned[j].push_back(new_axes[axes[i]][0]);
            break;
          }
      lo *= t.shape[axes[i]];
    }
    // Keep each new dim's axes in the dim's order (most significant first).
    for (auto& o : owned) std::sort(o.begin(), o.end(), [&](int x, int y) { return rank_in_dim(x) < rank_in_dim(y); });
  }
  for (int e = 0; e < static_cast<int>(dims.size()); ++e) {
    if (e == d) {
      for (int j = 0; j < k; ++j) out.dims.push_back({news[j].name, owned[j]});
      continue;
    }
    model_dim nd{dims[e].name, {}};
    for (int a : dims[e].axes)
      for (int na : new_axes[a]) nd.axes.push_back(na);
    out.dims.push_back(nd);
  }
  out.nprimary = d < nprimary ? nprimary + k - 1 : nprimary;
  return out;
}

}  // namespace property_model
