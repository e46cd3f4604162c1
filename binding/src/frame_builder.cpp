// frame_builder: the declarations, checked as they are made, and build(),
// which turns them into a plan (frame_builder.hpp). The order of the passes
// is frame_order.cpp's.
#include "ferrum/binding/frame_builder.hpp"

#include "frame_builder_state.hpp"
#include "json_pointer.hpp"
#include "sha256_writer.hpp"

#include "ferrum/binding/image_access.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <map>
#include <string>
#include <utility>

namespace ferrum {
namespace {

std::atomic<std::uint64_t> next_builder_serial{1};

// The largest power of two dividing `bytes`, at most 256 (a slot's size
// is a multiple of its alignment).
std::uint64_t parameter_alignment(std::uint64_t bytes) {
  return bytes == 0 ? 1 : std::min<std::uint64_t>(256, std::uint64_t{1} << std::countr_zero(bytes));
}

std::string pass_default_parameters(std::string_view pass) {
  constexpr std::string_view prefix = "node/";
  if (pass.starts_with(prefix)) pass.remove_prefix(prefix.size());
  return "resource/" + std::string(pass) + ".args";
}

template <class Id>
result<Id> make_named(std::string_view name, std::string_view what) {
  auto id = Id::make(name);
  if (!id) return make_error(errc::invalid_id, std::string(what) + " " + quote_text(name) + " is not an id");
  return id;
}

}  // namespace

std::string derived_contract(buffer_usage usage, element_type element) {
  detail::sha256_writer w;
  w.str("ferrum.contract.v1/" + std::string(to_string(usage)) + "/" + std::string(to_string(element)) + "/" +
        std::string(to_string(storage_allocator::linear_arena)) + "/" +
        std::string(to_string(storage_view::contiguous)));
  const result<sha256_digest> digest = w.finish();
  if (!digest) return {};
  static constexpr char hex[] = "0123456789abcdef";
  std::string out;
  for (const std::uint8_t b : digest->bytes) {
    out += hex[b >> 4];
    out += hex[b & 15];
  }
  return out;
}

frame_builder::frame_builder(frame_options options) : s_(std::make_unique<state>()) {
  s_->serial = next_builder_serial.fetch_add(1, std::memory_order_relaxed);
  s_->options = std::move(options);
}
frame_builder::frame_builder(frame_builder&&) noexcept = default;
frame_builder& frame_builder::operator=(frame_builder&&) noexcept = default;
frame_builder::~frame_builder() = default;

std::size_t frame_builder::pass_count() const noexcept { return s_->passes.size(); }

namespace {

void note(frame_builder::state& s, error e) {
  if (!s.first_error) s.first_error = std::move(e);
}

// A new resource, noting an invalid or repeated name.
std::uint32_t add_resource(frame_builder::state& s, frame_builder::state::resource r) {
  const auto where = [&] { return "/resources/" + std::to_string(s.resources.size()) + "/id"; };
  if (!resource_id::make(r.name))
    note(s, make_error(errc::invalid_id, "resource " + quote_text(r.name) + " is not an id", where()));
  else if (!s.resource_names.insert(r.name).second)
    note(s, make_error(errc::duplicate_id, "resource " + resource_id::quote(r.name) + " is declared twice", where()));
  s.resources.push_back(std::move(r));
  return static_cast<std::uint32_t>(s.resources.size() - 1);
}

// Whether a handle is this builder's (and of the kind its use says);
// notes a dangling_reference where it is not, `where()` naming the call
// (made only then).
template <class Handle, class Where>
bool owned(frame_builder::state& s, const Handle& h, std::string_view what, Where where) {
  bool ok = h.builder == s.serial;
  if constexpr (std::is_same_v<Handle, node_handle>)
    ok = ok && h.index < s.passes.size();
  else
    ok = ok && h.index < s.resources.size() && s.resources[h.index].image == std::is_same_v<Handle, image_handle> &&
         !s.resources[h.index].owner;
  if (!ok)
    note(s, make_error(errc::dangling_reference,
                       std::string(where()) + ": the " + std::string(what) +
                           " handle is not one this frame_builder made (another builder's, or a default one)"));
  return ok;
}

std::string pass_text(const frame_builder::state& s, node_handle n) { return node_id::quote(s.passes[n.index].name); }

}  // namespace

node_handle frame_builder::add_pass(std::string_view name, pass_info info) {
  state& s = *s_;
  const node_handle handle{static_cast<std::uint32_t>(s.passes.size()), s.serial};
  const auto where = [&] { return "/nodes/" + std::to_string(handle.index) + "/id"; };
  if (!node_id::make(name))
    note(s, make_error(errc::invalid_id, "pass " + quote_text(name) + " is not an id", where()));
  else if (!s.pass_names.emplace(name).second)
    note(s, make_error(errc::duplicate_id, "pass " + node_id::quote(name) + " is declared twice", where()));
  state::pass p;
  p.name = std::string(name);
  p.queue = info.queue;
  if (info.parameter_bytes != 0) {
    state::resource block;
    block.name = info.parameters.empty() ? pass_default_parameters(name) : std::string(info.parameters);
    block.owner = handle.index;
    block.buffer.size = resource_demand::fixed(info.parameter_bytes);
    block.buffer.alignment =
        info.parameter_alignment != 0 ? info.parameter_alignment : parameter_alignment(info.parameter_bytes);
    block.buffer.usage = buffer_usage::binding;
    block.contract = std::string(info.parameter_contract);
    p.parameters = add_resource(s, std::move(block));
    p.uses.push_back({*p.parameters, resource_access::read, {}});
  }
  s.passes.push_back(std::move(p));
  return handle;
}

buffer_handle frame_builder::add_buffer(std::string_view name, buffer_info info) {
  state::resource r;
  r.name = std::string(name);
  r.pool = std::string(info.pool);
  r.contract = std::string(info.contract);
  info.pool = {};
  info.contract = {};
  r.buffer = info;
  return {add_resource(*s_, std::move(r)), s_->serial};
}

image_handle frame_builder::add_image(std::string_view name, image_info info) {
  state::resource r;
  r.name = std::string(name);
  r.image = true;
  r.pool = std::string(info.pool);
  info.pool = {};
  r.picture = info;
  return {add_resource(*s_, std::move(r)), s_->serial};
}

namespace {

template <class Handle>
Handle add_previous_of(frame_builder::state& s, std::string_view name, Handle current) {
  if (!owned(s, current, "current's", [&] { return "previous " + quote_text(name); })) return {0, 0};
  frame_builder::state::resource r = s.resources[current.index];
  r.name = std::string(name);
  r.previous_of = current.index;
  return {add_resource(s, std::move(r)), s.serial};
}

}  // namespace

buffer_handle frame_builder::add_previous(std::string_view name, buffer_handle current) {
  return add_previous_of(*s_, name, current);
}
image_handle frame_builder::add_previous(std::string_view name, image_handle current) {
  return add_previous_of(*s_, name, current);
}

void frame_builder::access(node_handle pass, buffer_handle buffer, resource_access how) {
  state& s = *s_;
  if (!owned(s, pass, "pass", [] { return "an access"; })) return;
  if (!owned(s, buffer, "buffer", [&] { return "pass " + pass_text(s, pass); })) return;
  s.passes[pass.index].uses.push_back({buffer.index, how, {}});
}

void frame_builder::access(node_handle pass, image_handle image, resource_access how, subresource_range range) {
  state& s = *s_;
  if (!owned(s, pass, "pass", [] { return "an access"; })) return;
  if (!owned(s, image, "image", [&] { return "pass " + pass_text(s, pass); })) return;
  s.passes[pass.index].uses.push_back({image.index, how, range});
}

void frame_builder::after(node_handle pass, node_handle earlier) {
  state& s = *s_;
  if (!owned(s, pass, "pass", [] { return "an 'after'"; })) return;
  if (!owned(s, earlier, "pass", [&] { return "the 'after' of pass " + pass_text(s, pass); })) return;
  s.passes[pass.index].after.push_back(earlier.index);
}

void frame_builder::add_bucket(std::string_view cls, bucket_capacity dims, std::vector<pool_budget> budgets) {
  state::bucket b{std::string(cls), dims, {}};
  for (const pool_budget& budget : budgets)
    b.budgets.push_back({std::string(budget.pool), {{}, budget.min, budget.max}});
  s_->buckets.push_back(std::move(b));
}

}  // namespace ferrum
