// ferrum/async/post_once.hpp — posting work that must happen exactly once,
// whether or not its executor runs it: `f(true)` on the executor, or
// `f(false)` where the posted function is destroyed unrun (its execution
// context went with it queued, or the post itself threw).
//
//   ferrum::async::post_once(executor, [this](bool ran) { finish(ran); });
#pragma once

#include <boost/asio/post.hpp>

#include <optional>
#include <type_traits>
#include <utility>

namespace ferrum::async {

template <class Function>
class posted_once {
  static_assert(std::is_nothrow_move_constructible_v<Function>);

 public:
  explicit posted_once(Function f) noexcept : f_(std::move(f)) {}
  posted_once(posted_once&& other) noexcept : f_(std::exchange(other.f_, std::nullopt)) {}
  posted_once(const posted_once&) = delete;
  posted_once& operator=(const posted_once&) = delete;
  posted_once& operator=(posted_once&&) = delete;
  ~posted_once() {
    if (f_) (*std::exchange(f_, std::nullopt))(false);
  }

  void operator()() { (*std::exchange(f_, std::nullopt))(true); }

 private:
  std::optional<Function> f_;
};

template <class Executor, class Function>
void post_once(const Executor& executor, Function f) noexcept {
  try {
    boost::asio::post(executor, posted_once<Function>(std::move(f)));
  } catch (...) {
    // Nothing was queued: the function, destroyed unrun, was called with false.
  }
}

}  // namespace ferrum::async
