// The seed's bind: a layout bound to a lane slot only when plan, layout, lane
// and every backing slice agree; node handles that reach exactly their slot.
#include "ferrum/binding/execution_binding.hpp"

#include "plan_builder.hpp"

#include <functional>
#include <type_traits>

using namespace ferrum;
using test::code_of;

namespace {

// A lane of the two-node program's bucket, with its arena and evidence.
struct lane_fixture {
  compiled_program program = test::compile_ok(test::two_node_plan());
  const compiled_bucket& bucket = program.buckets[0];
  std::vector<std::byte> arena = std::vector<std::byte>(192, std::byte{0x5a});
  lane_slot lane{bucket.id, 2, allocation_lifetime::invocation, arena};
  std::vector<backing_slice> slices = record_backing_slices(test::two_node_plan(), bucket.id,
                                                            program.wave_layouts[0].claim, bucket.domains[0]);

  [[nodiscard]] result<execution_binding> bind() const {
    return execution_binding::bind(program.hash, program.node_count, bucket.binding, lane, slices);
  }
};

}  // namespace

static_assert(std::is_trivially_copyable_v<node_binding>, "copying a node handle must never allocate");
static_assert(!std::is_default_constructible_v<node_binding>, "a node handle only comes from a bound execution");

TEST_CASE("execution_binding: a lane whose evidence agrees binds, and node handles see exactly their slot",
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

TEST_CASE("execution_binding: a slot without evidence is missing_backing_slice", "[binding][execution]") {
  lane_fixture f;
  f.slices.pop_back();
  CHECK(code_of(f.bind()) == errc::missing_backing_slice);
  f.slices.clear();
  CHECK(code_of(f.bind()) == errc::missing_backing_slice);
}

TEST_CASE("execution_binding: evidence that differs in any field is backing_slice_mismatch", "[binding][execution]") {
  const std::vector<std::function<void(backing_slice&)>> edits = {
      [](backing_slice& s) { s.claim.bytes[31] ^= 1; },
      [](backing_slice& s) { s.bucket.reset(); },
      [](backing_slice& s) { s.bucket = bucket_id::make(test::id<bucket_class>("other"), {1, 1, 1}).value(); },
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

TEST_CASE("execution_binding: evidence is recorded in resource id order from the pool's capacity layout",
          "[binding][execution]") {
  const lane_fixture f;
  REQUIRE(f.slices.size() == 2);
  CHECK(f.slices[0].resource.str() == "resource/program-binding-first");
  CHECK(f.slices[1].offset == 64);
  CHECK(f.slices[1].physical_size_bytes == 192);
  CHECK(f.slices[1].bucket == f.bucket.id);
  CHECK(f.slices[1].claim == f.program.wave_layouts[0].claim.digest());
}
