// tools/compiled_json.hpp — the `ferrum.compiled.v1` document of a compiled
// program (docs/interfaces.md, "ferrum.compiled.v1").
//
//   ferrum::tools::write_json(std::cout, ferrum::tools::compiled_json(*program));
//
// Keys are in a fixed order and arrays in the program's stable order (buckets
// by id, domains by pool id, projections by resource id, slots by node index),
// so the same plan always gives byte-identical output. Beyond the format's
// fields, each domain also carries its `liveness`.
#pragma once

#include "ferrum/binding/compiled_program.hpp"

#include <nlohmann/json.hpp>

namespace ferrum::tools {

// The name in the document's `format` field.
inline constexpr const char* compiled_format = "ferrum.compiled.v1";

// Builds the `ferrum.compiled.v1` document of `program`.
[[nodiscard]] nlohmann::ordered_json compiled_json(const compiled_program& program);

}  // namespace ferrum::tools
