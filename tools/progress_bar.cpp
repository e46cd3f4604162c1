#include "progress_bar.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace ferrum::tools {
namespace {

void write_all(const char* text, std::size_t size) noexcept {
  while (size > 0) {
    const ssize_t n = ::write(STDERR_FILENO, text, size);
    if (n <= 0) return;  // a progress bar is not worth an error
    text += n;
    size -= static_cast<std::size_t>(n);
  }
}

}  // namespace

progress_bar::progress_bar(std::uint64_t total) noexcept : total_(total), enabled_(::isatty(STDERR_FILENO) == 1) {}

void progress_bar::update(std::uint64_t done) noexcept {
  if (!enabled_ || done == drawn_ || total_ == 0) return;
  drawn_ = done;
  constexpr std::size_t width = 40;
  const auto filled = static_cast<std::size_t>(done >= total_ ? width : done * width / total_);
  char bar[width + 1];
  std::memset(bar, '#', filled);
  std::memset(bar + filled, '.', width - filled);
  bar[width] = '\0';
  char line[160];
  const int n = std::snprintf(line, sizeof line, "\r[%s] %llu/%llu waves", bar, static_cast<unsigned long long>(done),
                              static_cast<unsigned long long>(total_));
  if (n > 0) write_all(line, std::min(static_cast<std::size_t>(n), sizeof line - 1));
}

void progress_bar::finish() noexcept {
  if (!enabled_) return;
  enabled_ = false;
  // Carriage return and erase-line: the summary starts on a clean line.
  static constexpr char erase[] = "\r\033[K";
  write_all(erase, sizeof erase - 1);
}

}  // namespace ferrum::tools
