// ferrum/scheduler/buffer_usage.hpp — the usage a buffer needs for the
// accesses a plan makes of it (docs/embedding.md, "Imported buffers"): what
// a wave checks an engine's buffer against (gpu::arena::usage).
//
//   std::uint32_t needed = ferrum::buffer_usage_of(recipe.imports[k]);
//   bool fits = (arena.usage() & needed) == needed;
#pragma once

#include "ferrum/binding/lane_recipe.hpp"
#include "ferrum/gpu/arena.hpp"
#include "ferrum/queue_kind.hpp"

#include <cstdint>

namespace ferrum {

// The usage (gpu::buffer_usage bits) access `a` of a node on queue `q`
// needs: on the compute queue `read`, `write` and `read-write` bind it as a
// storage buffer (a kernel's, an engine's shader's); on the transfer queue
// they copy from it (transfer-src) or into it (transfer-dst); `vertex`,
// `index`, `indirect` and `uniform` need the usage of their name. 0 for an
// image's access. What ferrum's own commands need besides (a fill's
// transfer-dst, a copy's transfer-src) the command checks when it is
// recorded (buffer_usage_missing).
[[nodiscard]] constexpr std::uint32_t buffer_usage_of(resource_access a, queue_kind q) noexcept {
  namespace usage = gpu::buffer_usage;
  const bool transfer = q == queue_kind::transfer;
  switch (a) {
    case resource_access::read:
      return transfer ? usage::transfer_src : usage::storage;
    case resource_access::write:
      return transfer ? usage::transfer_dst : usage::storage;
    case resource_access::read_write:
      return transfer ? usage::transfer_src | usage::transfer_dst : usage::storage;
    case resource_access::vertex:
      return usage::vertex;
    case resource_access::index:
      return usage::index;
    case resource_access::indirect:
      return usage::indirect;
    case resource_access::uniform:
      return usage::uniform;
    default:
      return 0;
  }
}

// What every access of `accesses` (a bit per resource_access) on queue `q`
// needs together.
[[nodiscard]] constexpr std::uint32_t buffer_usage_of(std::uint32_t accesses, queue_kind q) noexcept {
  std::uint32_t needed = 0;
  for (unsigned a = 0; a <= static_cast<unsigned>(last_resource_access); ++a)
    if ((accesses & (1u << a)) != 0) needed |= buffer_usage_of(static_cast<resource_access>(a), q);
  return needed;
}

// The usage an imported buffer needs for every access its plan makes of it.
[[nodiscard]] constexpr std::uint32_t buffer_usage_of(const lane_import& i) noexcept {
  return buffer_usage_of(i.accesses, queue_kind::compute) | buffer_usage_of(i.transfer_accesses, queue_kind::transfer);
}

}  // namespace ferrum
