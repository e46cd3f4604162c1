// lane_recipes.hpp (private) — every bucket's lane recipe, made from the
// plan at the end of compile and of load_compiled_program.
#pragma once

#include "ferrum/binding/compiled_program.hpp"
#include "plan_index.hpp"

namespace ferrum::detail {

// Fills compiled_bucket::lane for every bucket of `program`, compiled from
// `p`, a checked plan (its domains and capacity layouts made; `index` is
// p's; `program.culling` derived here unless compile derived it already).
// Errors: those of record_backing_slices.
[[nodiscard]] result<void> make_lane_recipes(compiled_program& program, const plan& p, const plan_index& index);

}  // namespace ferrum::detail
