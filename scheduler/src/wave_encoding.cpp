// wave_encoding.cpp — a wave's bind and encode steps: each node's encode
// context on the held lane, the barrier each node's list opens with, the
// encoders run in chunks (wave_impl.cpp awaits them), and the first failure.
#include "program_lanes.hpp"
#include "wave_impl.hpp"

#include <boost/asio/co_spawn.hpp>

#include <array>
#include <exception>
#include <new>
#include <span>
#include <string>

namespace ferrum::detail {

namespace asio = boost::asio;
using boost::system::error_code;

result<void> wave::close_wave(std::size_t node, gpu::command_list& list) const {
  // The list the wave submits last ends with a barrier over every stage:
  // what the wave wrote is then visible to whatever the queue runs next —
  // the lane's next wave reuses its bytes (aliased ones under other
  // names). The host's wait for the fence and the next submission order
  // them too, through the host's memory domain, which Debian's validation
  // layers do not follow; the derived barriers are only as wide as the
  // wave's own hazards. Before scopes, the next wave's first full barrier
  // waited for this one all the same.
  // The events of split barriers are unsignaled again after it, for the
  // next wave to set (a set of a signaled one orders nothing); the next
  // wave comes after the host saw this one's fence.
  // The last live node in submission order: in level order, where culled
  // nodes come last, the one before them (a culled node is never encoded,
  // so some node is live here).
  const compiled_program& program = program_->program();
  const std::size_t last =
      reordered() ? bucket_->lane.order[program.node_count - program.culled_nodes - 1] : program.last_live_node;
  if (node != last) return {};
  if (auto r = list.barrier(); !r) return r;
  if (const split_barriers* split = barriers().split; split != nullptr)
    for (std::size_t e = 0; e < split->events.size(); ++e)
      if (auto r = list.reset_event(held_->event(e)); !r) return r;
  return {};
}

result<void> wave::wait_events(std::size_t node, gpu::command_list& list) const {
  const split_barriers* split = barriers().split;
  if (split == nullptr) return {};
  for (const std::size_t e : split->node_waits(node))
    if (auto r = list.wait_event(held_->event(e), split->events[e].scope); !r) return r;
  return {};
}

result<void> wave::set_event(std::size_t node, gpu::command_list& list) const {
  const split_barriers* split = barriers().split;
  if (split == nullptr) return {};
  if (const std::size_t e = split->set_by(node); e != split_barriers::no_event)
    return list.set_event(held_->event(e), split->events[e].scope);
  return {};
}

bool wave::reordered() const noexcept {
  const bool one_queue = program_->submissions(device_ != nullptr ? device_->index : 0).one_queue();
  return node_barriers::reordered(bucket_, one_queue, host_.options().order);
}

node_barriers wave::barriers() const noexcept {
  const bool one_queue = program_->submissions(device_ != nullptr ? device_->index : 0).one_queue();
  return node_barriers::of(bucket_, one_queue, reordered(), host_.options().barriers, host_.options().split_barriers);
}

void wave::bind_nodes() noexcept {
  // The lane's binding was checked once, when the lane was made (its arena
  // never moves): binding a wave is handing each node its part of the lane.
  // Replaying needs a complete, submitted recording; recording afresh leaves
  // none until this wave submits.
  lane_contents& l = *held_;
  if (!imports_.empty()) {
    // The buffers come first, then the images (resolve_imports).
    std::array<gpu::arena_range, max_wave_imports> ranges{};
    std::array<imported_image, max_wave_images> images{};
    std::size_t buffers = 0;
    std::size_t given_images = 0;
    for (const wave_import& i : imports_) {
      if (i.image == nullptr)
        ranges[buffers++] = i.range;
      else
        images[given_images++] = {{}, i.image, i.layout};
    }
    if (buffers != 0) held_.import(std::span(ranges).first(buffers));
    if (given_images != 0) held_.import_images(std::span(images).first(given_images));
  }
  replay_ = held_.take_recording(host_.options().replay);
  const std::uint64_t previous_wave = held_.previous_wave();
  const compiled_program& program = program_->program();
  for (std::size_t node = 0; node < contexts_.size(); ++node) {
    // A culled node gets no context: its encoder is never called.
    if (program.culled(node)) continue;
    const std::optional<node_binding>& binding = l.node(node);
    contexts_[node].emplace(encode_context{node, binding ? &*binding : nullptr, l.slot(node), l.list(node), id_,
                                           bucket_->id, held_.index(), replay_, &cancel_started_, l.resources(node),
                                           previous_wave, l.state(), l.node_images(node), &l, history_wave_});
  }
}

void wave::encode_chunk(std::size_t chunk) noexcept {
  const std::size_t nodes = contexts_.size();
  const std::size_t first = chunk * nodes / chunk_count_;
  const std::size_t last = (chunk + 1) * nodes / chunk_count_;
  const lane_contents& l = *held_;
  const trace_recorder* trace = host_.options().trace;
  const node_barriers barriers = this->barriers();
  const compiled_program& program = program_->program();
  const bool levels = reordered();
  for (std::size_t node = first; node < last; ++node) {
    // A failure or cancellation elsewhere in the wave stops the rest.
    if (encode_failed_.load(std::memory_order_relaxed) || cancel_started_.load(std::memory_order_relaxed)) return;
    // A culled node's list is never begun nor submitted.
    if (program.culled(node)) continue;
    const encode_context& context = *contexts_[node];
    gpu::command_list& list = context.commands;
    if (!replay_) {
      if (auto r = barriers.opens(node) ? list.begin(barriers.scope(node)) : list.begin(gpu::list_opening::by_hazards);
          !r)
        return fail_encoding(r.error().code, node, r.error().what());
      // The node's layout changes go into the barrier it opens with; in
      // level order, the first node of a level makes its whole level's.
      const lane_recipe& recipe = bucket_->lane;
      const bool opens_level = levels && recipe.level_nodes(node).front() == node;
      for (const std::size_t m : levels ? recipe.level_nodes(node) : std::span<const std::size_t>(&node, 1)) {
        if (levels && !opens_level) break;
        for (const gpu::layout_change& t : l.transitions(m))
          if (auto r = list.transition(*t.image, t.from, t.to, t.range); !r)
            return fail_encoding(r.error().code, node, r.error().what());
      }
      if (auto r = wait_events(node, list); !r) return fail_encoding(r.error().code, node, r.error().what());
      if (auto r = wave_gpu_time::write(l, list, node, false); !r)
        return fail_encoding(r.error().code, node, r.error().what());
      if (auto r = write_culled_times(l, list, node); !r) return fail_encoding(r.error().code, node, r.error().what());
    }
    const trace_clock started = trace_start(trace);
    if (encode_.spawn != nullptr) {
      // A coroutine encoder joins the fan-in as one more task; its context
      // lives in the wave until it returns.
      chunks_left_.fetch_add(1, std::memory_order_relaxed);
      asio::co_spawn(host_.executor(), encode_.spawn(encode_, context),
                     [self = this, node, &l, &list, started](std::exception_ptr thrown) noexcept {
                       self->trace_node(node, started);
                       if (thrown) {
                         self->encoder_threw(node, thrown);
                       } else if (self->replay_) {
                         // Submitted as recorded before.
                       } else if (auto s = self->set_event(node, list); !s) {
                         self->fail_encoding(s.error().code, node, s.error().what());
                       } else if (auto r = wave_gpu_time::write(l, list, node, true); !r) {
                         self->fail_encoding(r.error().code, node, r.error().what());
                       } else if (auto c = self->close_wave(node, list); !c) {
                         self->fail_encoding(c.error().code, node, c.error().what());
                       } else if (auto e = list.end(); !e) {
                         self->fail_encoding(e.error().code, node, e.error().what());
                       }
                       if (self->chunks_left_.fetch_sub(1, std::memory_order_acq_rel) == 1)
                         self->continuation_.resume();
                     });
      continue;
    }
    try {
      encode_.call(encode_, context);
    } catch (...) {
      trace_node(node, started);
      return encoder_threw(node, std::current_exception());
    }
    trace_node(node, started);
    if (replay_) continue;
    if (auto r = set_event(node, list); !r) return fail_encoding(r.error().code, node, r.error().what());
    if (auto r = wave_gpu_time::write(l, list, node, true); !r)
      return fail_encoding(r.error().code, node, r.error().what());
    if (auto r = close_wave(node, list); !r) return fail_encoding(r.error().code, node, r.error().what());
    if (auto r = list.end(); !r) return fail_encoding(r.error().code, node, r.error().what());
  }
}

result<void> wave::write_culled_times(const lane_contents& l, gpu::command_list& list, std::size_t node) const {
  // The culled nodes' GPU times, every slot being read: empty, where the
  // first live node begins.
  const compiled_program& program = program_->program();
  if (l.timestamps() == nullptr || program.culled_nodes == 0 || node != program.first_live_node) return {};
  for (std::size_t n = 0; n < program.node_count; ++n) {
    if (!program.culled(n)) continue;
    if (auto r = wave_gpu_time::write(l, list, n, false); !r) return r;
    if (auto r = wave_gpu_time::write(l, list, n, true); !r) return r;
  }
  return {};
}

void wave::fail_encoding(error_code ec, std::size_t node, std::string_view message) noexcept {
  // The first failure is the wave's; the others' writes would race with it.
  if (encode_failed_.exchange(true)) return;
  encode_ec_ = ec;
  failed_node_ = node;
  try {
    message_.assign(message);
  } catch (const std::bad_alloc&) {
    // The node and code still say what failed.
  }
}

void wave::encoder_threw(std::size_t node, std::exception_ptr thrown) noexcept {
  try {
    std::rethrow_exception(thrown);
  } catch (const std::exception& e) {
    fail_encoding(make_error_code(errc::encoder_failed), node, e.what());
  } catch (...) {
    fail_encoding(make_error_code(errc::encoder_failed), node, "an exception that is not a std::exception");
  }
}

}  // namespace ferrum::detail
