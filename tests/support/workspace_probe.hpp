// workspace_probe.hpp — proves by data, on any device, that a lane's memory
// is what the compiled layout says: every pool backed, interval resources
// sharing bytes only where their live intervals are disjoint, persistent
// resources keeping their bytes across the waves of a lane.
//
//   std::mt19937_64 rng(1);
//   const ferrum::plan p = workspace_probe::generate(rng, {.nodes = 8});
//   workspace_probe::outcome o = workspace_probe::run(device, p, 6);
//   CHECK(o.aliased_words > 0);
//
// Every node, for each resource it lists (binding slot included), in order:
// checks on the device that the resource still holds its previous user's
// pattern (within a wave) or, for a persistent resource's first user, its
// last user's pattern of the lane's previous wave; copies an invocation
// resource's bytes at its first use to a snapshot arena; writes its own
// pattern, unique to (wave, node, resource). The waves run one after another,
// so the host replays every write on a model of each lane: each snapshot
// must equal the model at that point (where the layout aliases, the bytes
// of the resource used before; elsewhere, what the lane held), and after the
// last wave every lane must equal its model word for word. The probe fills
// and reads the lanes through a list granted all of a lane's memory (a GPU
// fill, a copy into a host arena), never through host bytes: device memory
// has none, so it runs alike on both layouts (discrete_layout).
#pragma once

#include "gpu_test_support.hpp"
#include "held_lanes.hpp"
#include "plan_builder.hpp"

#include "ferrum/gpu/builtin_kernels.hpp"
#include "ferrum/gpu/device.hpp"
#include "ferrum/scheduler/scheduler.hpp"

#include <boost/asio/thread_pool.hpp>
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace workspace_probe {

struct shape {
  std::size_t nodes = 8;
  std::size_t interval_resources = 12;   // in pool/w, liveness interval
  std::size_t persistent_resources = 2;  // in pool/history, conservative
  std::uint32_t lanes = 2;
};

// A plan of `s.nodes` nodes, each owning a 16-byte binding slot; interval
// resources used by random runs of nodes (both ends, sometimes the middle);
// persistent resources used by one or two random nodes. Sizes are whole words
// and alignments at least 4, so that every byte of a resource is checked.
inline ferrum::plan generate(std::mt19937_64& rng, shape s) {
  ferrum::test::plan_builder builder;
  for (std::size_t n = 0; n < s.nodes; ++n)
    builder.binding_node("node/" + std::to_string(n), "resource/slot." + std::to_string(n), 16);
  std::uniform_int_distribution<std::size_t> node_pick(0, s.nodes - 1);
  std::uniform_int_distribution<std::uint64_t> words(1, 64);
  std::uniform_int_distribution<int> align_log(2, 8);
  for (std::size_t r = 0; r < s.interval_resources; ++r) {
    const std::string name = "resource/w." + std::to_string(r);
    std::size_t a = node_pick(rng);
    std::size_t b = node_pick(rng);
    if (a > b) std::swap(a, b);
    builder.resource(ferrum::test::workspace_resource(name, "pool/w", ferrum::resource_demand::fixed(4 * words(rng)),
                                                      std::uint64_t{1} << align_log(rng)));
    builder.use(a, name);
    if (b != a) builder.use(b, name);
    if (b > a + 1 && rng() % 2 != 0) builder.use((a + b) / 2, name);
  }
  for (std::size_t r = 0; r < s.persistent_resources; ++r) {
    const std::string name = "resource/history." + std::to_string(r);
    ferrum::resource_descriptor d =
        ferrum::test::workspace_resource(name, "pool/history", ferrum::resource_demand::fixed(4 * words(rng)), 16);
    d.lifetime = ferrum::allocation_lifetime::persistent;
    builder.resource(d);
    const std::size_t a = node_pick(rng);
    const std::size_t b = node_pick(rng);
    builder.use(a, name);
    if (b != a) builder.use(b, name);
  }
  return builder.interval("pool/w")
      .bucket("step", {1, 1, 1}, {{"pool/bindings", 0, 1 << 20}, {"pool/history", 0, 1 << 20}, {"pool/w", 0, 1 << 20}})
      .lanes(s.lanes)
      .budget(std::uint64_t{1} << 30)
      .build();
}

// One resource a node lists, as the probe sees it.
struct use {
  std::size_t node = 0;
  std::size_t position = 0;  // in the node's list
  std::size_t resource = 0;  // plan index
  std::size_t offset = 0;    // in the lane, from the compiled program
  std::size_t size = 0;
  ferrum::memory_class memory = ferrum::memory_class::device;  // its pool's
  std::size_t window_begin = 0;                                // of its class's window
  bool persistent = false;
  std::optional<std::array<std::size_t, 2>> previous;         // its previous user in a wave
  std::optional<std::array<std::size_t, 2>> persistent_last;  // a persistent first use: its last user
  std::optional<std::size_t> snapshot;                        // an invocation first use: its snapshot offset
};

// What the probe saw across a run.
struct outcome {
  std::size_t aliased_words = 0;  // snapshot words that held another resource's pattern
  std::size_t persistent_first_uses_checked = 0;
  std::uint64_t waves = 0;
};

// The uses of `p`'s nodes in bucket `bucket` of `program`, node by node.
inline std::vector<use> uses_of(const ferrum::plan& p, const ferrum::compiled_program& program,
                                const ferrum::compiled_bucket& bucket, std::size_t& snapshot_bytes) {
  std::map<std::string, std::array<std::size_t, 4>> place;  // offset, size, plan index, domain
  for (std::size_t d = 0; d < program.domains.size(); ++d)
    for (std::size_t m = 0; m < program.domains[d].members.size(); ++m) {
      const ferrum::projection& at = bucket.capacity_layouts[d].projections[m];
      place[at.resource.str()] = {static_cast<std::size_t>(bucket.pool_offsets[d] + at.offset),
                                  static_cast<std::size_t>(at.capacity), program.domains[d].members[m], d};
    }
  std::map<std::string, std::array<std::size_t, 2>> last;
  for (std::size_t n = 0; n < p.nodes.size(); ++n)
    for (std::size_t i = 0; i < p.nodes[n].resources.size(); ++i) last[p.nodes[n].resources[i].str()] = {n, i};
  std::vector<use> uses;
  std::map<std::string, std::array<std::size_t, 2>> previous;
  snapshot_bytes = 0;
  for (std::size_t n = 0; n < p.nodes.size(); ++n)
    for (std::size_t i = 0; i < p.nodes[n].resources.size(); ++i) {
      const std::string& id = p.nodes[n].resources[i].str();
      const auto [offset, size, index, domain] = place.at(id);
      const ferrum::memory_class memory = program.domains[domain].memory;
      use u{n,
            i,
            index,
            offset,
            size,
            memory,
            static_cast<std::size_t>(bucket.window(memory).begin),
            p.resources[index].lifetime == ferrum::allocation_lifetime::persistent,
            {},
            {},
            {}};
      if (auto before = previous.find(id); before != previous.end()) {
        u.previous = before->second;
      } else if (u.persistent) {
        u.persistent_last = last.at(id);
      } else {
        u.snapshot = snapshot_bytes;
        snapshot_bytes += size;
      }
      previous[id] = {n, i};
      uses.push_back(u);
    }
  return uses;
}

// The device side: each node's checks, snapshots and writes (see above).
// Called on the scheduler's threads: reports trouble by throwing, which
// fails the wave with encoder_failed.
class encoder {
 public:
  encoder(ferrum::gpu::device& device, const std::vector<use>& uses, std::size_t nodes, std::size_t max_listed,
          ferrum::gpu::arena& snapshots, ferrum::gpu::arena& counter, std::uint64_t waves)
      : uses_(&uses),
        nodes_(nodes),
        max_listed_(max_listed),
        snapshots_(&snapshots),
        counter_(&counter),
        previous_waves_(static_cast<std::size_t>(waves) + 1) {
    writer_ = std::move(device.create_kernel(ferrum::gpu::builtin::write_pattern()).value());
    checker_ = std::move(device.create_kernel(ferrum::gpu::builtin::check_pattern()).value());
  }

  [[nodiscard]] std::uint32_t seed(std::uint64_t wave, std::size_t node, std::size_t position) const noexcept {
    return static_cast<std::uint32_t>((wave * nodes_ + node) * max_listed_ + position);
  }

  // What wave `wave`'s encoders were told ran on their lane before.
  [[nodiscard]] std::uint64_t previous_wave_seen(std::uint64_t wave) const {
    return previous_waves_.at(static_cast<std::size_t>(wave)).load();
  }

  void operator()(const ferrum::encode_context& c) const {
    if (c.wave >= previous_waves_.size()) throw std::runtime_error("more waves than the probe was made for");
    previous_waves_[static_cast<std::size_t>(c.wave)].store(c.lane_previous_wave);
    const auto ok = [](ferrum::result<void> r) {
      if (!r) throw std::runtime_error(r.error().what());
    };
    for (const use& u : *uses_) {
      if (u.node != c.node_index) continue;
      if (u.position >= c.resources.size()) throw std::runtime_error("fewer resources handed out than listed");
      const ferrum::gpu::arena_range range = c.resources[u.position].range;
      if (range.arena == nullptr || range.arena->cls() != u.memory || range.offset + u.window_begin != u.offset ||
          range.size != u.size)
        throw std::runtime_error("resource handed out at another place than compiled");
      const auto check = [&](std::uint32_t expected) {
        const std::array<std::uint32_t, 1> push{expected};
        ok(c.commands.dispatch(*checker_, range, counter_->whole(), push));
      };
      if (u.previous) check(seed(c.wave, (*u.previous)[0], (*u.previous)[1]));
      if (u.persistent_last && c.lane_previous_wave != 0)
        check(seed(c.lane_previous_wave, (*u.persistent_last)[0], (*u.persistent_last)[1]));
      if (u.snapshot) ok(c.commands.copy(range, snapshots_->range(*u.snapshot, u.size)));
      const std::array<std::uint32_t, 1> push{seed(c.wave, c.node_index, u.position)};
      ok(c.commands.dispatch(*writer_, range, {}, push));
    }
  }

 private:
  const std::vector<use>* uses_;
  std::size_t nodes_;
  std::size_t max_listed_;
  ferrum::gpu::arena* snapshots_;
  ferrum::gpu::arena* counter_;
  std::unique_ptr<ferrum::gpu::kernel> writer_;
  std::unique_ptr<ferrum::gpu::kernel> checker_;
  mutable std::vector<std::atomic<std::uint64_t>> previous_waves_;  // by wave id
};

inline std::uint32_t word_of(std::span<const std::byte> bytes, std::size_t word) {
  std::uint32_t value = 0;
  std::memcpy(&value, bytes.data() + word * 4, 4);
  return value;
}

// Records `commands` into a list granted all of lane `l`'s memory, submits it
// and waits for it. The lane must be held, and no wave's.
template <class Record>
void on_lane(ferrum::gpu::device& device, const ferrum::lane_contents& l, Record commands) {
  auto list = ferrum::test::require(device.create_command_list());
  list->grant(l.windows());
  ferrum::test::require_reached(device.queue().timeline(), ferrum::test::submit(device, *list, commands));
}

// Lane `l`'s memory as one address space of `bucket.lane_bytes()` bytes,
// copied by the GPU into a host arena: each window at its begin; what lies
// between windows is no lane's memory and reads 0.
inline std::vector<std::byte> lane_image(ferrum::gpu::device& device, const ferrum::compiled_bucket& bucket,
                                         const ferrum::lane_contents& l) {
  auto image = ferrum::test::require(device.create_arena(static_cast<std::size_t>(bucket.lane_bytes())));
  on_lane(device, l, [&](ferrum::gpu::command_list& list) {
    for (ferrum::memory_class c : ferrum::window_order)
      if (const ferrum::gpu::arena* arena = l.arena_of(c))
        ferrum::test::require(
            list.copy(arena->whole(), image->range(static_cast<std::size_t>(bucket.window(c).begin), arena->size())));
  });
  return {image->bytes().begin(), image->bytes().end()};
}

// Whether lane word `word` lies in one of the bucket's windows.
inline bool in_window(const ferrum::compiled_bucket& bucket, std::size_t word) {
  return std::any_of(bucket.windows.begin(), bucket.windows.end(), [&](const ferrum::memory_window& w) {
    return word * 4 >= w.begin && word * 4 < w.begin + w.size;
  });
}

// Runs `waves` waves of `p` one after another on `device` and checks them
// (Catch2 assertions, on the calling thread).
inline outcome run(ferrum::gpu::device& device, const ferrum::plan& p, std::uint64_t waves) {
  const auto program = std::make_shared<const ferrum::compiled_program>(ferrum::test::compile_ok(p));
  REQUIRE(program->buckets.size() == 1);
  const ferrum::compiled_bucket& bucket = program->buckets[0];
  std::size_t snapshot_bytes = 0;
  const std::vector<use> uses = uses_of(p, *program, bucket, snapshot_bytes);
  std::size_t max_listed = 1;
  for (const ferrum::plan_node& n : p.nodes) max_listed = std::max(max_listed, n.resources.size());

  boost::asio::thread_pool threads(2);
  auto made = ferrum::scheduler::create(program, device, threads.get_executor(), {});
  if (!made) FAIL(made.error().what());
  std::unique_ptr<ferrum::scheduler> scheduler = std::move(*made);
  ferrum::lane_pool& pool = *scheduler->pools()[0];
  // Held (lanes of no wave) while the probe fills them, and again at the end.
  std::vector<ferrum::held_lane> lanes = ferrum::test::hold_every_lane(pool);
  for (const ferrum::held_lane& l : lanes) REQUIRE(l);

  // Admission's figure covers what each lane really allocates: an arena
  // per window.
  CHECK(program->admitted_bytes == program->lanes * bucket.lane_bytes());
  for (const auto& l : lanes) {
    std::uint64_t allocated = 0;
    for (ferrum::memory_class c : ferrum::memory_classes) {
      const ferrum::gpu::arena* arena = l->arena_of(c);
      CHECK((arena == nullptr ? 0 : arena->size()) == bucket.window(c).size);
      allocated += arena == nullptr ? 0 : arena->size();
    }
    CHECK(allocated <= bucket.lane_bytes());
  }

  auto snapshots = device.create_arena(std::max<std::size_t>(snapshot_bytes, 4)).value();
  auto counter = device.create_arena(4).value();
  const encoder encode(device, uses, p.nodes.size(), max_listed, *snapshots, *counter, waves);

  // Each lane's model, word by word: its pattern and which resource wrote
  // it (none: the fill below). Lanes start filled with a word no pattern is
  // likely to produce.
  constexpr std::uint32_t fill = 0x5a5a5a5au;
  constexpr std::size_t nobody = ~std::size_t{0};
  std::vector<std::vector<std::uint32_t>> model(lanes.size());
  std::vector<std::vector<std::size_t>> writer(lanes.size());
  // A staged upload arena's GPU memory is its host bytes again at every
  // wave's start (the lane's stage-in copy): the host's are filled too, and
  // the model's upload window goes back to them before each wave.
  const ferrum::memory_window upload = bucket.window(ferrum::memory_class::upload);
  std::vector<bool> staged_upload(lanes.size());
  for (std::size_t l = 0; l < lanes.size(); ++l) {
    ferrum::gpu::arena* staged = lanes[l]->arena_of(ferrum::memory_class::upload);
    staged_upload[l] = staged != nullptr && staged->staged();
    if (staged_upload[l]) {
      std::span<std::byte> bytes = staged->bytes();
      for (std::size_t at = 0; at + 4 <= bytes.size(); at += 4) std::memcpy(bytes.data() + at, &fill, 4);
    }
    on_lane(device, *lanes[l], [&](ferrum::gpu::command_list& list) {
      for (const ferrum::gpu::arena_range& window : lanes[l]->windows()) ferrum::test::require(list.fill(window, fill));
    });
    model[l].assign(static_cast<std::size_t>(bucket.lane_bytes()) / 4, fill);
    writer[l].assign(model[l].size(), nobody);
  }
  lanes.clear();

  outcome o;
  std::vector<std::uint64_t> previous_wave(model.size(), 0);  // the last wave on each lane
  for (std::uint64_t w = 0; w < waves; ++w) {
    std::promise<std::pair<boost::system::error_code, ferrum::wave_report>> done;
    auto result = done.get_future();
    scheduler->async_submit({"step", {1, 1, 1}}, encode, [&done](boost::system::error_code ec, ferrum::wave_report r) {
      done.set_value({ec, std::move(r)});
    });
    REQUIRE(result.wait_for(std::chrono::seconds(60)) == std::future_status::ready);
    const auto [ec, report] = result.get();
    INFO(report.message);
    REQUIRE_FALSE(ec);
    ++o.waves;
    REQUIRE(word_of(counter->bytes(), 0) == 0);  // no live or persistent check failed
    // The encoders were told which wave ran on the lane before.
    CHECK(encode.previous_wave_seen(report.wave) == previous_wave[report.lane]);

    // Replay the wave's writes on its lane's model, in the device's order.
    std::vector<std::uint32_t>& words = model[report.lane];
    std::vector<std::size_t>& owners = writer[report.lane];
    if (staged_upload[report.lane]) {
      for (std::size_t i = upload.begin / 4; i < (upload.begin + upload.size) / 4; ++i) {
        words[i] = fill;
        owners[i] = nobody;
      }
    }
    for (const use& u : uses) {
      const std::size_t first = u.offset / 4;
      const std::size_t count = u.size / 4;
      if (u.persistent_last && previous_wave[report.lane] != 0) ++o.persistent_first_uses_checked;
      if (u.snapshot) {
        for (std::size_t i = 0; i < count; ++i) {
          INFO("wave " << report.wave << ", node " << u.node << ", resource " << p.resources[u.resource].id.str()
                       << ", word " << i);
          REQUIRE(word_of(snapshots->bytes(), *u.snapshot / 4 + i) == words[first + i]);
          if (owners[first + i] != nobody && owners[first + i] != u.resource) ++o.aliased_words;
        }
      }
      const std::uint32_t s = encode.seed(report.wave, u.node, u.position);
      for (std::size_t i = 0; i < count; ++i) {
        words[first + i] = ferrum::gpu::builtin::pattern_word(s, static_cast<std::uint32_t>(i));
        owners[first + i] = u.resource;
      }
    }
    previous_wave[report.lane] = report.wave;
  }
  // The lanes hold exactly what the model says: nothing wrote outside the
  // resources, nothing was lost.
  lanes = ferrum::test::hold_every_lane(pool);
  for (std::size_t l = 0; l < lanes.size(); ++l) {
    REQUIRE(lanes[l]);
    const std::vector<std::byte> image = lane_image(device, bucket, *lanes[l]);
    for (std::size_t i = 0; i < model[l].size(); ++i) {
      if (!in_window(bucket, i)) continue;
      INFO("lane " << l << ", word " << i);
      REQUIRE(word_of(image, i) == model[l][i]);
    }
  }
  lanes.clear();
  scheduler.reset();
  threads.join();
  return o;
}

}  // namespace workspace_probe
