// ferrum/binding/admission.hpp — does the plan fit its memory budget?
//
// Every bucket gets `lanes` lanes, each one buffer holding all of the
// bucket's pool arenas (compiled_bucket::lane_bytes) and its images (their
// texels: compiled_bucket::admitted_lane_bytes), so the plan needs
// lanes * (sum over buckets of those) bytes.
//
//   auto ok = ferrum::check_admission(plan.lanes, plan.budget_bytes, per_bucket_lane_bytes);
#pragma once

#include "ferrum/error.hpp"

#include <cstdint>
#include <span>

namespace ferrum {

// The bytes the plan's lanes take: lanes * sum(bucket_bytes). Errors:
// size_overflow, admission_exceeded (path /budget_bytes).
[[nodiscard]] result<std::uint64_t> check_admission(std::uint32_t lanes, std::uint64_t budget_bytes,
                                                    std::span<const std::uint64_t> bucket_bytes);

}  // namespace ferrum
