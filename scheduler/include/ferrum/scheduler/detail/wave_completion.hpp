// ferrum/scheduler/detail/wave_completion.hpp — the type-erased completion
// handler of one wave, stored inside the wave (internal).
#pragma once

#include "ferrum/detail/post_buffer.hpp"
#include "ferrum/scheduler/wave.hpp"

#include <boost/asio/associated_allocator.hpp>
#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/bind_allocator.hpp>
#include <boost/asio/execution/outstanding_work.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/prefer.hpp>
#include <boost/asio/system_executor.hpp>
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

  template <class Handler>
  void emplace(Handler&& handler) {
    using impl_type = impl<std::decay_t<Handler>>;
    if constexpr (sizeof(impl_type) <= sizeof(storage_) && alignof(impl_type) <= alignof(std::max_align_t)) {
      base_ = ::new (static_cast<void*>(storage_)) impl_type(std::forward<Handler>(handler));
    } else {
      base_ = new impl_type(std::forward<Handler>(handler));
    }
  }

  [[nodiscard]] bool empty() const noexcept { return base_ == nullptr; }

  // Posts the handler with `outcome` (moved out) to the handler's executor;
  // outcome->delivered runs there, just after the handler. Once.
  void post(wave_outcome& outcome) noexcept { base_->post(outcome, buffer_); }

  // The handler's cancellation slot is connected.
  [[nodiscard]] bool cancellable() const noexcept { return base_ != nullptr && base_->cancellable(); }

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
    [[nodiscard]] virtual bool cancellable() const noexcept = 0;
  };

  template <class Handler>
  struct impl final : base {
    using work_executor = std::decay_t<decltype(boost::asio::prefer(
        std::declval<boost::asio::associated_executor_t<Handler, boost::asio::system_executor>>(),
        boost::asio::execution::outstanding_work.tracked))>;

    explicit impl(Handler&& h)
        : handler(std::move(h)),
          executor(boost::asio::prefer(boost::asio::get_associated_executor(handler, boost::asio::system_executor()),
                                       boost::asio::execution::outstanding_work.tracked)) {}

    void post(wave_outcome& outcome, post_buffer& buffer) noexcept override {
      auto deliver = [this, o = &outcome] {
        auto slot = boost::asio::get_associated_cancellation_slot(handler);
        if (slot.is_connected()) slot.clear();
        Handler h(std::move(handler));
        const work_executor work(std::move(executor));
        boost::system::error_code ec = o->ec;
        wave_report report = std::move(o->report);
        std::move(h)(ec, std::move(report));
        // Only after the handler returned: a completed async_shutdown (or a
        // returned ~scheduler) means every wave's handler has run. The wave,
        // this object with it, may be freed from here on.
        o->delivered(o);
      };
      boost::asio::post(executor, boost::asio::bind_allocator(post_allocator<void>(&buffer), std::move(deliver)));
    }

    [[nodiscard]] bool cancellable() const noexcept override {
      return boost::asio::get_associated_cancellation_slot(handler).is_connected();
    }

    Handler handler;
    work_executor executor;
  };

  alignas(std::max_align_t) unsigned char storage_[160];
  base* base_ = nullptr;
  post_buffer buffer_;
};

}  // namespace ferrum::detail
