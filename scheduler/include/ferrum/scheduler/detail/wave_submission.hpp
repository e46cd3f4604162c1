// ferrum/scheduler/detail/wave_submission.hpp — what async_submit's
// initiation hands the scheduler (internal): the encoder by reference, the
// bucket the request was resolved to, and the completion handler, stored
// type-erased inside the recycled wave that will complete it.
#pragma once

#include "ferrum/async/operation.hpp"
#include "ferrum/binding/ids.hpp"
#include "ferrum/error.hpp"
#include "ferrum/scheduler/wave.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/cancellation_type.hpp>
#include <boost/container/static_vector.hpp>
#include <boost/system/error_code.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <functional>
#include <memory>
#include <new>
#include <span>
#include <type_traits>
#include <utility>

namespace ferrum::detail {

class wave;

// Installed in a wave's handler's cancellation slot: forwards a request to
// the wave (scheduler/src/wave_impl.cpp says which types each step honours).
struct wave_canceller {
  explicit wave_canceller(wave* w) noexcept : target(w) {}
  wave* target;
  void operator()(boost::asio::cancellation_type_t type) const noexcept;
};

// What a wave hands to its completion: the outcome, and a call that tells
// the wave its completion has been delivered (it then may be recycled).
struct wave_outcome {
  boost::system::error_code ec;
  wave_report report;
  void (*delivered)(wave_outcome* outcome) noexcept = nullptr;
  void* context = nullptr;  // for `delivered`: the wave
};

// While a wave's handler runs: marks the thread as delivering that wave (so
// that a scheduler destroyed from inside the handler does not wait for the
// handler to return) and, as the handler returns or throws, tells the wave
// that its completion was delivered (after which it may be recycled, and
// its scheduler freed). Defined in the scheduler library (wave_report.cpp).
class delivery_scope {
 public:
  explicit delivery_scope(wave_outcome& outcome) noexcept;
  delivery_scope(const delivery_scope&) = delete;
  delivery_scope& operator=(const delivery_scope&) = delete;
  ~delivery_scope();

  // The wave whose handler this thread runs (innermost), and the one around it.
  [[nodiscard]] static const delivery_scope* current() noexcept;
  [[nodiscard]] const delivery_scope* outer() const noexcept { return outer_; }
  [[nodiscard]] const wave_outcome& outcome() const noexcept { return *outcome_; }

 private:
  wave_outcome* outcome_;
  const delivery_scope* outer_;
};

// Holds the handler of async_submit: inline in the wave when it fits (every
// Asio token's handler does), otherwise in memory from the handler's
// associated allocator (Asio's recycling allocator when it has none).
class wave_completion {
 public:
  explicit wave_completion(wave* owner) noexcept : owner_(owner) {}
  wave_completion(const wave_completion&) = delete;
  wave_completion& operator=(const wave_completion&) = delete;
  ~wave_completion() { reset(); }

  // Takes the handler, the outstanding work of its associated executor
  // (`io_executor`, the scheduler's, when it has none), and its
  // cancellation slot, which then forwards requests to the wave.
  template <class Handler>
  void emplace(Handler&& handler, const boost::asio::any_io_executor& io_executor) {
    using impl_type = impl<std::decay_t<Handler>>;
    if constexpr (sizeof(impl_type) <= sizeof(storage_) && alignof(impl_type) <= alignof(std::max_align_t)) {
      base_ = ::new (static_cast<void*>(storage_)) impl_type(std::forward<Handler>(handler), io_executor);
    } else {
      base_ = async::make<impl_type>(handler, std::forward<Handler>(handler), io_executor);
    }
    base_->on_cancel(owner_);
    base_->home = this;
  }

  // Posts the handler with `outcome` (moved out) to the handler's executor;
  // outcome.delivered runs there just after the handler — or, when the
  // executor is destroyed with the post queued, as the post goes. Once. The
  // handler's memory goes back before the handler runs, as Asio's rule is
  // (the handler may end its allocator's state).
  void post(wave_outcome& outcome) noexcept { base_->post(outcome); }

  // Destroys the handler (moved out at its upcall, or never posted), for the
  // next wave; once destroyed, nothing.
  void reset() noexcept {
    if (base_ == nullptr) return;
    if (static_cast<void*>(base_) == static_cast<void*>(storage_)) {
      base_->~base();
    } else {
      base_->destroy_allocated();
    }
    base_ = nullptr;
  }

 private:
  struct base {
    virtual ~base() = default;
    virtual void on_cancel(wave* owner) = 0;
    virtual void post(wave_outcome& outcome) noexcept = 0;
    // Destroys this object and gives its memory back to the allocator it came from.
    virtual void destroy_allocated() noexcept = 0;
    wave_completion* home = nullptr;
  };

  template <class Handler>
  struct impl final : base {
    impl(Handler&& h, const boost::asio::any_io_executor& io_executor)
        : allocator(boost::asio::get_associated_allocator(h, boost::asio::recycling_allocator<void>())),
          op(std::move(h), io_executor) {}

    void on_cancel(wave* owner) override { op.template on_cancel<wave_canceller>(owner); }
    void post(wave_outcome& o) noexcept override {
      outcome = &o;
      op.post(async::upcall_fn<impl>(this));
    }
    void destroy_allocated() noexcept override {
      // The handler is moved out by now: the allocator is kept aside for this.
      auto memory = allocator;
      this->~impl();
      std::allocator_traits<decltype(memory)>::deallocate(memory, this, 1);
    }

    static void finish(impl* self) {
      auto upcall = self->op.take();
      wave_outcome* o = self->outcome;
      // The operation's memory back before the upcall (this object goes).
      self->home->reset();
      // Delivered once the handler returned — or threw, the exception going
      // on out of the executor's run() as from any Asio handler: a completed
      // async_shutdown (or a returned ~scheduler) means every wave's handler
      // has run. The wave, this object with it, may be recycled from then on.
      const delivery_scope delivering(*o);
      std::move(upcall.handler)(o->ec, std::move(o->report));
    }
    static void abandon(impl* self) noexcept { self->outcome->delivered(self->outcome); }

    async::op_allocator_t<impl, Handler> allocator;
    async::operation<Handler, boost::asio::any_io_executor> op;
    wave_outcome* outcome = nullptr;
  };

  // Room for the handler of every Asio token, its executor and its post
  // buffer (two entries of async::post_entry_bytes).
  alignas(std::max_align_t) unsigned char storage_[768];
  base* base_ = nullptr;
  wave* owner_;
};

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

// A wave's semaphores, copied in place (no allocation): at most
// max_wave_semaphores; `given` says how many the request had. The request's
// copy, taken by the wave that runs it (none: a wave without semaphores).
struct copied_semaphores {
  boost::container::static_vector<gpu::semaphore_op, max_wave_semaphores> ops;
  std::size_t given = 0;

  copied_semaphores() noexcept = default;
  explicit copied_semaphores(std::span<const gpu::semaphore_op> from) noexcept : given(from.size()) {
    for (std::size_t i = 0; i < std::min(from.size(), ops.capacity()); ++i) ops.push_back(from[i]);
  }
  // False when the request had more than a wave holds.
  [[nodiscard]] bool kept() const noexcept { return given <= ops.capacity(); }
};

// A wave's imported buffers or images, copied in place: at most `N` (the
// resource ids copied too); `given` says how many the request had.
template <class Named, std::size_t N>
struct copied_named {
  struct entry {
    std::array<char, max_id_length> resource{};
    std::size_t length = 0;
    Named value;  // its `resource` empty: id() is the copy

    // The id, or an empty one where it is longer than any id.
    [[nodiscard]] std::string_view id() const noexcept {
      return length <= resource.size() ? std::string_view(resource.data(), length) : std::string_view();
    }
  };
  boost::container::static_vector<entry, N> entries;
  std::size_t given = 0;

  copied_named() noexcept = default;
  explicit copied_named(std::span<const Named> from) noexcept : given(from.size()) {
    for (std::size_t i = 0; i < std::min(from.size(), entries.capacity()); ++i) {
      entry& e = entries.emplace_back();
      e.length = from[i].resource.size();
      if (e.length <= e.resource.size()) std::copy_n(from[i].resource.data(), e.length, e.resource.data());
      e.value = from[i];
      e.value.resource = {};
    }
  }
  [[nodiscard]] bool kept() const noexcept { return given <= entries.capacity(); }
};
using copied_imports = copied_named<imported_buffer, max_wave_imports>;
using copied_images = copied_named<imported_image, max_wave_images>;

// The request, copied when async_submit is called, so that nothing of the
// caller's is read later (a lazy token may start the wave long after). It is
// resolved to a bucket when the wave is initiated, on the program current
// then. A class longer than any id cannot name a bucket: kept as such.
class copied_request {
 public:
  explicit copied_request(const wave_request& request) noexcept
      : length_(request.bucket_class.size()),
        extent_(request.extent),
        wait_(request.wait),
        signal_(request.signal),
        imports_(request.imports),
        images_(request.images),
        readback_(request.readback) {
    if (length_ <= class_.size()) std::copy_n(request.bucket_class.data(), length_, class_.data());
  }
  // False for a class longer than any id.
  [[nodiscard]] bool kept() const noexcept { return length_ <= class_.size(); }
  [[nodiscard]] wave_request request() const noexcept {
    return {std::string_view(class_.data(), kept() ? length_ : 0), extent_, wait_.ops, signal_.ops, {}, {}, readback_};
  }
  [[nodiscard]] const copied_semaphores& wait() const noexcept { return wait_; }
  [[nodiscard]] const copied_semaphores& signal() const noexcept { return signal_; }
  [[nodiscard]] const copied_imports& imports() const noexcept { return imports_; }
  [[nodiscard]] const copied_images& images() const noexcept { return images_; }
  [[nodiscard]] wave_readback* readback() const noexcept { return readback_; }

 private:
  std::array<char, max_id_length> class_{};
  std::size_t length_;
  bucket_capacity extent_;
  copied_semaphores wait_;
  copied_semaphores signal_;
  copied_imports imports_;
  copied_images images_;
  wave_readback* readback_;
};

// How async_submit's initiation hands its handler to the wave that will
// complete it: `install` moves `*handler` into `completion`.
struct completion_installer {
  void* handler;
  void (*install)(void* handler, wave_completion& completion, const boost::asio::any_io_executor& io_executor);
};

}  // namespace ferrum::detail
