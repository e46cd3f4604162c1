// tools/progress_bar.hpp — one updating line on stderr while `ferrum run`
// runs, drawn only when stderr is a terminal (so logs and pipes stay clean).
//
//   ferrum::tools::progress_bar bar(1000);
//   bar.update(250);   // [#######.....................]  250/1000 waves
//   bar.finish();      // erases the line before the summary
#pragma once

#include <cstdint>

namespace ferrum::tools {

class progress_bar {
 public:
  // A bar for `total` waves; draws nothing unless stderr is a terminal.
  explicit progress_bar(std::uint64_t total) noexcept;
  progress_bar(const progress_bar&) = delete;
  progress_bar& operator=(const progress_bar&) = delete;
  ~progress_bar() { finish(); }

  // Redraws the line for `done` waves when that changed. Allocates nothing
  // (it runs while allocations are counted).
  void update(std::uint64_t done) noexcept;

  // Erases the line; later updates draw nothing.
  void finish() noexcept;

 private:
  std::uint64_t total_;
  std::uint64_t drawn_ = 0;
  bool enabled_;
};

}  // namespace ferrum::tools
