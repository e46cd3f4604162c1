// examples/async_pipeline/pipeline_stats.hpp — what the pipeline's requests
// did, per size class: how many, in which buckets, how long they took, and
// whether every result was right.
//
//   pipeline_stats stats(program);
//   stats.record(r, ec, report, latency, wrong_words);   // from any thread
//   const bool all_right = stats.print(std::cout, requests);
#pragma once

#include "request_encoder.hpp"

#include "ferrum/binding/compiled_program.hpp"
#include "ferrum/scheduler/wave.hpp"

#include <boost/system/error_code.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <mutex>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

class pipeline_stats {
 public:
  // For waves of `program`, which must outlive the stats.
  explicit pipeline_stats(const ferrum::compiled_program& program) noexcept : program_(&program) {}

  // Records request `r`'s outcome: its wave's error (none: completed) and
  // report, the time from the request's start to its wave's completion, and
  // the words of its result that were wrong. Any thread.
  void record(const request& r, const boost::system::error_code& ec, const ferrum::wave_report& report,
              std::chrono::steady_clock::duration latency, std::size_t wrong_words);

  // Records a request coroutine that ended with an exception. Any thread.
  void record_exception(std::exception_ptr e);

  // Prints a line per class, then the failures; returns whether all
  // `requested` requests completed with a right result. Once no request runs.
  [[nodiscard]] bool print(std::ostream& out, std::uint64_t requested) const;

 private:
  struct class_stats {
    std::uint64_t requests = 0;
    std::uint64_t right = 0;
    // (bucket capacity, bucket id) -> requests that ran in it, smallest first
    std::map<std::pair<std::uint64_t, std::string>, std::uint64_t> buckets;
    std::vector<double> latency_ms;
    std::vector<double> lane_wait_ms;
  };

  const ferrum::compiled_program* program_;
  mutable std::mutex mutex_;
  std::map<std::string, class_stats, std::less<>> classes_;
  std::vector<std::string> failures_;
};
