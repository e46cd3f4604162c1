// examples/frame_loop/scratch_directory.hpp — the example's tests: a
// directory of its own for each test case (ctest runs them in parallel),
// emptied first and removed after.
//
//   frame_loop::scratch_directory dir("png-writer-replaced");
//   write_png(dir.path / "frame.png", ...);
#pragma once

#include <unistd.h>

#include <filesystem>
#include <string>
#include <system_error>

namespace frame_loop {

struct scratch_directory {
  explicit scratch_directory(const std::string& name)
      : path(std::filesystem::temp_directory_path() /
             ("ferrum-frame-loop-" + name + "-" + std::to_string(::getpid()))) {
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~scratch_directory() {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
  scratch_directory(const scratch_directory&) = delete;
  scratch_directory& operator=(const scratch_directory&) = delete;
  std::filesystem::path path;
};

}  // namespace frame_loop
