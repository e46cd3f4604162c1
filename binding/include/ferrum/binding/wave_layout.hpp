// ferrum/binding/wave_layout.hpp — per pool, what one submission wave claims.
//
// A pool's members share one physical claim per lane: the claim identity is
// the ordered list of their resource ids, with a digest so that comparing two
// identities (when a lane is bound) costs 32 bytes, not the whole list.
//
//   auto layout = ferrum::compile_wave_domain_layout(plan, domains[0]);
//   layout->claim.ids()        // the resources sharing the claim
//   layout->projection_count   // how many projections the arena holds
#pragma once

#include "ferrum/binding/pool_domain.hpp"

#include <memory>
#include <span>
#include <vector>

namespace ferrum {

// The ordered resource ids that share one physical claim, and their digest.
class claim_identity {
 public:
  // Digests `ids` (SHA-256 over the canonical encoding); errc::digest_failed
  // if OpenSSL fails.
  [[nodiscard]] static result<claim_identity> make(std::vector<resource_id> ids);

  claim_identity() = default;

  [[nodiscard]] const std::vector<resource_id>& ids() const noexcept;
  [[nodiscard]] const sha256_digest& digest() const noexcept { return digest_; }

  friend bool operator==(const claim_identity& a, const claim_identity& b) noexcept { return a.digest_ == b.digest_; }

 private:
  std::shared_ptr<const std::vector<resource_id>> ids_;
  sha256_digest digest_;
};

// The nodes during which a resource is live: from the first to the last node
// (plan indices, inclusive) that uses it. In a v2 plan whose nodes run on
// both queue kinds, where nodes of two kinds may run at once, the end is
// later where needed: the node before the first from which every node runs
// after all of the resource's users (a node of the same kind by plan order,
// one of the other kind along a path of `after`).
struct live_interval {
  std::size_t first = 0;
  std::size_t last = 0;
  [[nodiscard]] bool overlaps(const live_interval& o) const noexcept { return first <= o.last && o.first <= last; }
  friend bool operator==(const live_interval&, const live_interval&) = default;
};

// What one wave claims of a pool.
struct wave_domain_layout {
  std::size_t projection_count = 0;
  claim_identity claim;
  // Per member (the order of pool_domain::members): its live interval.
  std::vector<live_interval> intervals;
};

// The live interval of every resource of the plan (index = plan::resources
// index), its end extended for a v2 plan's dependencies; computed once for
// all pools. Expects a validated plan.
[[nodiscard]] std::vector<live_interval> live_intervals(const plan& p);

// Compiles the wave layout of one pool of a validated plan; `intervals` is
// live_intervals(p), used by interval pools.
[[nodiscard]] result<wave_domain_layout> compile_wave_domain_layout(const plan& p, const pool_domain& domain,
                                                                    std::span<const live_interval> intervals);

}  // namespace ferrum
