// ferrum/scheduler/detail/wave_completion.hpp — the type-erased completion
// handler of one wave, stored inside the wave (internal).
#pragma once

#include "ferrum/detail/pending_handler.hpp"
#include "ferrum/scheduler/wave.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/system/error_code.hpp>

#include <cstddef>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>

namespace ferrum::detail {

// What a wave hands to its completion: the outcome, and a call that tells
// the wave its completion has been delivered (it then may free itself).
struct wave_outcome {
  boost::system::error_code ec;
  wave_report report;
  void (*delivered)(wave_outcome* outcome) noexcept = nullptr;
  void* context = nullptr;  // for `delivered`: the wave
};

// Holds the handler of async_submit: inline in the wave when it fits (every
// Asio token's handler does), on the heap otherwise.
class wave_completion {
 public:
  wave_completion() = default;
  wave_completion(const wave_completion&) = delete;
  wave_completion& operator=(const wave_completion&) = delete;
  ~wave_completion() { reset(); }

  // Takes the handler, and the outstanding work of its associated executor
  // (`io_executor`, the scheduler's, when it has none).
  template <class Handler>
  void emplace(Handler&& handler, const boost::asio::any_io_executor& io_executor) {
    using impl_type = impl<std::decay_t<Handler>>;
    // Some tokens (use_promise) pass the handler as an lvalue: taken over here.
    std::decay_t<Handler> owned(std::forward<Handler>(handler));
    if constexpr (sizeof(impl_type) <= sizeof(storage_) && alignof(impl_type) <= alignof(std::max_align_t)) {
      base_ = ::new (static_cast<void*>(storage_)) impl_type(std::move(owned), io_executor);
    } else {
      base_ = new impl_type(std::move(owned), io_executor);
    }
  }

  [[nodiscard]] bool empty() const noexcept { return base_ == nullptr; }

  // Posts the handler with `outcome` (moved out) to the handler's executor;
  // outcome->delivered runs there, just after the handler. Once.
  void post(wave_outcome& outcome) noexcept { base_->post(outcome, buffer_); }

  // Destroys the (delivered) handler, for the next wave.
  void reset() noexcept {
    if (base_ == nullptr) return;
    if (static_cast<void*>(base_) == static_cast<void*>(storage_)) {
      base_->~base();
    } else {
      delete base_;
    }
    base_ = nullptr;
  }

 private:
  struct base {
    virtual ~base() = default;
    virtual void post(wave_outcome& outcome, post_buffer& buffer) noexcept = 0;
  };

  template <class Handler>
  struct impl final : base {
    impl(Handler&& h, const boost::asio::any_io_executor& io_executor) : pending(std::move(h), io_executor) {}

    void post(wave_outcome& outcome, post_buffer& buffer) noexcept override {
      pending.post(buffer, [this, o = &outcome] {
        auto upcall = pending.take();
        boost::system::error_code ec = o->ec;
        wave_report report = std::move(o->report);
        // Only after the handler returned — or threw, the exception going on
        // out of the executor's run() as from any Asio handler: a completed
        // async_shutdown (or a returned ~scheduler) means every wave's
        // handler has run. The wave, this object with it, may be freed from
        // here on.
        struct deliver_on_exit {
          wave_outcome* outcome;
          ~deliver_on_exit() { outcome->delivered(outcome); }
        } deliver{o};
        std::move(upcall.handler)(ec, std::move(report));
      });
    }

    pending_handler<Handler, boost::asio::any_io_executor> pending;
  };

  alignas(std::max_align_t) unsigned char storage_[160];
  base* base_ = nullptr;
  post_buffer buffer_;
};

}  // namespace ferrum::detail
