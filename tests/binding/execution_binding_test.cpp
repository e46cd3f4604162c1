// The original module's bind: a layout bound to a lane binding target only when plan, layout, lane
// and every backing slice agree; node handles that reach exactly their slot.
#include "ferrum/binding/execution_binding.hpp"

#include "plan_builder.hpp"

#include <algorithm>
#include <functional>
#include <type_traits>

using namespace ferrum;
using test::code_of;

namespace {

// A lane of the two-node program's bucket, with its arena and backing slices.
struct lane_fixture {
  compiled_program program = test::compile_ok(test::two_node_plan());
  const compiled_bucket& bucket = program.buckets[0];
  std::vector<std::byte> arena = std::vector<std::byte>(192, std::byte{0x5a});
  lane_binding_target lane{bucket.id, 2, allocation_lifetime::invocation, arena};
  std::vector<backing_slice> slices =
      record_backing_slices(test::two_node_plan(), bucket.id, program.wave_layouts[0].claim, bucket.capacity_layouts[0])
          .value();

  [[nodiscard]] result<execution_binding> bind() const {
    return execution_binding::bind(program.hash, program.node_count, bucket.binding, lane, slices);
  }
};

}  // namespace

static_assert(std::is_trivially_copyable_v<node_binding>, "copying a node handle must never allocate");
static_assert(!std::is_default_constructible_v<node_binding>, "a node handle only comes from a bound execution");

TEST_CASE("execution_binding: a lane whose backing slices agree binds, and node handles see exactly their slot",
          "[binding][execution]") {
  const lane_fixture f;
  const auto exec = f.bind();
  REQUIRE(exec.has_value());
  CHECK(exec->plan() == f.program.hash);
  CHECK(exec->lane().lane == 2);

  const node_binding first = *exec->node(0);
  const node_binding second = *exec->node(1);
  CHECK(first.node_index() == 0);
  CHECK(first.bytes().data() == f.arena.data());
  CHECK(first.bytes().size() == 64);
  CHECK(second.bytes().data() == f.arena.data() + 64);
  CHECK(second.bytes().size() == 128);
  CHECK(second.slot().resource.str() == "resource/program-binding-second");
  CHECK(second.layout().fingerprint() == f.bucket.binding->fingerprint());
  CHECK(second.lane() == 2);
  CHECK_FALSE(exec->node(2).has_value());

  const node_binding copy = second;
  CHECK(copy.bytes().data() == second.bytes().data());
  CHECK(copy.plan() == f.program.hash);
}

TEST_CASE("execution_binding: a layout that differs from its plan is binding_plan_mismatch", "[binding][execution]") {
  const lane_fixture f;
  auto bind = [&](const plan_hash& hash, std::size_t nodes, std::shared_ptr<const program_binding_layout> layout) {
    return execution_binding::bind(hash, nodes, std::move(layout), f.lane, f.slices);
  };
  CHECK(code_of(bind(f.program.hash, 0, f.bucket.binding)) == errc::binding_plan_mismatch);
  CHECK(code_of(bind(f.program.hash, 1, f.bucket.binding)) == errc::binding_plan_mismatch);
  CHECK(code_of(bind(f.program.hash, 2, nullptr)) == errc::binding_plan_mismatch);
  plan_hash other = f.program.hash;
  other.bytes[0] ^= 1;
  CHECK(code_of(bind(other, 2, f.bucket.binding)) == errc::binding_plan_mismatch);
  const auto& l = *f.bucket.binding;
  auto empty = std::make_shared<const program_binding_layout>(l.bucket(), l.claim(), l.physical_size_bytes(),
                                                              std::vector<binding_slot>{}, l.fingerprint(), l.plan());
  CHECK(code_of(bind(f.program.hash, 2, empty)) == errc::binding_plan_mismatch);
}

TEST_CASE("execution_binding: a lane of another bucket or lifetime, or too small, is binding_lane_mismatch",
          "[binding][execution]") {
  lane_fixture f;
  f.lane.lifetime = allocation_lifetime::persistent;
  CHECK(code_of(f.bind()) == errc::binding_lane_mismatch);

  f.lane.lifetime = allocation_lifetime::invocation;
  f.lane.bucket = bucket_id::make(test::id<bucket_class>("other"), {1, 1, 1}).value();
  CHECK(code_of(f.bind()) == errc::binding_lane_mismatch);

  f.lane.bucket = f.bucket.id;
  f.lane.arena = std::span<std::byte>(f.arena).first(191);
  CHECK(code_of(f.bind()) == errc::binding_lane_mismatch);
}

TEST_CASE("execution_binding: a slot without a backing slice is missing_backing_slice", "[binding][execution]") {
  lane_fixture f;
  f.slices.pop_back();
  CHECK(code_of(f.bind()) == errc::missing_backing_slice);
  f.slices.clear();
  CHECK(code_of(f.bind()) == errc::missing_backing_slice);
}

TEST_CASE("execution_binding: a backing slice that differs in any field is backing_slice_mismatch",
          "[binding][execution]") {
  const std::vector<std::function<void(backing_slice&)>> edits = {
      [](backing_slice& s) { s.claim.bytes[31] ^= 1; },
      [](backing_slice& s) { s.bucket.reset(); },
      [](backing_slice& s) {
        s.bucket = bucket_id::make(test::id<bucket_class>("other"), {1, 1, 1}).value();
      },
      [](backing_slice& s) { s.offset += 16; },
      [](backing_slice& s) { s.capacity += 16; },
      [](backing_slice& s) { s.physical_size_bytes += 16; },
      [](backing_slice& s) { s.alignment = 32; },
      [](backing_slice& s) { s.usage = buffer_usage::storage; },
      [](backing_slice& s) { s.element = element_type::f32; },
  };
  for (std::size_t i = 0; i < edits.size(); ++i) {
    lane_fixture f;
    edits[i](f.slices[1]);
    INFO("edit " << i);
    CHECK(code_of(f.bind()) == errc::backing_slice_mismatch);
    // A rejected bind touches nothing.
    CHECK(std::all_of(f.arena.begin(), f.arena.end(), [](std::byte b) { return b == std::byte{0x5a}; }));
  }
}

TEST_CASE("execution_binding: backing slices are recorded in resource id order from the pool's capacity layout",
          "[binding][execution]") {
  const lane_fixture f;
  REQUIRE(f.slices.size() == 2);
  CHECK(f.slices[0].resource.str() == "resource/program-binding-first");
  CHECK(f.slices[1].offset == 64);
  CHECK(f.slices[1].physical_size_bytes == 192);
  CHECK(f.slices[1].bucket == f.bucket.id);
  CHECK(f.slices[1].claim == f.program.wave_layouts[0].claim.digest());
}

namespace {

// The fixture's layout with its slots edited by `edit`: a layout built by
// hand, as the public constructor allows.
template <class Edit>
std::shared_ptr<const program_binding_layout> hand_built(const lane_fixture& f, Edit edit) {
  const program_binding_layout& l = *f.bucket.binding;
  std::vector<binding_slot> slots = l.slots();
  edit(slots);
  return std::make_shared<const program_binding_layout>(l.bucket(), l.claim(), l.physical_size_bytes(),
                                                        std::move(slots), l.fingerprint(), l.plan());
}

}  // namespace

TEST_CASE("execution_binding: a hand-built layout whose slot runs past the arena is refused", "[binding][execution]") {
  lane_fixture f;
  // Evidence that agrees with the slot, so that only the bounds can refuse it.
  f.slices[1].capacity = 1000;
  auto huge = hand_built(f, [](std::vector<binding_slot>& s) { s[1].capacity = 1000; });
  auto r = execution_binding::bind(f.program.hash, f.program.node_count, huge, f.lane, f.slices);
  CHECK(code_of(r) == errc::slot_outside_arena);
  CHECK(r.error().detail.find("slot 1 (node 1, resource 'resource/program-binding-second')") != std::string::npos);
  CHECK(r.error().detail.find("arena of 192 bytes") != std::string::npos);

  // An offset near 2^64 whose end would wrap round to inside the arena.
  lane_fixture g;
  g.slices[1].offset = ~std::uint64_t{0} - 15;
  g.slices[1].capacity = 32;
  auto wrapping = hand_built(g, [](std::vector<binding_slot>& s) {
    s[1].offset = ~std::uint64_t{0} - 15;
    s[1].capacity = 32;
  });
  CHECK(code_of(execution_binding::bind(g.program.hash, g.program.node_count, wrapping, g.lane, g.slices)) ==
        errc::slot_outside_arena);
}

TEST_CASE(
    "execution_binding: a hand-built layout with a slot for a node outside the plan is refused wherever the slot "
    "lies",
    "[binding][execution]") {
  const lane_fixture f;
  // Unsorted, so the last slot's node is in range and only the first is not.
  auto stray = hand_built(f, [](std::vector<binding_slot>& s) { s[0].node_index = 7; });
  auto r = execution_binding::bind(f.program.hash, f.program.node_count, stray, f.lane, f.slices);
  CHECK(code_of(r) == errc::binding_plan_mismatch);
  CHECK(r.error().detail.find("slot 0 (node 7, resource 'resource/program-binding-first') in a plan of 2 nodes") !=
        std::string::npos);
}

TEST_CASE("execution_binding: a hand-built layout whose slots are not in strictly ascending node order is refused",
          "[binding][execution]") {
  const lane_fixture f;
  auto swapped = hand_built(f, [](std::vector<binding_slot>& s) { std::swap(s[0], s[1]); });
  auto r = execution_binding::bind(f.program.hash, f.program.node_count, swapped, f.lane, f.slices);
  CHECK(code_of(r) == errc::unordered_binding_slots);
  CHECK(r.error().detail.find("slot 1 (node 0, resource 'resource/program-binding-first') follows a slot of node 1") !=
        std::string::npos);

  auto repeated = hand_built(f, [](std::vector<binding_slot>& s) { s[1].node_index = 0; });
  CHECK(code_of(execution_binding::bind(f.program.hash, f.program.node_count, repeated, f.lane, f.slices)) ==
        errc::unordered_binding_slots);
  // A rejected bind touches nothing.
  CHECK(std::all_of(f.arena.begin(), f.arena.end(), [](std::byte b) { return b == std::byte{0x5a}; }));
}

TEST_CASE("execution_binding: recording backing slices refuses a resource the plan lacks instead of inventing it",
          "[binding][execution]") {
  const lane_fixture f;
  // The same capacity layout recorded against a plan without the second node.
  plan smaller = test::two_node_plan();
  smaller.nodes.pop_back();
  smaller.resources.pop_back();
  const auto slices =
      record_backing_slices(smaller, f.bucket.id, f.program.wave_layouts[0].claim, f.bucket.capacity_layouts[0]);
  REQUIRE_FALSE(slices.has_value());
  CHECK(slices.error() == errc::dangling_reference);
  CHECK(slices.error().detail.find("'resource/program-binding-second'") != std::string::npos);
}
