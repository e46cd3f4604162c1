// ferrum_process.hpp — runs the built `ferrum` (FERRUM_EXE) as a child
// process for end-to-end tests: its exit status, stdout and stderr.
//
//   const cli_test::command_result r = cli_test::run_ferrum({"run", plan, "--json"});
//   CHECK(r.status == 0);
//   const auto env = cli_test::run_ferrum({"run", plan}, {{"FERRUM_RUN_CORRUPT_WAVE", "3"}});
#pragma once

#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cli_test {

// A file in the temp directory holding `contents`, removed at scope exit.
class temp_file {
 public:
  explicit temp_file(std::string_view contents) {
    std::string pattern = (std::filesystem::temp_directory_path() / "ferrum_cli_test_XXXXXX").string();
    const int fd = ::mkstemp(pattern.data());
    REQUIRE(fd >= 0);
    path_ = pattern;
    for (std::size_t written = 0; written < contents.size();) {
      const ssize_t n = ::write(fd, contents.data() + written, contents.size() - written);
      REQUIRE(n > 0);
      written += static_cast<std::size_t>(n);
    }
    ::close(fd);
  }
  ~temp_file() {
    std::error_code ignored;
    std::filesystem::remove(path_, ignored);
  }
  temp_file(const temp_file&) = delete;
  temp_file& operator=(const temp_file&) = delete;

  [[nodiscard]] const std::string& path() const noexcept { return path_; }

 private:
  std::string path_;
};

struct command_result {
  int status = -1;  // the exit status; -1 when the command died of a signal
  std::string out;
  std::string err;
};

inline std::string shell_quote(std::string_view text) {
  std::string out = "'";
  for (const char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Runs the built `ferrum` with `args` and the variables `env` added to the
// environment; stdout through a pipe, stderr to a file, stdin from
// /dev/null (so neither stdout nor stderr is a terminal).
// The fence timeout a test's `ferrum run` gets where it names none and
// injects no hang (whose tests name a short one, as a hang lasts five): the
// checking encoder's work on the null device under tsan, on two cores busy
// with the other tests, once took 12 s a wave, past the 5 s default. Only
// injected faults may fail a wave in the tests.
inline constexpr const char* test_fence_timeout_ms = "300000";

inline command_result run_ferrum(const std::vector<std::string>& args,
                                 const std::vector<std::pair<std::string, std::string>>& env = {}) {
  const temp_file err_file("");
  std::string command;
  for (const auto& [name, value] : env) command += name + "=" + shell_quote(value) + " ";
  command += shell_quote(FERRUM_EXE);
  for (const std::string& arg : args) command += " " + shell_quote(arg);
  const auto mentions = [&](std::string_view text) {
    return std::any_of(args.begin(), args.end(), [&](const std::string& a) { return a.find(text) != a.npos; });
  };
  if (!args.empty() && args.front() == "run" && !mentions("--fence-timeout") && !mentions("hang:"))
    command += std::string(" --fence-timeout ") + test_fence_timeout_ms;
  command += " 2>" + shell_quote(err_file.path()) + " </dev/null";

  command_result result;
  std::FILE* pipe = ::popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  char buffer[4096];
  for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) result.out.append(buffer, n);
  const int wait_status = ::pclose(pipe);
  REQUIRE(wait_status != -1);
  if (WIFEXITED(wait_status)) result.status = WEXITSTATUS(wait_status);
  result.err = read_file(err_file.path());
  return result;
}

// A plan with one workspace resource and no binding resources: it compiles,
// but the scheduler has nothing to bind.
inline constexpr const char* workspace_only_plan = R"({
  "format": "ferrum.plan.v1",
  "nodes": [ { "id": "node/only", "resources": ["resource/scratch"] } ],
  "resources": [
    { "id": "resource/scratch", "pool": "pool/scratch", "kind": "workspace",
      "demand": { "base": 0, "per_unit": 256, "dimension": 1 }, "alignment": 256,
      "lifetime": "invocation", "usage": "storage", "element": "f32",
      "storage": { "allocator": "linear-arena", "view": "contiguous",
                   "contract": "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb" } } ],
  "buckets": [ { "class": "step", "capacity": [1, 4, 1],
                 "budgets": [ { "pool": "pool/scratch", "min": 0, "max": 4096 } ] } ],
  "lanes": 2,
  "budget_bytes": 65536
})";

inline std::string example_plan(std::string_view name) {
  return std::string(FERRUM_SOURCE_DIR) + "/examples/plans/" + std::string(name);
}

// Whether `text` is exactly one line (ending in a newline).
inline bool one_line(const std::string& text) {
  return !text.empty() && text.back() == '\n' && std::count(text.begin(), text.end(), '\n') == 1;
}

inline bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

}  // namespace cli_test
