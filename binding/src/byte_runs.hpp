// byte_runs.hpp (private) — disjoint runs of lane bytes, each with a state
// of the caller's: what the sweeps over a bucket's uses keep per byte
// (barrier_scopes.cpp, node_order.cpp; critical_path.cpp splits its own runs
// with split_run).
#pragma once

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <map>

namespace ferrum::detail {

// Splits the run of `runs` (begin -> a run with an `end`) holding `at`, if
// any, into two at `at`.
template <class Run>
void split_run(std::map<std::uint64_t, Run>& runs, std::uint64_t at) {
  auto it = runs.upper_bound(at);
  if (it == runs.begin()) return;
  --it;
  if (it->first == at || it->second.end <= at) return;
  Run tail = it->second;
  it->second.end = at;
  runs.emplace_hint(std::next(it), at, tail);
}

// Disjoint runs of bytes: begin -> (end, state). Bytes no use touched have
// no run; a run is made with a default State when a use first touches it.
template <class State>
class byte_runs {
 public:
  // Calls f(State&) for every run inside [begin, end), making runs for the
  // gaps and splitting runs at begin and end first.
  template <class F>
  void visit(std::uint64_t begin, std::uint64_t end, F&& f) {
    split_run(runs_, begin);
    split_run(runs_, end);
    std::uint64_t at = begin;
    auto it = runs_.lower_bound(begin);
    while (at < end) {
      if (it == runs_.end() || it->first > at) {
        const std::uint64_t gap_end = it == runs_.end() ? end : std::min(end, it->first);
        it = runs_.emplace_hint(it, at, run{gap_end, {}});
      }
      f(it->second.state);
      at = it->second.end;
      ++it;
    }
  }

 private:
  struct run {
    std::uint64_t end = 0;
    State state;
  };
  std::map<std::uint64_t, run> runs_;
};

}  // namespace ferrum::detail
