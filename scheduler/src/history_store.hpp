// history_store.hpp (private) — a program's history resources as a
// scheduler runs them (docs/design.md, "History"): two copies of each pair
// per bucket, outside the lanes, and the turn that lets one wave at a time,
// in the order waves took it, from its turn to its submission, choose which
// copy it writes and which it reads.
#pragma once

#include "ferrum/binding/lane_recipe.hpp"
#include "ferrum/error.hpp"
#include "ferrum/gpu/device.hpp"
#include "wave_imports.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

namespace ferrum::detail {

// A wave waiting for the turn: its ticket. Intrusive: it lives in its wave.
struct history_waiter {
  using granted_fn = void (*)(history_waiter* w) noexcept;
  explicit history_waiter(granted_fn on_granted) noexcept : granted(on_granted) {}
  granted_fn granted;
  std::uint64_t ticket = 0;
  history_waiter* next = nullptr;
};

// How the turn's holder ended: nothing of it submitted (it failed or was
// cancelled before), all of it, or part of it (a later submission failed).
enum class history_outcome : std::uint8_t { unsubmitted, submitted, partly_submitted };

// What a wave's turn gives it: the wave whose output its previous copies
// hold (0: none — they are reset to zeros by `reset`, recorded, which the
// wave submits before its own lists).
struct history_grant {
  std::uint64_t previous_wave = 0;
  gpu::command_list* reset = nullptr;
};

class history_store {
 public:
  explicit history_store(std::size_t buckets) : buckets_(buckets) {}
  history_store(const history_store&) = delete;
  history_store& operator=(const history_store&) = delete;

  // A ticket for the turn, in the order waves are launched (their
  // acceptance): turns go by ticket. A wave that takes one takes its turn
  // whatever happens to it (failed or cancelled, it settles at once), so
  // that the waves after it get theirs.
  [[nodiscard]] std::uint64_t ticket() noexcept { return next_ticket_.fetch_add(1, std::memory_order_relaxed); }
  // True: `w` (its ticket set) has the turn now. False: it is queued, and
  // `w.granted` is called once it has it, on the thread that settles the
  // turn before it.
  [[nodiscard]] bool take_turn(history_waiter& w) noexcept;

  // For the turn's holder, a wave of bucket `b` (`recipe`, its lane
  // recipe) on `device`: points the history entries of `imports`
  // (resolve_imports' order) at the bucket's copies — the one the last
  // wave that submitted whole wrote as the previous, the other as the
  // current — making them at the bucket's first turn. Where the previous
  // holds no output of this bucket's (the bucket's first wave, the first
  // after a wave of another bucket, after a wave submitted in part), it is
  // reset: the grant's list clears it and puts it in the layout the wave
  // finds it in. Errors: the device's (making the copies, recording).
  [[nodiscard]] result<history_grant> assign(std::size_t b, const lane_recipe& recipe, gpu::device& device,
                                             wave_imports& imports);
  // Ends the holder's turn (wave `wave` of bucket `b`), hands it to the
  // next waiter.
  void settle(std::size_t b, std::uint64_t wave, history_outcome how) noexcept;

 private:
  // A bucket's copies: image pair k's at 2k and 2k + 1 of `images`, buffer
  // pair k's at 2k and 2k + 1 of `ranges` (in `buffers`).
  struct copies {
    std::unique_ptr<gpu::image_memory> images;
    std::unique_ptr<gpu::arena> buffers;
    std::vector<gpu::arena_range> ranges;
  };
  [[nodiscard]] static result<copies> make_copies(const lane_recipe& recipe, gpu::device& device);
  [[nodiscard]] result<gpu::command_list*> free_list(gpu::device& device);

  std::atomic<std::uint64_t> next_ticket_{0};
  std::mutex mutex_;                // the turn and its queue
  std::uint64_t serving_ = 0;       // the ticket whose turn it is
  history_waiter* head_ = nullptr;  // by ticket

  // The holder's alone (handed on under mutex_).
  std::vector<std::optional<copies>> buckets_;
  std::vector<std::unique_ptr<gpu::command_list>> resets_;
  std::size_t written_ = 0;         // the copy the last wave that submitted whole wrote
  std::uint64_t written_wave_ = 0;  // that wave; 0: no copy holds output
  std::size_t written_bucket_ = 0;  // its bucket
  std::size_t writing_ = 0;         // the copy the holder writes
};

}  // namespace ferrum::detail
