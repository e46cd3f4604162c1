// plan_rejection — how the plan loader's passes report bad input.
//
// Each pass (the reference DOM builder, the fast DOM's structure check, the
// schema walk) throws a `rejection` at the first error it finds, so every check
// is one line; parse_plan catches it and returns its error. Nothing else in the
// loader throws on bad input.
#pragma once

#include "ferrum/error.hpp"

#include <string>
#include <utility>

namespace ferrum::detail {

struct rejection {
  ferrum::error error;
};

[[noreturn]] inline void reject(errc code, std::string detail, std::string path) {
  throw rejection{make_error(code, std::move(detail), std::move(path))};
}

}  // namespace ferrum::detail
