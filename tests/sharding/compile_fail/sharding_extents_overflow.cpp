// Misuse: static extents whose product, the tensor's element count, does not fit in
// std::int64_t: (2^62 + 1) x 4 (the run-time counterpart, dynamic extents, throws mesh_error:
// tests/sharding/overflow.cpp)
// expect: devmesh: extents: the product of the static extents does not fit in std::int64_t
#include <devmesh/sharding.hpp>

namespace dm = devmesh;

dm::tensor_index misuse() {
  const dm::extents<(dm::tensor_index{1} << 62) + 1, 4> ext{};
  return ext.size();
}
