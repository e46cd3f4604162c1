// tools/early_cancellation_slot.hpp — a cancellation slot that can cancel an
// operation the moment the operation installs its handler: before a wave
// has started, without racing its completion.
//
//   asio::cancellation_signal signal;
//   scheduler.async_submit(request, encode,
//       asio::bind_cancellation_slot(early_cancellation_slot(signal, true), handler));
//   // the wave completes with operation_aborted, having taken no lane
//
// Why not emit the signal once async_submit returns: by then the wave is
// posted to the scheduler's executor and another thread may already run it,
// even to its end, so "cancelled before it starts" would be a race. The
// scheduler installs its canceller into the handler's slot before it
// launches the wave; emitting right there is the one point that both
// precedes the start and cannot meet the completion.
//
// Everything else is Asio's own cancellation_slot: the signal stays usable
// for a later emit (from inside an encoder) and the slot is cleared when the
// completion is delivered. Models Asio's CancellationSlot as far as the
// operations that take it use one (emplace, assign, clear, is_connected,
// has_handler).
#pragma once

#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/cancellation_type.hpp>

#include <type_traits>
#include <utility>

namespace ferrum::tools {

class early_cancellation_slot {
 public:
  // A slot of `signal` that, when `cancel_on_install`, emits a terminal
  // cancellation as soon as a handler is installed.
  early_cancellation_slot(boost::asio::cancellation_signal& signal, bool cancel_on_install) noexcept
      : signal_(&signal), inner_(signal.slot()), cancel_on_install_(cancel_on_install) {}

  template <class CancellationHandler, class... Args>
  CancellationHandler& emplace(Args&&... args) {
    CancellationHandler& handler = inner_.template emplace<CancellationHandler>(std::forward<Args>(args)...);
    if (cancel_on_install_) signal_->emit(boost::asio::cancellation_type::terminal);
    return handler;
  }

  template <class CancellationHandler>
  std::decay_t<CancellationHandler>& assign(CancellationHandler&& handler) {
    return emplace<std::decay_t<CancellationHandler>>(std::forward<CancellationHandler>(handler));
  }

  void clear() { inner_.clear(); }
  [[nodiscard]] bool is_connected() const noexcept { return inner_.is_connected(); }
  [[nodiscard]] bool has_handler() const noexcept { return inner_.has_handler(); }

 private:
  boost::asio::cancellation_signal* signal_;
  boost::asio::cancellation_slot inner_;
  bool cancel_on_install_;
};

}  // namespace ferrum::tools
