// tests/core/property_model.hpp: the property test's brute-force model of PyTorch's
// DeviceMesh (property.cpp): the rank array as a tensor, and slices, flattens and unflattens
// as permutes and reshapes of it. Defined in property_model.cpp, which is compiled with
// optimizations even in Debug builds: the model answers every query of every case by walking
// the tensor, and at -O0 that walk was most of the test's run time.
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace property_model {

struct tensor {
  std::vector<int> shape;  // shape[0]: number of submeshes
  std::vector<int> data;   // row-major

  std::vector<int> strides() const;
  std::vector<int> unravel(int flat) const;
  int ravel(const std::vector<int>& idx) const;
};

/// torch.permute followed by .contiguous().
tensor permute(const tensor& t, const std::vector<int>& perm);

struct model_dim {
  std::string name;
  std::vector<int> axes;  // fine axes (indices into the tensor's shape, >= 1), high first
};

struct new_dim {
  std::string name;
  int size;  // -1: inferred
};

struct model {
  tensor t;
  std::vector<model_dim> dims;  // primary dims first, then aliases
  int nprimary = 0;
  int world = 0;

  static model root(const std::vector<std::string>& names, const std::vector<int>& sizes);

  int find(const std::string& n) const;
  int size_of(const std::vector<int>& axes) const;
  std::vector<int> primary_axes() const;
  /// The entries that agree with `flat` on every index but `axes`, row-major over `axes`.
  std::vector<int> group_at(int flat, const std::vector<int>& axes) const;
  int coordinate_at(int flat, const std::vector<int>& axes) const;

  /// PyTorch's create_sub_mesh: permute(remaining..., sliced...).reshape(-1, sliced sizes),
  /// with the sliced dims in the order given; dims whose axes all survive stay as aliases.
  model slice(const std::vector<std::string>& names) const;

  /// flatten<alias, names...>: one more name for the concatenated axes.
  model flatten_alias(const std::string& alias, const std::vector<std::string>& names) const;

  /// PyTorch _flatten: the whole (sub)mesh as one dim; the old dims stay as aliases.
  model flatten_all(const std::string& alias) const;

  /// PyTorch _unflatten: dim `name` becomes the new dims (row-major digits of its
  /// coordinate). Each fine axis of the dim is cut where a new dim's digits start; that is
  /// a reshape of the tensor. nullopt when the sizes do not multiply to the dim's size.
  std::optional<model> unflatten(const std::string& name, std::vector<new_dim> news) const;
};

}  // namespace property_model
