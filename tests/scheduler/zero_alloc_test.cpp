// In steady state a wave allocates nothing: counted with a replaced global
// operator new over 1,000 waves after warm-up, on the null device.
//
// Its own binary: the replaced operator new counts every allocation of the
// process while counting is on.
#include "scheduler_support.hpp"

#include <boost/asio/bind_executor.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/strand.hpp>

#include <atomic>
#include <cstdlib>
#include <new>

// The replaced operators pair malloc with free by design; g++ cannot see that
// through inlining and reports a mismatch.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

namespace {

std::atomic<bool> counting{false};
std::atomic<std::uint64_t> allocations{0};

void* counted_alloc(std::size_t bytes, std::size_t alignment) {
  if (counting.load(std::memory_order_relaxed)) allocations.fetch_add(1, std::memory_order_relaxed);
  if (bytes == 0) bytes = 1;
  void* p = alignment <= alignof(std::max_align_t) ? std::malloc(bytes)
                                                   : std::aligned_alloc(alignment, (bytes + alignment - 1) / alignment * alignment);
  return p;
}

}  // namespace

void* operator new(std::size_t bytes) {
  if (void* p = counted_alloc(bytes, alignof(std::max_align_t))) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t bytes) { return operator new(bytes); }
void* operator new(std::size_t bytes, std::align_val_t alignment) {
  if (void* p = counted_alloc(bytes, static_cast<std::size_t>(alignment))) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t bytes, std::align_val_t alignment) { return operator new(bytes, alignment); }
void* operator new(std::size_t bytes, const std::nothrow_t&) noexcept { return counted_alloc(bytes, alignof(std::max_align_t)); }
void* operator new[](std::size_t bytes, const std::nothrow_t&) noexcept { return counted_alloc(bytes, alignof(std::max_align_t)); }
void* operator new(std::size_t bytes, std::align_val_t alignment, const std::nothrow_t&) noexcept {
  return counted_alloc(bytes, static_cast<std::size_t>(alignment));
}
void* operator new[](std::size_t bytes, std::align_val_t alignment, const std::nothrow_t&) noexcept {
  return counted_alloc(bytes, static_cast<std::size_t>(alignment));
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }

namespace {

// Keeps `window` waves in flight on a single-threaded io_context until
// `total` have completed; counts failures without allocating.
template <class CompletionExecutor>
struct wave_loop {
  ferrum::scheduler& scheduler;
  CompletionExecutor completions;
  std::size_t total;
  std::size_t window;
  std::size_t submitted = 0;
  std::size_t completed = 0;
  std::size_t failed = 0;

  void operator()(const ferrum::encode_context& c) const {
    // Records real commands: a fill of the node's slot.
    if (!c.commands.fill(c.slot, static_cast<std::uint32_t>(c.wave))) throw std::runtime_error("fill refused");
  }

  void pump() {
    while (submitted < total && submitted - completed < window) {
      ++submitted;
      scheduler.async_submit({"step", {1, 1, 1}}, *this,
                             boost::asio::bind_executor(completions, [this](boost::system::error_code ec,
                                                                        const ferrum::wave_report&) {
                               ++completed;
                               failed += ec ? 1 : 0;
                               pump();
                             }));
    }
  }

  void run(boost::asio::io_context& context, std::size_t waves) {
    total += waves;
    pump();
    context.restart();
    context.run();
  }
};

// Runs 200 waves of warm-up, then counts the allocations of 1,000 more;
// completions are delivered through `completions`.
template <class CompletionExecutor>
std::uint64_t count_waves(boost::asio::io_context& context, CompletionExecutor completions, std::size_t nodes,
                          std::uint32_t lanes, std::size_t encoder_tasks) {
  const auto plan = sched_test::make_plan(nodes, lanes);
  auto program = std::make_shared<const ferrum::compiled_program>(ferrum::test::compile_ok(plan));
  auto device = ::test::null_device();
  auto scheduler = test::require(
      ferrum::scheduler::create(plan, program, *device, context.get_executor(), {.encoder_tasks = encoder_tasks}));
  wave_loop<CompletionExecutor> loop{*scheduler, completions, 0, lanes};
  // Warm-up: waves, frames, slabs and Asio's caches reach their peak. Counted
  // too, to show that the counter sees the scheduler's allocations.
  allocations.store(0);
  counting.store(true);
  loop.run(context, 200);
  counting.store(false);
  REQUIRE(loop.completed == 200);
  CHECK(allocations.load() > 0);
  allocations.store(0);
  counting.store(true);
  loop.run(context, 1000);
  counting.store(false);
  REQUIRE(loop.completed == 1200);
  CHECK(loop.failed == 0);
  return allocations.load();
}

// Completions are delivered on the io_context itself, or through a strand.
enum class delivery { direct, strand };

std::uint64_t allocations_over(std::size_t nodes, std::uint32_t lanes, std::size_t encoder_tasks,
                               delivery how = delivery::direct) {
  if (how == delivery::strand) {
    boost::asio::io_context context;
    return count_waves(context, boost::asio::make_strand(context), nodes, lanes, encoder_tasks);
  }
  boost::asio::io_context context;
  return count_waves(context, context.get_executor(), nodes, lanes, encoder_tasks);
}
}  // namespace

TEST_CASE("zero allocations: 1,000 waves after warm-up allocate nothing (16 nodes, 3 lanes)", "[scheduler]") {
  const std::uint64_t count = allocations_over(16, 3, 1);
  INFO(count << " allocations over 1000 waves");
  CHECK(count == 0);
}

TEST_CASE("zero allocations: also with the nodes split into several encoder tasks", "[scheduler]") {
  const std::uint64_t count = allocations_over(64, 2, 4);
  INFO(count << " allocations over 1000 waves");
  CHECK(count == 0);
}

TEST_CASE("zero allocations: also when completions go through a strand", "[scheduler]") {
  const std::uint64_t count = allocations_over(16, 3, 1, delivery::strand);
  INFO(count << " allocations over 1000 waves");
  CHECK(count == 0);
}
