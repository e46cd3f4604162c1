// ferrum/binding/pool_domain.hpp — resources grouped into pools.
//
// Every resource names its pool. The members of a pool must be compatible —
// the same usage, element type, storage profile (allocator and view) and
// contract digest — because they share one physical arena per bucket and lane.
//
//   ferrum::result<std::vector<ferrum::pool_domain>> domains = ferrum::derive_pool_domains(plan);
#pragma once

#include "ferrum/binding/plan.hpp"

#include <cstddef>
#include <vector>

namespace ferrum {

// One pool and its members.
struct pool_domain {
  pool_id pool;
  liveness_mode liveness = liveness_mode::conservative;
  // Where its memory lives: declared in the plan's pool options, else
  // derived (upload for the binding pool, device for the others).
  memory_class memory = memory_class::device;
  // Whether its members are images (a pool holds images or buffers, not
  // both): a lane places them in image memory of its own (docs/design.md,
  // "Images"), and its arena's bytes only stand for their texels.
  bool images = false;
  // Indices into plan::resources, in resource id order.
  std::vector<std::size_t> members;
  // Whether its members are history resources (a pool holds them or none):
  // the scheduler keeps two copies of each pair per bucket, outside the
  // lanes, so the pool is placed as an imported one (`memory` imported: no
  // lane bytes, no images a lane makes, nothing admission counts).
  bool history = false;
};

// Groups the plan's resources by pool, pools in id order. Errors:
// incompatible_pool_member (naming both resources), invalid_liveness (an
// interval pool holding a persistent or history resource, or an imported
// pool declared interval), invalid_memory_class
// (pool_option::memory that does not fit the pool). Expects a validated plan.
[[nodiscard]] result<std::vector<pool_domain>> derive_pool_domains(const plan& p);

}  // namespace ferrum
