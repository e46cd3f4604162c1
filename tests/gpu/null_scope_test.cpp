// Barriers of a scope (ferrum/sync_scope.hpp) on the null device, reordering
// what no barrier orders (null_device_options::reorder_unordered): a barrier
// orders only the stages it names, so one missing the producer's stage from
// `before` or the consumer's from `after` shows as wrong data; barriers
// chain through a stage one blocks and the next waits for; a barrier
// without the accesses it orders is counted (barrier_access_errors). And
// the barriers a list records between its own commands, each exactly the
// earlier commands' scopes before the next command's.
#include "null_device_support.hpp"

#include "ferrum/gpu/builtin_kernels.hpp"

#include <catch2/catch.hpp>

#include <array>
#include <cstdint>
#include <memory>
#include <span>

namespace {

using ferrum::barrier_scope;
using ferrum::sync_scope;
namespace stages = ferrum::stages;
namespace accesses = ferrum::accesses;
using ferrum::gpu::command_list;
using ferrum::gpu::list_opening;

constexpr std::uint32_t pattern_seed = 5;
constexpr sync_scope dispatch_writes{stages::compute_shader, accesses::storage_write};
constexpr sync_scope dispatch_reads{stages::compute_shader, accesses::storage_read | accesses::storage_write};
constexpr sync_scope copy_reads{stages::transfer, accesses::transfer_read | accesses::transfer_write};

struct scope_fixture {
  std::unique_ptr<ferrum::gpu::null_device> device;
  // [0, 256): produced; [256, 512): consumed into; [512, 768): the chain's own.
  std::unique_ptr<ferrum::gpu::arena> arena;
  std::unique_ptr<ferrum::gpu::kernel> writer;
  std::unique_ptr<ferrum::gpu::kernel> checker;
  std::array<ferrum::gpu::arena_range, 1> granted;

  scope_fixture() {
    ferrum::gpu::null_device_options options;
    options.reorder_unordered = true;
    device = test::null_device(options);
    arena = test::require(device->create_arena(768));
    arena->guard();
    granted = {arena->whole()};
    writer = test::require(device->create_kernel(ferrum::gpu::builtin::write_pattern()));
    checker = test::require(device->create_kernel(ferrum::gpu::builtin::check_pattern()));
  }
  [[nodiscard]] ferrum::gpu::arena_range produced() const { return arena->range(0, 256); }
  [[nodiscard]] ferrum::gpu::arena_range consumed() const { return arena->range(256, 256); }

  std::unique_ptr<command_list> list() {
    auto l = test::require(device->create_command_list());
    l->grant(granted);
    return l;
  }
  // Zeroes the arena and waits.
  void zero() {
    auto l = list();
    test::require(l->begin(list_opening::by_hazards));
    test::require(l->fill(arena->whole(), 0u));
    test::require(l->end());
    submit({l.get()});
  }
  void submit(std::initializer_list<command_list*> lists) {
    const std::span<command_list* const> all(lists.begin(), lists.size());
    test::require_reached(device->queue().timeline(), test::require(device->queue().submit_next(all)));
  }
  std::unique_ptr<command_list> producer() {
    auto l = list();
    test::require(l->begin(list_opening::by_hazards));
    test::require(l->dispatch(*writer, produced(), {}, std::array{pattern_seed}));
    test::require(l->end());
    return l;
  }
  // A producer dispatch, then a list opened with `opening` that copies the
  // produced range: whether the copy saw the pattern.
  bool copy_after(const barrier_scope& opening) {
    zero();
    auto first = producer();
    auto second = list();
    test::require(second->begin(opening));
    test::require(second->copy(produced(), consumed()));
    test::require(second->end());
    submit({first.get(), second.get()});
    return test::word_at(*arena, 64) == ferrum::gpu::builtin::pattern_word(pattern_seed, 0) &&
           test::word_at(*arena, 127) == ferrum::gpu::builtin::pattern_word(pattern_seed, 63);
  }
};

}  // namespace

TEST_CASE("null device: a barrier orders only its stages, so a weakened one shows as wrong data", "[gpu][barriers]") {
  scope_fixture f;
  // The producer's stage and write before, the copy's stage and read after.
  CHECK(f.copy_after({dispatch_writes, copy_reads}));
  CHECK(f.device->barrier_access_errors().count == 0);
  // The copy's stage missing from `after`: the copy passes the barrier.
  CHECK_FALSE(f.copy_after({dispatch_writes, {stages::compute_shader | stages::fragment_shader, accesses::all}}));
  // The producer's stage missing from `before`: the barrier waits for no one.
  CHECK_FALSE(f.copy_after({{stages::transfer | stages::color_attachment_output, accesses::all}, copy_reads}));
  // No barrier at all.
  CHECK_FALSE(f.copy_after({}));
  // A full one.
  CHECK(f.copy_after(barrier_scope::full()));
  CHECK(f.device->barrier_access_errors().count == 0);
}

TEST_CASE("null device: barriers chain through a stage one blocks and the next waits for", "[gpu][barriers]") {
  scope_fixture f;
  // producer (compute) | B1: compute -> transfer, an unrelated dispatch
  // (which B1 does not order: the chain runs through the transfer stage,
  // which no command uses) | B2: transfer (or another stage) -> compute, a
  // check of the pattern.
  const auto mismatches = [&](ferrum::stage_mask second_waits_for) {
    f.zero();
    auto first = f.producer();
    auto middle = f.list();
    test::require(middle->begin(barrier_scope{dispatch_writes, {stages::transfer, accesses::transfer_write}}));
    test::require(middle->dispatch(*f.writer, f.arena->range(512, 256), {}, std::array{pattern_seed}));
    test::require(middle->end());
    auto last = f.list();
    test::require(last->begin(barrier_scope{{second_waits_for, accesses::transfer_write}, dispatch_reads}));
    test::require(last->dispatch(*f.checker, f.produced(), f.consumed(), std::array{pattern_seed}));
    test::require(last->end());
    f.submit({first.get(), middle.get(), last.get()});
    return test::word_at(*f.arena, 64);
  };
  CHECK(mismatches(stages::transfer) == 0u);
  // The second barrier waits for a stage the first does not block: the check
  // runs before the producer and sees zeros.
  CHECK(mismatches(stages::fragment_shader) == 64u);
}

TEST_CASE("null device: a barrier without the write's access before, or the reader's after, is counted",
          "[gpu][barriers]") {
  scope_fixture f;
  REQUIRE(f.copy_after({{stages::compute_shader, accesses::storage_read}, copy_reads}));
  const ferrum::gpu::barrier_access_report missing_write = f.device->barrier_access_errors();
  CHECK(missing_write.count == 1);
  REQUIRE(missing_write.first.size() == 1);
  CHECK_THAT(missing_write.first[0], Catch::Contains("a dispatch") && Catch::Contains("before a copy"));
  REQUIRE(f.copy_after({dispatch_writes, {stages::transfer, accesses::transfer_write}}));
  CHECK(f.device->barrier_access_errors().count == 2);
  // Ordered right, or a command reaching other memory: not counted.
  REQUIRE(f.copy_after({dispatch_writes, copy_reads}));
  f.zero();
  auto first = f.producer();
  auto second = f.list();
  test::require(second->begin(barrier_scope{{stages::compute_shader, 0}, {stages::transfer, 0}}));
  test::require(second->fill(f.consumed(), 1u));
  test::require(second->end());
  f.submit({first.get(), second.get()});
  CHECK(f.device->barrier_access_errors().count == 2);
}

TEST_CASE("command list: barriers between a list's commands are the earlier commands' scopes before the next one's",
          "[gpu][barriers]") {
  scope_fixture f;
  f.zero();
  auto l = f.list();
  test::require(l->begin(list_opening::by_hazards));
  test::require(l->fill(f.produced(), 3u));
  CHECK(l->barriers() == 0);
  // affine reads and writes the filled words: 3 * 2 + 1.
  auto affine = test::require(f.device->create_kernel(ferrum::gpu::builtin::affine()));
  test::require(l->dispatch(*affine, f.produced(), {}, std::array<std::uint32_t, 2>{2, 1}));
  CHECK(l->barriers() == 1);
  CHECK(l->last_barrier() == barrier_scope{{stages::transfer, accesses::transfer_write}, dispatch_reads});
  test::require(l->copy(f.produced(), f.consumed()));
  CHECK(l->last_barrier() ==
        barrier_scope{{stages::transfer | stages::compute_shader,
                       accesses::transfer_write | accesses::storage_read | accesses::storage_write},
                      copy_reads});
  test::require(l->end());
  f.submit({l.get()});
  CHECK(test::word_at(*f.arena, 0) == 7u);
  CHECK(test::word_at(*f.arena, 64) == 7u);
  CHECK(test::word_at(*f.arena, 127) == 7u);
  CHECK(f.device->barrier_access_errors().count == 0);

  // The list's opening: a scope as given, none for an empty one, full for
  // list_opening::barrier and for a range outside the grants.
  const barrier_scope opening{dispatch_writes, copy_reads};
  test::require(l->begin(opening));
  test::require(l->copy(f.produced(), f.consumed()));
  CHECK(l->barriers() == 1);
  CHECK(l->last_barrier() == opening);
  test::require(l->begin(barrier_scope{}));
  test::require(l->copy(f.produced(), f.consumed()));
  CHECK(l->barriers() == 0);
  test::require(l->begin(list_opening::barrier));
  test::require(l->copy(f.produced(), f.consumed()));
  CHECK(l->last_barrier() == barrier_scope::full());
  auto own = test::require(f.device->create_arena(64));
  test::require(l->begin(opening));
  test::require(l->fill(own->whole(), 1u));
  CHECK(l->last_barrier() == barrier_scope::full());
  // The explicit barrier is full; the command after it needs none.
  test::require(l->begin(opening));
  test::require(l->barrier());
  test::require(l->copy(f.produced(), f.consumed()));
  CHECK(l->barriers() == 1);
  CHECK(l->last_barrier() == barrier_scope::full());
  test::require(l->end());
}
