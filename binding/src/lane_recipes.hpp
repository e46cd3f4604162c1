// lane_recipes.hpp (private) — every bucket's lane recipe, made from the
// plan at the end of compile and of load_compiled_program.
#pragma once

#include "ferrum/binding/compiled_program.hpp"

namespace ferrum::detail {

// Fills compiled_bucket::lane for every bucket of `program`, compiled from
// `p` (its domains and capacity layouts made). Errors: dangling_reference
// (a node lists, or a layout places, a resource `p` lacks: not its plan).
[[nodiscard]] result<void> make_lane_recipes(compiled_program& program, const plan& p);

}  // namespace ferrum::detail
