// examples/async_pipeline/pipeline_stats.cpp — per-class counts, median
// latencies and failures of the pipeline's requests (pipeline_stats.hpp).
#include "pipeline_stats.hpp"

#include "ferrum/error.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdio>

namespace {

double milliseconds(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double, std::milli>(d).count();
}

// The median of `values` (0 when empty).
double p50(std::vector<double> values) {
  if (values.empty()) return 0;
  const auto middle = values.begin() + static_cast<std::ptrdiff_t>((values.size() - 1) / 2);
  std::nth_element(values.begin(), middle, values.end());
  return *middle;
}

std::string two_decimals(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f", value);
  return text;
}

}  // namespace

void pipeline_stats::record(const request& r, const boost::system::error_code& ec, const ferrum::wave_report& report,
                            std::chrono::steady_clock::duration latency, std::size_t wrong_words) {
  const std::string what = "request " + std::to_string(r.number) + " (" + std::string(r.size_class) + ", " +
                           std::to_string(r.words) + " words)";
  const std::lock_guard lock(mutex_);
  class_stats& stats = classes_[std::string(r.size_class)];
  ++stats.requests;
  if (const ferrum::compiled_bucket* bucket = report.bucket ? program_->find(*report.bucket) : nullptr) {
    const ferrum::bucket_capacity& dims = bucket->spec.dims;
    ++stats.buckets[{dims[0] * dims[1] * dims[2], bucket->id.str()}];
  }
  if (ec) {
    failures_.push_back(what + ": wave failed: " + ferrum::error_code_name(ec) + ": " + ec.message() +
                        (report.message.empty() ? "" : ": " + report.message));
    return;
  }
  if (wrong_words != 0) {
    failures_.push_back(what + ": result wrong in " + std::to_string(wrong_words) + " words");
    return;
  }
  ++stats.right;
  stats.latency_ms.push_back(milliseconds(latency));
  const auto acquired = report.ended[static_cast<std::size_t>(ferrum::wave_phase::acquire)];
  if (acquired) stats.lane_wait_ms.push_back(milliseconds(*acquired - report.started));
}

void pipeline_stats::record_exception(std::exception_ptr e) {
  std::string message = "unknown exception";
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& thrown) {
    message = thrown.what();
  } catch (...) {
  }
  const std::lock_guard lock(mutex_);
  failures_.push_back("a request coroutine threw: " + message);
}

bool pipeline_stats::print(std::ostream& out, std::uint64_t requested) const {
  const std::lock_guard lock(mutex_);
  std::uint64_t right = 0;
  for (const auto& [name, stats] : classes_) {
    out << name << ": " << stats.requests << " requests";
    for (auto bucket = stats.buckets.begin(); bucket != stats.buckets.end(); ++bucket)
      out << (bucket == stats.buckets.begin() ? " in " : ", ") << bucket->first.second << " (" << bucket->second << ")";
    out << "; p50 latency " << two_decimals(p50(stats.latency_ms)) << " ms (p50 wait for a lane "
        << two_decimals(p50(stats.lane_wait_ms)) << " ms); " << stats.right << " results right\n";
    right += stats.right;
  }
  // The first few failures tell what went wrong; the count, how often.
  constexpr std::size_t shown = 10;
  for (std::size_t i = 0; i < std::min(failures_.size(), shown); ++i) out << "FAILED: " << failures_[i] << '\n';
  if (failures_.size() > shown) out << "FAILED: " << failures_.size() - shown << " more requests\n";
  return failures_.empty() && right == requested;
}
