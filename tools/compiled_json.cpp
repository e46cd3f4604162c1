#include "compiled_json.hpp"

#include <rapidjson/prettywriter.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <type_traits>

namespace ferrum::tools {
namespace {

// RapidJSON's output stream over a std::ostream, in 64 KiB chunks: a 1M-node
// program's document is about 200 MB, and RapidJSON's own ostream wrapper
// writes a character at a time.
class chunked_stream {
 public:
  using Ch = char;

  explicit chunked_stream(std::ostream& out) noexcept : out_(out) {}
  chunked_stream(const chunked_stream&) = delete;
  chunked_stream& operator=(const chunked_stream&) = delete;
  ~chunked_stream() { Flush(); }

  void Put(char c) {
    if (used_ == buffer_.size()) Flush();
    buffer_[used_++] = c;
  }
  void Flush() {
    out_.write(buffer_.data(), static_cast<std::streamsize>(used_));
    used_ = 0;
  }

 private:
  std::ostream& out_;
  std::array<char, std::size_t{64} << 10> buffer_{};
  std::size_t used_ = 0;
};

// Writes the document with the layout nlohmann's dump(2) gives the other
// reports: two-space indents, one array element per line.
class document_writer {
 public:
  explicit document_writer(chunked_stream& stream) : writer_(stream) { writer_.SetIndent(' ', 2); }

  void key(std::string_view name) { writer_.Key(name.data(), static_cast<rapidjson::SizeType>(name.size())); }
  void string(std::string_view text) { writer_.String(text.data(), static_cast<rapidjson::SizeType>(text.size())); }
  void number(std::uint64_t n) { writer_.Uint64(n); }
  void boolean(bool b) { writer_.Bool(b); }
  void null() { writer_.Null(); }
  void begin_object() { writer_.StartObject(); }
  void end_object() { writer_.EndObject(); }
  void begin_array() { writer_.StartArray(); }
  void end_array() { writer_.EndArray(); }

  template <class Value>
  void member(std::string_view name, const Value& value) {
    key(name);
    if constexpr (std::is_convertible_v<const Value&, std::string_view>)
      string(value);
    else if constexpr (std::is_same_v<Value, bool>)
      boolean(value);
    else
      number(value);
  }

 private:
  rapidjson::PrettyWriter<chunked_stream> writer_;
};

void write_domain(document_writer& w, const capacity_layout& domain, memory_class memory, std::uint64_t lane_offset) {
  w.begin_object();
  w.member("pool", domain.pool.str());
  w.member("memory", to_string(memory));
  w.member("liveness", to_string(domain.liveness));
  w.member("lane_offset", lane_offset);
  w.member("physical_size_bytes", domain.physical_size_bytes);
  w.member("unaliased_size_bytes", domain.unaliased_size_bytes);
  w.key("projections");
  w.begin_array();
  for (const projection& p : domain.projections) {
    w.begin_object();
    w.member("resource", p.resource.str());
    w.member("offset", p.offset);
    w.member("capacity", p.capacity);
    w.end_object();
  }
  w.end_array();
  w.end_object();
}

void write_binding(document_writer& w, const program_binding_layout& binding) {
  w.begin_object();
  w.member("physical_size_bytes", binding.physical_size_bytes());
  w.member("fingerprint", binding.fingerprint().str());
  w.key("slots");
  w.begin_array();
  for (const binding_slot& s : binding.slots()) {
    w.begin_object();
    w.member("node_index", std::uint64_t{s.node_index});
    w.member("node", s.node.str());
    w.member("resource", s.resource.str());
    w.member("offset", s.offset);
    w.member("capacity", s.capacity);
    w.member("alignment", s.alignment);
    w.end_object();
  }
  w.end_array();
  w.end_object();
}

// The lane's images (extents in this bucket) and, per node (plan index),
// the layout transitions its opening barrier makes.
void write_images(document_writer& w, const lane_recipe& lane) {
  w.key("images");
  w.begin_array();
  for (std::size_t k = 0; k < lane.images.size(); ++k) {
    const lane_image& i = lane.images[k];
    w.begin_object();
    w.member("resource", i.resource.str());
    w.member("format", to_string(i.image.format));
    w.member("extent", i.declared_extent());
    w.member("width", std::uint64_t{i.image.width});
    w.member("height", std::uint64_t{i.image.height});
    w.member("mips", std::uint64_t{i.image.mips});
    w.member("layers", std::uint64_t{i.image.layers});
    w.member("lifetime", to_string(i.lifetime));
    w.member("imported", i.imported);
    if (const lane_image* of = lane.current_of(k)) w.member("history_of", of->resource.str());
    w.member("initial_layout", to_string(i.initial));
    w.end_object();
  }
  w.end_array();
  w.key("transitions");
  w.begin_array();
  for (std::size_t n = 0; n + 1 < lane.transition_begin.size(); ++n)
    for (const image_transition& t : lane.node_transitions(n)) {
      w.begin_object();
      w.member("node", std::uint64_t{n});
      w.member("resource", lane.images[t.image].resource.str());
      w.member("from", to_string(t.from));
      w.member("to", to_string(t.to));
      w.member("range", to_string(t.range));
      w.key("after");
      if (t.after)
        w.string(to_string(*t.after));
      else
        w.null();
      w.end_object();
    }
  w.end_array();
}

// Split barriers on one queue (scheduler_options::split_barriers), in the
// order a wave on one queue submits: the barriers left and the events, each
// with the node that sets it, those that wait for it and its scope.
void write_split_barriers(document_writer& w, const lane_recipe& lane) {
  const split_barriers& split = lane.order.empty() ? lane.one_queue_split : lane.ordered_split;
  w.key("split");
  w.begin_object();
  w.member("per_wave", std::uint64_t{split.barriers_per_wave()});
  w.member("events_per_wave", std::uint64_t{split.events.size()});
  w.key("before_nodes");
  w.begin_array();
  for (std::size_t n = 0; n < split.barrier_before.size(); ++n)
    if (split.barrier_before[n]) w.number(n);
  w.end_array();
  w.key("events");
  w.begin_array();
  for (std::size_t e = 0; e < split.events.size(); ++e) {
    const barrier_event& ev = split.events[e];
    w.begin_object();
    w.member("set_after", std::uint64_t{ev.producer});
    w.key("waited_before");
    w.begin_array();
    for (std::size_t n = 0; n + 1 < split.wait_begin.size(); ++n)
      for (std::size_t waited : split.node_waits(n))
        if (waited == e) w.number(n);
    w.end_array();
    w.member("waits_for", stage_mask_names(ev.scope.before.stages));
    w.member("flushes", access_mask_names(ev.scope.before.accesses));
    w.member("blocks", stage_mask_names(ev.scope.after.stages));
    w.member("makes_visible", access_mask_names(ev.scope.after.accesses));
    w.end_object();
  }
  w.end_array();
  w.end_object();
}

void write_bucket(document_writer& w, const compiled_program& program, const compiled_bucket& bucket) {
  w.begin_object();
  w.member("id", bucket.id.str());
  w.member("class", bucket.spec.cls.str());
  w.key("capacity");
  w.begin_array();
  for (const std::uint64_t d : bucket.spec.dims) w.number(d);
  w.end_array();
  w.member("lane_bytes", bucket.lane_bytes());
  w.member("unaliased_lane_bytes", bucket.unaliased_lane_size_bytes);
  // The images' texels, which a lane places in memory of its own.
  w.member("image_bytes", bucket.image_window.size);
  w.member("unaliased_image_bytes", bucket.unaliased_image_bytes);
  w.key("domains");
  w.begin_array();
  for (std::size_t d = 0; d < bucket.capacity_layouts.size(); ++d)
    write_domain(w, bucket.capacity_layouts[d], program.domains[d].memory, bucket.pool_offsets[d]);
  w.end_array();
  // A lane's buffer per memory class: where its window lies in the lane.
  w.key("memory_classes");
  w.begin_array();
  for (memory_class c : window_order)
    if (const memory_window& window = bucket.window(c); window.size != 0) {
      w.begin_object();
      w.member("class", to_string(c));
      w.member("lane_offset", window.begin);
      w.member("bytes", window.size);
      w.end_object();
    }
  w.end_array();
  w.key("program_binding");
  if (bucket.binding)
    write_binding(w, *bucket.binding);
  else
    w.null();
  // Where a wave records barriers between its nodes: their count, and the
  // plan indices of the nodes whose list opens with one.
  w.key("barriers");
  w.begin_object();
  w.member("per_wave", std::uint64_t{bucket.lane.barriers_per_wave()});
  w.key("before_nodes");
  w.begin_array();
  for (std::size_t n = 0; n < bucket.lane.barrier_before.size(); ++n)
    if (bucket.lane.barrier_before[n]) w.number(n);
  w.end_array();
  // Each one's scope (ferrum/sync_scope.hpp): the stages it waits for and
  // the writes it makes available, the stages it blocks and the accesses
  // it makes them visible to.
  w.key("scopes");
  w.begin_array();
  for (std::size_t n = 0; n < bucket.lane.barrier_before.size() && n < bucket.lane.barrier_scopes.size(); ++n) {
    if (!bucket.lane.barrier_before[n]) continue;
    const barrier_scope& b = bucket.lane.barrier_scopes[n];
    w.begin_object();
    w.member("node", std::uint64_t{n});
    w.member("waits_for", stage_mask_names(b.before.stages));
    w.member("flushes", access_mask_names(b.before.accesses));
    w.member("blocks", stage_mask_names(b.after.stages));
    w.member("makes_visible", access_mask_names(b.after.accesses));
    w.end_object();
  }
  w.end_array();
  // The order a wave on one queue submits the nodes in (plan indices;
  // empty: plan order) and the barriers of that order.
  w.key("level_order");
  w.begin_array();
  for (std::size_t n : bucket.lane.order) w.number(n);
  w.end_array();
  w.key("level_order_before_nodes");
  w.begin_array();
  for (std::size_t n = 0; n < bucket.lane.ordered_barrier_before.size(); ++n)
    if (bucket.lane.ordered_barrier_before[n]) w.number(n);
  w.end_array();
  write_split_barriers(w, bucket.lane);
  w.end_object();
  write_images(w, bucket.lane);
  w.end_object();
}

// The culled nodes (compiled_program::culling), in plan order: each one's
// id, plan index and why.
void write_culled(document_writer& w, const compiled_program& program, const plan& p) {
  w.key("culled");
  w.begin_array();
  for (std::size_t n = 0; n < program.culling.size() && n < p.nodes.size(); ++n) {
    if (!program.culling[n].culled) continue;
    w.begin_object();
    w.member("node", p.nodes[n].id.view());
    w.member("index", std::uint64_t{n});
    w.member("reason", program.culling[n].text());
    w.key("writes");
    w.begin_array();
    for (const resource_id& r : program.culling[n].writes) w.string(r.view());
    w.end_array();
    w.end_object();
  }
  w.end_array();
}

}  // namespace

void write_compiled_json(std::ostream& out, const compiled_program& program, const plan& p,
                         const std::optional<program_file_summary>& file) {
  {
    chunked_stream stream(out);
    document_writer w(stream);
    w.begin_object();
    w.member("format", std::string_view(compiled_format));
    w.member("plan_hash", program.hash.str());
    w.key("buckets");
    w.begin_array();
    for (const compiled_bucket& bucket : program.buckets) write_bucket(w, program, bucket);
    w.end_array();
    write_culled(w, program, p);
    if (file) {
      w.key("program_file");
      w.begin_object();
      w.member("path", file->path);
      w.member("bytes", std::uint64_t{file->bytes});
      w.end_object();
    }
    w.end_object();
  }
  out << '\n';
}

}  // namespace ferrum::tools
