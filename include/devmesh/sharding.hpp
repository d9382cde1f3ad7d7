// devmesh/sharding.hpp: the sharding spec layer (what each rank holds of a tensor), above the
// core: placements by mesh dim, tensor extents, static and dynamic specs and their queries.
// See docs/sharding.md.
#pragma once
#include "core/basic_mesh.hpp"
#include "core/mesh.hpp"
#include "sharding/placement.hpp"
#include "sharding/extents.hpp"
#include "sharding/diagnostics.hpp"
#include "sharding/chunk.hpp"
#include "sharding/table.hpp"
#include "sharding/clauses.hpp"
#include "sharding/index_map.hpp"
#include "sharding/spec_checks.hpp"
#include "sharding/spec.hpp"
#include "sharding/local_sizes.hpp"
#include "sharding/dynamic_spec.hpp"
#include "sharding/plan.hpp"
#include "sharding/plan_cost.hpp"
#include "sharding/plan_text.hpp"
#include "sharding/block_overlap.hpp"
#include "sharding/text.hpp"
