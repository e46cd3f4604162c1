// The two kinds of execution context users embed, a scheduler over the null
// device whose waves run on one, and an allocator that counts: what the Asio
// contract tests run on.
#pragma once

#include "scheduler_support.hpp"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/thread_pool.hpp>

#include <atomic>
#include <cstddef>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

namespace sched_test {

// The two kinds of execution context users embed: an io_context run by two
// threads of the test, and a thread_pool of two.
struct on_io_context {
  boost::asio::io_context context;
  std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> guard{context.get_executor()};
  std::vector<std::thread> threads;

  on_io_context() {
    for (int i = 0; i < 2; ++i) threads.emplace_back([this] { context.run(); });
  }
  ~on_io_context() { stop(); }
  [[nodiscard]] boost::asio::any_io_executor executor() { return context.get_executor(); }
  [[nodiscard]] bool running_here() { return context.get_executor().running_in_this_thread(); }
  void stop() {
    guard.reset();
    for (std::thread& t : threads)
      if (t.joinable()) t.join();
  }
};

struct on_thread_pool {
  boost::asio::thread_pool context{2};
  [[nodiscard]] boost::asio::any_io_executor executor() { return context.get_executor(); }
  [[nodiscard]] bool running_here() { return context.get_executor().running_in_this_thread(); }
  void stop() { context.join(); }
};

// A scheduler over the null device whose waves run on a `Context`.
template <class Context>
struct contract_fixture {
  explicit contract_fixture(ferrum::gpu::null_device_options device_options = {},
                            ferrum::scheduler_options options = {}, std::uint32_t lanes = 2)
      : plan(sched_test::make_plan(3, lanes)),
        program(std::make_shared<const ferrum::compiled_program>(ferrum::test::compile_ok(plan))),
        device(::test::null_device(device_options)) {
    auto made = ferrum::scheduler::create(program, *device, context.executor(), options);
    if (!made) FAIL(made.error().what());
    scheduler = std::move(*made);
  }
  ~contract_fixture() {
    scheduler.reset();
    context.stop();
  }

  ferrum::plan plan;
  std::shared_ptr<const ferrum::compiled_program> program;
  std::unique_ptr<ferrum::gpu::null_device> device;
  Context context;
  std::unique_ptr<ferrum::scheduler> scheduler;
};

// Counts what it allocates; a handler bound to it must get its memory from it.
template <class T>
struct counting_allocator {
  using value_type = T;
  std::atomic<int>* allocations;
  std::atomic<int>* deallocations;
  explicit counting_allocator(std::atomic<int>* a, std::atomic<int>* d) noexcept : allocations(a), deallocations(d) {}
  template <class U>
  counting_allocator(const counting_allocator<U>& other) noexcept  // NOLINT: converting, as allocators are
      : allocations(other.allocations), deallocations(other.deallocations) {}
  T* allocate(std::size_t n) {
    allocations->fetch_add(1);
    return std::allocator<T>().allocate(n);
  }
  void deallocate(T* p, std::size_t n) noexcept {
    deallocations->fetch_add(1);
    std::allocator<T>().deallocate(p, n);
  }
  template <class U>
  bool operator==(const counting_allocator<U>& other) const noexcept {
    return allocations == other.allocations;
  }
};

}  // namespace sched_test
