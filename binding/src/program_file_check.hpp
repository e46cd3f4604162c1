// program_file_check — the stages of rebuild_program (program_file_format.hpp),
// which checks a decoded ferrum.program.v1 file against its plan and rebuilds
// the compiled program. They mirror compile's stages (docs/design.md, "Cold
// path: compile") and check the same rules (plan_rules.hpp), in linear time:
// the file says where things are (ids in order, every use resolved, every
// projection's offset) and the checks confirm it by comparing ids and
// numbers, instead of hashing and sorting ids as a compile does.
//
// The plan's stages are in program_file_check.cpp, the buckets' layouts in
// program_file_layouts.cpp. Each stage adds what it checked to a
// `file_plan`, which the later stages read.
#pragma once

#include "program_file_format.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ferrum::detail {

// No node, resource or domain: an index left unset.
inline constexpr std::size_t no_index = static_cast<std::size_t>(-1);

// A domain's members' starts and ends by node, for the sweep over an
// interval pool.
struct interval_events {
  std::vector<std::size_t> start_begin, starts, end_begin, ends;
};

// What the stages have checked of the file's plan, so far.
struct file_plan {
  file_plan(const program_tables& tables, const plan& plan) : t(tables), p(plan) {}

  const program_tables& t;
  const plan& p;
  // Resource indices in id order (check_resource_order).
  std::vector<std::size_t> resources_by_id;
  // Each resource's live interval; each node's binding resource and each
  // binding resource's node, or no_index (check_uses).
  std::vector<live_interval> intervals;
  std::vector<std::size_t> bound_of;
  std::vector<std::size_t> owner;
  // Each resource's alignment class (check_resources).
  std::vector<std::uint8_t> alignment_classes;
  // The pool domains, each resource's place among its domain's members
  // (check_domains), and the binding domain or no_index
  // (check_binding_domains).
  std::vector<pool_domain> domains;
  std::vector<std::size_t> member_at;
  std::size_t binding_domain = no_index;
  // The dependency graph, its effect on the intervals applied, and the wave
  // domain layouts (check_dependencies, compile_wave_layouts).
  dependency_graph dependencies;
  std::vector<std::optional<wave_domain_layout>> wave_layouts;
  // Per domain: the events of an interval domain, the conservative packing
  // order; the order pools are placed in a lane (prepare_layout_checks).
  std::vector<interval_events> events;
  std::vector<std::vector<std::size_t>> packing;
  std::vector<std::size_t> placement;
  // Per resource: whether it takes no bytes, only culled nodes using it
  // (unused_resources; empty: none).
  std::vector<bool> unused;
};

// A program_inconsistent error: the file contradicts its plan.
[[nodiscard]] error inconsistent(std::string detail, std::string path = {});

// program_file_layouts.cpp: the buckets.

// The interval events, packing orders and placement order of `f`'s domains,
// and the resources that take no bytes.
void prepare_layout_checks(file_plan& f);

// Bucket entry i of the file: its plan bucket, capacity layouts and
// placement, checked; `previous` the entry before it, if any.
[[nodiscard]] result<compiled_bucket> check_bucket(const file_plan& f, std::size_t i, std::vector<bool>& bucket_seen,
                                                   const compiled_bucket* previous);

// The program binding layouts of the binding domain, if any, into
// `program`'s buckets.
[[nodiscard]] result<void> check_binding_layouts(const file_plan& f, const plan_hash& hash, compiled_program& program);

}  // namespace ferrum::detail
