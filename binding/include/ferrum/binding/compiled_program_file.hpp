// ferrum/binding/compiled_program_file.hpp — a compiled program saved as
// bytes (format ferrum.program.v1, docs/interfaces.md) and loaded back.
//
// Loading checks everything that matters for safety instead of trusting the
// file: the file's SHA-256, its plan hash against the plan given, the plan's
// own rules, every capacity layout (demands, alignment, no two live resources
// sharing bytes, budgets), the lane placement, admission, the program binding
// layouts (the original module's checks, re-run) and their fingerprints. It
// costs a fraction of a compile: no id is hashed or sorted, the layouts are
// checked in one pass each.
//
//   auto bytes = ferrum::save_compiled_program(program, plan);
//   std::ofstream("plan.program", std::ios::binary).write(...);
//   auto loaded = ferrum::load_compiled_program(file_bytes, plan);  // == compile(plan)
#pragma once

#include "ferrum/binding/compiled_program.hpp"

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace ferrum {

// The format version save_compiled_program writes and the only one loaded.
inline constexpr std::uint32_t compiled_program_file_version = 1;

// Saves `program`, compiled from `p`, as a ferrum.program.v1 file. The plan
// provides what loading needs to skip the compile's id lookups (every id's
// place in id order, every node's resources resolved). Errors:
// program_plan_mismatch (p's hash is not the program's), size_overflow (more
// than 2^32 - 1 nodes, resources or resource uses), digest_failed.
[[nodiscard]] result<std::vector<std::byte>> save_compiled_program(const compiled_program& program, const plan& p);

// Loads a ferrum.program.v1 file for plan `p`; the program equals compile(p)
// when the file is what save_compiled_program wrote for p. Never trusts the
// file: any byte sequence gives a program that compile could have made, or an
// error. Errors: program_bad_magic, program_version_unsupported,
// program_truncated, program_checksum_mismatch, program_malformed (the byte
// offset in the detail), program_stale (p is not the plan the file was
// compiled from), program_inconsistent (the file disagrees with p or with
// itself), and the codes of compile's own checks where a file breaks one of
// them (non_contiguous_slots, workspace_budget_exceeded, ...). Thread-safe;
// uses a second thread for the plan hash.
[[nodiscard]] result<compiled_program> load_compiled_program(std::span<const std::byte> bytes, const plan& p);

}  // namespace ferrum
