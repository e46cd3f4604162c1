// frame_builder: the declarations, checked as they are made, and build(),
// which turns them into a plan (frame_builder.hpp). The order of the passes
// is frame_order.cpp's.
#include "ferrum/binding/frame_builder.hpp"

#include "frame_builder_state.hpp"
#include "json_pointer.hpp"
#include "sha256_writer.hpp"

#include "ferrum/binding/image_access.hpp"

#include <algorithm>
#include <array>
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

}  // namespace

namespace {

constexpr std::size_t usage_count = 4;    // buffer_usage's values
constexpr std::size_t element_count = 7;  // element_type's

using contract_table = std::array<std::array<char, 64>, usage_count * element_count>;

std::array<char, 64> compute_contract(buffer_usage usage, element_type element) {
  std::array<char, 64> out{};
  detail::sha256_writer w;
  w.str("ferrum.contract.v1/" + std::string(to_string(usage)) + "/" + std::string(to_string(element)) + "/" +
        std::string(to_string(storage_allocator::linear_arena)) + "/" +
        std::string(to_string(storage_view::contiguous)));
  const result<sha256_digest> digest = w.finish();
  if (!digest) return out;
  static constexpr char hex[] = "0123456789abcdef";
  for (std::size_t i = 0; i < digest->bytes.size(); ++i) {
    out[2 * i] = hex[digest->bytes[i] >> 4];
    out[2 * i + 1] = hex[digest->bytes[i] & 15];
  }
  return out;
}

}  // namespace

namespace detail {

// Every description's digest, made once per process (28 SHA-256s) at the
// first use; "" where OpenSSL failed then, as derived_contract gives.
std::string_view derived_contract_digest(buffer_usage usage, element_type element) {
  static const contract_table table = [] {
    contract_table t{};
    for (std::size_t u = 0; u < usage_count; ++u)
      for (std::size_t e = 0; e < element_count; ++e)
        t[u * element_count + e] = compute_contract(static_cast<buffer_usage>(u), static_cast<element_type>(e));
    return t;
  }();
  const auto u = static_cast<std::size_t>(usage);
  const auto e = static_cast<std::size_t>(element);
  if (u >= usage_count || e >= element_count) return {};
  const std::array<char, 64>& digest = table[u * element_count + e];
  return digest[0] == 0 ? std::string_view() : std::string_view(digest.data(), digest.size());
}

}  // namespace detail

std::string derived_contract(buffer_usage usage, element_type element) {
  return std::string(detail::derived_contract_digest(usage, element));
}

frame_builder::state::pass& frame_builder::state::new_pass() {
  return passes.add([](pass& p) {
    p.queue = queue_kind::compute;
    p.parameters.reset();
    p.uses.clear();
    p.after.clear();
  });
}

frame_builder::state::resource& frame_builder::state::new_resource() {
  return resources.add([](resource& r) {
    r.name.clear();
    r.image = false;
    r.owner.reset();
    r.buffer = {};
    r.picture = {};
    r.pool.clear();
    r.contract.clear();
    r.previous_of.reset();
  });
}

frame_builder::state::bucket& frame_builder::state::new_bucket() {
  return buckets.add([](bucket&) {});
}

frame_builder::frame_builder(frame_options options) : s_(std::make_unique<state>()) {
  s_->serial = next_builder_serial.fetch_add(1, std::memory_order_relaxed);
  s_->options = std::move(options);
}
frame_builder::frame_builder(frame_builder&&) noexcept = default;
frame_builder& frame_builder::operator=(frame_builder&&) noexcept = default;
frame_builder::~frame_builder() = default;

std::size_t frame_builder::pass_count() const noexcept { return s_->passes.size(); }

void frame_builder::reset() {
  state& s = *s_;
  s.serial = next_builder_serial.fetch_add(1, std::memory_order_relaxed);
  s.passes.clear();
  s.resources.clear();
  s.buckets.clear();
  s.pass_names.clear();
  s.resource_names.clear();
  s.first_error.reset();
}

namespace {

void note(frame_builder::state& s, error e) {
  if (!s.first_error) s.first_error = std::move(e);
}

// The resource just declared (the last), noting an invalid or repeated
// name.
std::uint32_t add_resource(frame_builder::state& s) {
  const auto k = static_cast<std::uint32_t>(s.resources.size() - 1);
  const std::string& name = s.resources[k].name;
  const auto where = [&] { return "/resources/" + std::to_string(k) + "/id"; };
  if (!is_valid_id(name))
    note(s, make_error(errc::invalid_id, "resource " + quote_text(name) + " is not an id", where()));
  else if (s.resource_names.contains(std::string_view(name)))
    note(s, make_error(errc::duplicate_id, "resource " + resource_id::quote(name) + " is declared twice", where()));
  else
    s.resource_names.insert(k);
  return k;
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
  state::pass& p = s.new_pass();
  p.name.assign(name);
  p.queue = info.queue;
  if (!is_valid_id(name))
    note(s, make_error(errc::invalid_id, "pass " + quote_text(name) + " is not an id", where()));
  else if (s.pass_names.contains(name))
    note(s, make_error(errc::duplicate_id, "pass " + node_id::quote(name) + " is declared twice", where()));
  else
    s.pass_names.insert(handle.index);
  if (info.parameter_bytes != 0) {
    state::resource& block = s.new_resource();
    if (info.parameters.empty()) {
      // `resource/<name>.args`, the pass's name without its `node/`.
      constexpr std::string_view prefix = "node/";
      std::string_view pass = name;
      if (pass.starts_with(prefix)) pass.remove_prefix(prefix.size());
      block.name.assign("resource/").append(pass).append(".args");
    } else {
      block.name.assign(info.parameters);
    }
    block.owner = handle.index;
    block.buffer.size = resource_demand::fixed(info.parameter_bytes);
    block.buffer.alignment =
        info.parameter_alignment != 0 ? info.parameter_alignment : parameter_alignment(info.parameter_bytes);
    block.buffer.usage = buffer_usage::binding;
    block.contract.assign(info.parameter_contract);
    p.parameters = add_resource(s);
    p.uses.push_back({*p.parameters, resource_access::read, {}});
  }
  return handle;
}

buffer_handle frame_builder::add_buffer(std::string_view name, buffer_info info) {
  state::resource& r = s_->new_resource();
  r.name.assign(name);
  r.pool.assign(info.pool);
  r.contract.assign(info.contract);
  info.pool = {};
  info.contract = {};
  r.buffer = info;
  return {add_resource(*s_), s_->serial};
}

image_handle frame_builder::add_image(std::string_view name, image_info info) {
  state::resource& r = s_->new_resource();
  r.name.assign(name);
  r.image = true;
  r.pool.assign(info.pool);
  info.pool = {};
  r.picture = info;
  return {add_resource(*s_), s_->serial};
}

namespace {

template <class Handle>
Handle add_previous_of(frame_builder::state& s, std::string_view name, Handle current) {
  if (!owned(s, current, "current's", [&] { return "previous " + quote_text(name); })) return {0, 0};
  frame_builder::state::resource& r = s.new_resource();
  // Its description and pool are the current's (assigned field by field:
  // `r` keeps its strings' storage).
  const frame_builder::state::resource& of = s.resources[current.index];
  r.image = of.image;
  r.owner = of.owner;
  r.buffer = of.buffer;
  r.picture = of.picture;
  r.pool.assign(of.pool);
  r.contract.assign(of.contract);
  r.name.assign(name);
  r.previous_of = current.index;
  return {add_resource(s), s.serial};
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

void frame_builder::add_bucket(std::string_view cls, bucket_capacity dims, std::span<const pool_budget> budgets) {
  state::bucket& b = s_->new_bucket();
  b.cls.assign(cls);
  b.dims = dims;
  // Its budgets keep their strings' storage too.
  b.budgets.resize(budgets.size());
  for (std::size_t j = 0; j < budgets.size(); ++j) {
    b.budgets[j].first.assign(budgets[j].pool);
    b.budgets[j].second = {{}, budgets[j].min, budgets[j].max};
  }
}

void frame_builder::add_bucket(std::string_view cls, bucket_capacity dims, std::initializer_list<pool_budget> budgets) {
  add_bucket(cls, dims, std::span<const pool_budget>(budgets.begin(), budgets.size()));
}

}  // namespace ferrum
