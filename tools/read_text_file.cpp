#include "read_text_file.hpp"

#include <cerrno>
#include <cstdio>
#include <memory>

#include <sys/stat.h>

namespace ferrum::tools {
namespace {

struct file_closer {
  void operator()(std::FILE* f) const noexcept { std::fclose(f); }
};

boost::system::error_code last_system_error() noexcept {
  // Some C libraries fail a read without setting errno; EIO is the honest rest.
  const int value = errno != 0 ? errno : EIO;
  return {value, boost::system::system_category()};
}

}  // namespace

boost::system::result<std::string> read_text_file(const std::string& path) {
  errno = 0;
  const std::unique_ptr<std::FILE, file_closer> file(std::fopen(path.c_str(), "rb"));
  if (!file) return last_system_error();

  std::string text;
  // A regular file's size, so that a plan of hundreds of megabytes is read
  // into one allocation rather than through repeated growth.
  if (struct stat info{}; ::fstat(::fileno(file.get()), &info) == 0 && S_ISREG(info.st_mode))
    text.reserve(static_cast<std::size_t>(info.st_size));
  char buffer[1 << 16];
  for (;;) {
    errno = 0;
    const std::size_t n = std::fread(buffer, 1, sizeof buffer, file.get());
    text.append(buffer, n);
    if (n < sizeof buffer) break;
  }
  // fopen succeeds on a directory on Linux; the read is what fails (EISDIR).
  if (std::ferror(file.get()) != 0) return last_system_error();
  return text;
}

}  // namespace ferrum::tools
