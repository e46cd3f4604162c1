// ferrum/scheduler/detail/submit_arguments.hpp — what async_submit's
// initiation hands the scheduler's implementation (internal): the encoder by
// reference, the bucket the request was resolved to, and how to install the
// handler in the wave that will complete it.
#pragma once

#include "ferrum/error.hpp"
#include "ferrum/scheduler/detail/wave_completion.hpp"
#include "ferrum/scheduler/wave.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <cstddef>
#include <functional>
#include <memory>
#include <type_traits>

namespace ferrum::detail {

// An encoder by reference (or a function by pointer): the object and how to
// call it. Copied by value into the wave; the object itself is not copied.
struct encoder_ref {
  const void* object = nullptr;
  void (*function)() = nullptr;  // a plain function, cast back by `call`/`spawn`
  // Exactly one is set: a plain encoder, or a coroutine encoder.
  void (*call)(const encoder_ref& self, const encode_context& context) = nullptr;
  boost::asio::awaitable<void> (*spawn)(const encoder_ref& self, const encode_context& context) = nullptr;

  template <class Encoder>
  static encoder_ref of(Encoder&& encode) noexcept {
    using callable = std::remove_cvref_t<Encoder>;
    using decayed = std::decay_t<Encoder>;
    encoder_ref ref;
    if constexpr (std::is_function_v<callable> || std::is_pointer_v<decayed>) {
      static_assert(std::is_function_v<std::remove_pointer_t<decayed>>, "an encoder pointer must point to a function");
      const decayed f = encode;
      // Function pointers convert to each other and back without loss.
      ref.function = reinterpret_cast<void (*)()>(f);
      set_calls<decayed>(ref, [](const encoder_ref& r) { return reinterpret_cast<decayed>(r.function); });
    } else {
      using object_type = std::remove_reference_t<Encoder>;
      ref.object = static_cast<const void*>(std::addressof(encode));
      set_calls<object_type&>(ref, [](const encoder_ref& r) -> object_type& {
        // The object was passed as it is (const or not): only the constness
        // added for storage is taken off again.
        return *const_cast<object_type*>(static_cast<const object_type*>(r.object));
      });
    }
    return ref;
  }

 private:
  template <class Callable, class Get>
  static void set_calls(encoder_ref& ref, Get) noexcept {
    if constexpr (std::is_same_v<std::invoke_result_t<Callable, const encode_context&>, boost::asio::awaitable<void>>) {
      ref.spawn = [](const encoder_ref& r, const encode_context& c) { return std::invoke(Get{}(r), c); };
    } else {
      static_assert(
          std::is_invocable_v<Callable, const encode_context&>,
          "an encoder is callable as void(const encode_context&) or asio::awaitable<void>(const encode_context&)");
      ref.call = [](const encoder_ref& r, const encode_context& c) { (void)std::invoke(Get{}(r), c); };
    }
  }
};

// The bucket async_submit resolved the request to when it was called, so
// that nothing of the request is read later (a lazy token may start the wave
// long after): its index in the program's buckets, or why the request is
// refused.
struct bucket_choice {
  std::size_t bucket = 0;
  errc refused = errc::ok;
};

// How async_submit's initiation hands its handler to the wave that will
// complete it: `install` moves `*handler` into `completion`.
struct completion_installer {
  void* handler;
  void (*install)(void* handler, wave_completion& completion, const boost::asio::any_io_executor& io_executor);
};

}  // namespace ferrum::detail
