// plan_fuzz — libFuzzer target over the plan loader and the whole compiler.
//
// Any input must come back as a plan error or a compiled program; a crash, a
// hang or a sanitizer report is a bug. The loader's fast parse (simdjson) and
// its reference parse (nlohmann) must agree on every input: the same plan, or
// the same error at the same pointer. A compiled program is also checked
// against the layout invariants of docs/design.md (exact cover, alignment, unique
// owners, a bind that accepts the pool's own backing slices), so the fuzzer hunts
// for wrong layouts, not only for crashes.
//
//   cmake --preset fuzz && cmake --build --preset fuzz
//   build/fuzz/tests/fuzz/ferrum_plan_fuzz -max_total_time=60 -dict=tests/fuzz/plan.dict corpus/
#include "ferrum/binding/compiled_program.hpp"
#include "ferrum/binding/execution_binding.hpp"
#include "ferrum/binding/plan_json.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <vector>

namespace {

[[noreturn]] void broken(const char* what) {
  std::fprintf(stderr, "layout invariant broken: %s\n", what);
  std::abort();
}

void check_layout(const ferrum::plan& p, const ferrum::compiled_program& program, const ferrum::compiled_bucket& bucket,
                  std::size_t binding_domain) {
  const ferrum::program_binding_layout& layout = *bucket.binding;
  std::vector<const ferrum::binding_slot*> by_offset;
  for (const ferrum::binding_slot& s : layout.slots()) by_offset.push_back(&s);
  std::sort(by_offset.begin(), by_offset.end(), [](auto* a, auto* b) { return a->offset < b->offset; });
  std::uint64_t end = 0;
  for (const ferrum::binding_slot* s : by_offset) {
    if (s->offset != end) broken("slots are not contiguous");
    if (s->capacity == 0 || s->offset % s->alignment != 0 || s->capacity % s->alignment != 0)
      broken("slot empty or misaligned");
    end += s->capacity;
  }
  if (end != layout.physical_size_bytes()) broken("slots do not cover the arena");
  for (std::size_t i = 1; i < layout.slots().size(); ++i)
    if (layout.slots()[i - 1].node_index >= layout.slots()[i].node_index) broken("owners not unique or unordered");

  // Binding against the pool's own backing slices must succeed and hand every node
  // exactly its slot.
  std::vector<std::byte> arena(static_cast<std::size_t>(layout.physical_size_bytes()));
  const ferrum::lane_binding_target lane{bucket.id, 0, ferrum::allocation_lifetime::invocation, arena};
  const auto slices = ferrum::record_backing_slices(p, bucket.id, program.wave_layouts[binding_domain].claim,
                                                    bucket.capacity_layouts[binding_domain]);
  if (!slices) broken("the plan's own backing slices name a resource it lacks");
  auto exec = ferrum::execution_binding::bind(program.hash, program.node_count, bucket.binding, lane, *slices);
  if (!exec) broken("bind rejected the pool's own backing slices");
  for (const ferrum::binding_slot& s : layout.slots()) {
    auto node = exec->node(s.node_index);
    if (!node || node->bytes().data() != arena.data() + s.offset || node->bytes().size() != s.capacity)
      broken("node handle does not reach exactly its slot");
  }
}

void check_parses_agree(const ferrum::result<ferrum::plan>& fast, const ferrum::result<ferrum::plan>& reference) {
  if (fast.has_value() != reference.has_value()) broken("one parse accepts what the other rejects");
  if (fast) {
    if (ferrum::hash_plan(*fast).value() != ferrum::hash_plan(*reference).value()) broken("the parses read two plans");
    return;
  }
  const ferrum::error& a = fast.error();
  const ferrum::error& b = reference.error();
  if (a.code != b.code || a.path != b.path || a.detail != b.detail) broken("the parses report different errors");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto p = ferrum::parse_plan(text);
  check_parses_agree(p, ferrum::detail::parse_plan_reference(text));
  if (!p) {
    if (p.error().what().empty()) broken("an error without a message");
    return 0;
  }
  auto program = ferrum::compile(*p);
  if (!program) return 0;
  if (program->admitted_bytes > program->budget_bytes) broken("admitted past the budget");
  for (const ferrum::compiled_bucket& bucket : program->buckets) {
    for (const ferrum::capacity_layout& d : bucket.capacity_layouts)
      if (d.physical_size_bytes > d.unaliased_size_bytes) broken("aliasing grew an arena");
    if (!bucket.binding) continue;
    // Arenas past 64 MiB are valid but too big to allocate per input.
    if (bucket.binding->physical_size_bytes() > (std::uint64_t{64} << 20)) continue;
    // The binding domain is the pool whose claim the layout covers.
    std::size_t binding_domain = 0;
    while (binding_domain < program->wave_layouts.size() &&
           program->wave_layouts[binding_domain].claim != bucket.binding->claim())
      ++binding_domain;
    if (binding_domain == program->wave_layouts.size()) broken("no pool holds the binding layout's claim");
    check_layout(*p, *program, bucket, binding_domain);
  }
  return 0;
}
