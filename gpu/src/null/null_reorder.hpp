// null_reorder.hpp (private) — null_device_options::reorder_unordered: runs a
// submission's commands in an order its barriers allow, the one farthest
// from submission order, so that a barrier missing or too narrow shows as
// wrong data; and counts the barriers whose accesses are too narrow.
//
// Within a submission (across its lists), between two commands that stand
// alone (host functions, timestamps, layout transitions: each runs after
// everything before it and before everything after it), each command gets a
// level:
// * a barrier B's level is the highest of level(p) + 1 over the earlier
//   commands p of a stage in B.before, and of level(B') over the earlier
//   barriers B' with a stage of B'.after in B.before (a dependency chain);
// * a command c's level is the highest level(B) over the barriers B before
//   it with a stage of c in B.after, else 0.
// * an event set S's level is a barrier's at S (the highest level(p) + 1
//   over the earlier commands p of a stage in S.before, and the chains);
//   a wait W for it is a barrier of level(S) (0 where the set came in an
//   earlier stretch) with S's `after`: it orders only the commands before
//   the set, not those between the set and the wait.
// Commands run by increasing level, each level's last to first: with full
// barriers, each stretch between two barriers last to first.
//
// Event errors (counted as access errors): a set of an event already
// signaled (Vulkan's synchronization2 then orders nothing), a wait for one
// nothing set.
//
// Access errors: where a barrier B orders a command p before a command c
// directly (p's stage in B.before, c's in B.after) and p writes memory c
// reaches (an overlapping range of one arena, an overlapping range of one
// image), some such barrier must have p's writes in B.before.accesses and
// c's accesses in B.after.accesses; a pair for which none has is counted
// (null_device::barrier_access_errors). Pairs ordered only through a chain
// are not checked; a wait counts for the pairs whose earlier command came
// before its set.
#pragma once

#include "null/null_command_list.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace ferrum::gpu::null_detail {

class null_reorderer {
 public:
  null_reorderer() {
    // Room for a typical submission from the start.
    entries_.reserve(256);
    barriers_.reserve(256);
    sets_.reserve(32);
  }

  // Runs the commands of `lists` (one submission); `report` is called with
  // each access error's text.
  template <class Report>
  void run(std::span<command_list* const> lists, Report&& report) noexcept {
    report_ = [](void* context, std::string what) noexcept { (*static_cast<Report*>(context))(std::move(what)); };
    report_context_ = &report;
    run_all(lists);
  }

 private:
  struct entry {
    std::uint64_t key;  // level, then the reverse of the position
    const command* c;
    std::size_t barriers_before;  // barriers of the stretch up to and including its own
  };
  // A barrier or an event wait of the stretch: its scope, and how many
  // entries its first scope reaches (a barrier: all before it; a wait: those
  // before its set).
  struct sync {
    barrier_scope scope;
    std::size_t first_end;
  };
  // An event set in the stretch: its level and the entries before it.
  struct event_set {
    const null_event* event;
    std::uint32_t level;
    std::size_t first_end;
  };
  [[nodiscard]] const event_set* set_of(const null_event* e) const noexcept;
  void add_event(const command& c) noexcept;
  void report(std::string what) noexcept;
  void run_all(std::span<command_list* const> lists) noexcept;
  void add(const command& c) noexcept;
  // Checks the access errors and runs the stretch's commands, then forgets them.
  void flush() noexcept;
  void check_accesses() noexcept;

  // Capacity kept across submissions: a warm queue allocates nothing.
  std::vector<entry> entries_;
  std::vector<sync> barriers_;
  std::vector<event_set> sets_;
  // Per stage bit: the highest level(p) + 1 of the stretch's commands of
  // it; the highest level of its barriers with it in `after`.
  std::array<std::uint32_t, stages::count> after_command_{};
  std::array<std::uint32_t, stages::count> barrier_level_{};
  void (*report_)(void*, std::string) noexcept = nullptr;
  void* report_context_ = nullptr;
};

}  // namespace ferrum::gpu::null_detail
