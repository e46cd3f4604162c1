// Tracing: the recorder's ring, the spans a scheduler records, and the Chrome
// trace and SVG timeline written from them.
#include "scheduler_support.hpp"

#include "ferrum/scheduler/trace.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

using ferrum::trace_span;
using ferrum::wave_phase;
using sched_test::fixture;

namespace {

trace_span span_of_wave(std::uint64_t wave) {
  trace_span s;
  s.wave = wave;
  return s;
}

// Runs `waves` waves of a fixture with a recorder, then destroys the
// scheduler (every span recorded).
struct traced_run {
  explicit traced_run(std::size_t waves, bool throwing_node = false) : f(4, 2, {}, options()) {
    auto encode = [throwing_node](const ferrum::encode_context& c) {
      if (throwing_node && c.node_index == 2) throw std::runtime_error("refused");
      test::require(c.commands.fill(c.slot, static_cast<std::uint32_t>(c.wave)));
    };
    std::vector<std::future<sched_test::outcome>> done;
    for (std::size_t i = 0; i < waves; ++i) done.push_back(sched_test::submit(*f.scheduler, encode));
    for (auto& d : done) outcomes.push_back(sched_test::get(d));
  }
  ferrum::scheduler_options options() {
    ferrum::scheduler_options o;
    o.encoder_tasks = 2;
    o.trace = &recorder;
    return o;
  }

  ferrum::trace_recorder recorder{4096};
  fixture f;
  std::vector<sched_test::outcome> outcomes;
};

}  // namespace

TEST_CASE("trace: the recorder keeps the newest spans, oldest first, and counts what it dropped", "[scheduler]") {
  ferrum::trace_recorder recorder(3);
  CHECK(recorder.capacity() == 3);
  CHECK(recorder.spans().empty());
  for (std::uint64_t wave = 1; wave <= 5; ++wave) recorder.record(span_of_wave(wave));
  const auto spans = recorder.spans();
  REQUIRE(spans.size() == 3);
  CHECK(spans[0].wave == 3);
  CHECK(spans[1].wave == 4);
  CHECK(spans[2].wave == 5);
  CHECK(recorder.recorded() == 5);
  CHECK(recorder.dropped() == 2);
  CHECK(recorder.kept() == 3);
}

TEST_CASE("trace: every wave records its six phases on its lane, back to back, and one span per node", "[scheduler]") {
  traced_run run(12);
  const auto spans = run.recorder.spans();
  std::map<std::uint64_t, std::vector<trace_span>> phases;
  std::map<std::uint64_t, std::set<std::uint32_t>> nodes;
  for (const trace_span& s : spans) {
    CHECK(s.begin <= s.end);
    REQUIRE(s.bucket != nullptr);
    CHECK(s.bucket->str() == "step@1x1x1");
    if (s.node == trace_span::no_node) {
      phases[s.wave].push_back(s);
    } else {
      CHECK(s.phase == wave_phase::encode);
      CHECK(s.thread >= 1);
      CHECK(nodes[s.wave].insert(s.node).second);
    }
  }
  REQUIRE(phases.size() == 12);
  for (const auto& outcome : run.outcomes) {
    REQUIRE_FALSE(outcome.ec);
    const auto& wave = phases[outcome.report.wave];
    REQUIRE(wave.size() == ferrum::wave_phase_count);
    for (std::size_t p = 0; p < wave.size(); ++p) {
      CHECK(wave[p].phase == static_cast<wave_phase>(p));
      CHECK(wave[p].lane == outcome.report.lane);
      CHECK(wave[p].end == *outcome.report.ended[p]);
      if (p > 0) CHECK(wave[p].begin == wave[p - 1].end);
    }
    CHECK(wave[0].begin == outcome.report.started);
    CHECK(nodes[outcome.report.wave] == std::set<std::uint32_t>{0, 1, 2, 3});
  }
}

TEST_CASE("trace: a wave whose encoder throws records the phases it reached and its nodes' spans", "[scheduler]") {
  traced_run run(1, true);
  REQUIRE(run.outcomes[0].ec == ferrum::errc::encoder_failed);
  std::vector<wave_phase> lane_phases;
  bool thrower_recorded = false;
  for (const trace_span& s : run.recorder.spans()) {
    if (s.node == trace_span::no_node) lane_phases.push_back(s.phase);
    thrower_recorded = thrower_recorded || s.node == 2;
  }
  CHECK(lane_phases == std::vector<wave_phase>{wave_phase::acquire, wave_phase::bind});
  CHECK(thrower_recorded);
}

TEST_CASE("trace: the Chrome trace has a track per lane and per thread, spans with wave, bucket and lane",
          "[scheduler]") {
  traced_run run(10);
  std::ostringstream out;
  ferrum::write_chrome_trace(out, run.recorder, run.f.plan);
  const auto trace = nlohmann::json::parse(out.str());
  std::map<std::string, int> names;
  std::map<std::pair<int, int>, std::vector<std::pair<double, double>>> tracks;
  std::set<std::string> thread_names;
  for (const auto& e : trace.at("traceEvents")) {
    if (e.at("ph") == "M") {
      if (e.at("name") == "thread_name") thread_names.insert(e.at("args").at("name").get<std::string>());
      continue;
    }
    CHECK(e.at("ph") == "X");
    CHECK(e.at("dur").get<double>() >= 0);
    const auto& args = e.at("args");
    CHECK(args.at("wave").get<int>() >= 1);
    CHECK(args.at("bucket") == "step@1x1x1");
    CHECK(args.at("lane").get<int>() < 2);
    std::string name = e.at("name");
    if (args.contains("node")) {
      CHECK(name == "encode node/n" + std::to_string(args.at("node").get<int>()));
      name = "encode <node>";
    }
    ++names[name];
    tracks[{e.at("pid").get<int>(), e.at("tid").get<int>()}].push_back(
        {e.at("ts").get<double>(), e.at("ts").get<double>() + e.at("dur").get<double>()});
  }
  for (const char* phase : {"acquire", "bind", "encode", "submit", "fence", "release"}) CHECK(names[phase] == 10);
  CHECK(names["encode <node>"] == 40);
  CHECK(thread_names.count("step@1x1x1 lane 0") == 1);
  CHECK(thread_names.count("step@1x1x1 lane 1") == 1);
  // A lane's spans never overlap (to the printed microsecond), so they nest
  // in every viewer.
  for (auto& [track, intervals] : tracks) {
    if (track.first != 1) continue;
    std::sort(intervals.begin(), intervals.end());
    for (std::size_t i = 1; i < intervals.size(); ++i) CHECK(intervals[i].first >= intervals[i - 1].second - 0.002);
  }
}

TEST_CASE("trace: the SVG timeline has a row per lane, a bar per span, an axis and a legend", "[scheduler]") {
  traced_run run(6);
  std::ostringstream out;
  ferrum::write_timeline_svg(out, run.recorder, run.f.plan);
  const std::string svg = out.str();
  CHECK(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0) == 0);
  CHECK(svg.find("</svg>") != std::string::npos);
  CHECK(svg.find(">step@1x1x1 lane 0</text>") != std::string::npos);
  CHECK(svg.find(">step@1x1x1 lane 1</text>") != std::string::npos);
  for (const char* phase : {"acquire", "bind", "encode", "submit", "fence", "release"})
    CHECK(svg.find(std::string(">") + phase + "</text>") != std::string::npos);
  CHECK(svg.find(">ms</text>") != std::string::npos);
  std::size_t bars = 0;
  for (std::size_t at = svg.find("<title>"); at != std::string::npos; at = svg.find("<title>", at + 1)) ++bars;
  CHECK(bars == run.recorder.spans().size());
}
