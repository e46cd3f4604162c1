// frame_hash: frame_builder::hash(), the plan hash of what is declared
// (docs/canonical-encoding.md), encoded straight from the declarations in
// the order the encoding lists them, field for field what build()
// (frame_build.cpp) would put in the plan, without making it. Everything it
// works in is the builder's and kept: sort orders, the derived order, the
// pools, the encoding's bytes. The two latest encodings are kept with their
// digests, so that a frame declared as one of them was before is hashed by
// comparing its bytes (equal bytes, equal digest) instead of SHA-256 again.
#include "ferrum/binding/frame_builder.hpp"

#include "frame_builder_state.hpp"
#include "plan_rules.hpp"
#include "sha256_writer.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <numeric>
#include <tuple>

namespace ferrum {
// Named, not anonymous: hash_scratch, a member of frame_builder::state,
// holds them.
namespace detail {

// A canonical encoding's bytes (docs/canonical-encoding.md: u8, u64
// little-endian, str, enum), in a buffer kept from one encoding to the next.
class frame_encoding {
 public:
  void clear() noexcept { used_ = 0; }
  [[gnu::always_inline]] void u8(std::uint8_t v) { put(&v, 1); }
  [[gnu::always_inline]] void u64(std::uint64_t v) {
    if constexpr (std::endian::native != std::endian::little) v = byteswap64(v);
    put(&v, sizeof v);
  }
  [[gnu::always_inline]] void str(std::string_view s) {
    u64(s.size());
    put(s.data(), s.size());
  }
  template <class Enum>
  [[gnu::always_inline]] void enumeration(Enum v) {
    u8(static_cast<std::uint8_t>(v));
  }
  [[nodiscard]] std::span<const unsigned char> bytes() const noexcept { return {bytes_.data(), used_}; }

 private:
  static std::uint64_t byteswap64(std::uint64_t v) noexcept {
    std::uint64_t out = 0;
    for (int i = 0; i < 8; ++i) out |= ((v >> (8 * i)) & 0xff) << (8 * (7 - i));
    return out;
  }
  // Inline, each a store into the buffer (grown out of line, once warm
  // never).
  [[gnu::always_inline]] void put(const void* data, std::size_t size) {
    if (bytes_.size() - used_ < size) [[unlikely]]
      grow(size);
    std::memcpy(bytes_.data() + used_, data, size);
    used_ += size;
  }
  [[gnu::noinline]] void grow(std::size_t size) { bytes_.resize(std::max(bytes_.size() * 2, used_ + size + 4096)); }
  std::vector<unsigned char> bytes_;
  std::size_t used_ = 0;
};

// An encoding hashed before, and its digest.
struct remembered_encoding {
  std::vector<unsigned char> bytes;
  plan_hash digest;
  bool valid = false;
};

// One access as the tails list it: its pass, resource, access and range.
struct frame_declared_use {
  std::uint32_t node;
  std::uint32_t resource;
  resource_access how;
  subresource_range range;
};

}  // namespace detail

using detail::frame_declared_use;
using detail::frame_encoding;
using detail::remembered_encoding;

struct frame_builder::state::hash_scratch {
  detail::sha256_writer writer;
  frame_encoding out;
  std::array<remembered_encoding, 2> seen_before;  // [0] the latest
  frame_order order;
  frame_pool_set pools;
  std::vector<std::uint8_t> written;
  std::vector<std::uint32_t> by_id;    // resources in id order
  std::vector<std::uint32_t> listing;  // one pass's uses, in (id, first mip, first layer) order
  std::vector<std::uint32_t> after;    // one pass's `after`, in id order
  std::vector<std::uint32_t> buckets;  // in (class, capacity) order
  std::vector<frame_declared_use> whole, ranged;
  state::bucket fallback{"frame", {1, 1, 1}, {}};  // the bucket of a frame that declares none
  resource_descriptor image_fields;                // an image's buffer fields: the defaults
};

// Here, where hash_scratch is complete: a constructor that throws
// destroys `hashing` too.
frame_builder::state::state()
    : pass_names(0, name_hash<pass>{{&passes}}, name_equal<pass>{{&passes}}),
      resource_names(0, name_hash<resource>{{&resources}}, name_equal<resource>{{&resources}}) {}
frame_builder::state::~state() = default;

namespace {

using state = frame_builder::state;

// A resource's entry (docs/canonical-encoding.md, "Plan hash").
void encode_resource(frame_encoding& w, const state& s, const frame_pool_set& pools, std::uint32_t k,
                     const resource_descriptor& image_fields) {
  const state::resource& r = s.resources[k];
  w.str(r.name);
  w.str(pools.pools[pools.of[k]].name);
  w.enumeration(r.owner ? allocation_kind::binding : allocation_kind::workspace);
  w.u8(r.owner.has_value());
  if (r.owner) w.str(s.passes[*r.owner].name);
  const bool buffer = !r.image;
  const resource_demand& demand = buffer ? r.buffer.size : image_fields.demand;
  w.u64(demand.base);
  w.u64(demand.per_unit);
  w.u8(demand.dimension.has_value());
  if (demand.dimension) w.u8(*demand.dimension);
  w.u64(buffer ? r.buffer.alignment : image_fields.alignment);
  w.enumeration(buffer ? r.buffer.lifetime : r.picture.lifetime);
  const buffer_usage usage = buffer ? r.buffer.usage : image_fields.usage;
  const element_type element = buffer ? r.buffer.element : image_fields.element;
  w.enumeration(usage);
  w.enumeration(element);
  w.enumeration(image_fields.storage.allocator);
  w.enumeration(image_fields.storage.view);
  w.str(!buffer              ? std::string_view(image_fields.storage.digest)
        : r.contract.empty() ? detail::derived_contract_digest(usage, element)
                             : std::string_view(r.contract));
}

// A pass's entry; its accesses other than read-write to whole resources,
// and those to part of an image, onto the tails' lists.
void encode_pass(frame_encoding& w, const state& s, std::uint32_t i, state::hash_scratch& h) {
  const state::pass& p = s.passes[i];
  w.str(p.name);
  h.listing.resize(p.uses.size());
  std::iota(h.listing.begin(), h.listing.end(), 0U);
  const auto key = [&](std::uint32_t u) {
    const state::use& x = p.uses[u];
    return std::tuple(std::string_view(s.resources[x.resource].name), x.range.base_mip, x.range.base_layer);
  };
  std::sort(h.listing.begin(), h.listing.end(), [&](std::uint32_t a, std::uint32_t b) { return key(a) < key(b); });
  w.u64(h.listing.size());
  for (const std::uint32_t u : h.listing) {
    const state::use& x = p.uses[u];
    w.str(s.resources[x.resource].name);
    if (!x.range.whole())
      h.ranged.push_back({i, x.resource, x.how, x.range});
    else if (x.how != resource_access::read_write)
      h.whole.push_back({i, x.resource, x.how, x.range});
  }
  w.u8(p.parameters.has_value());
  if (p.parameters) w.str(s.resources[*p.parameters].name);
  w.enumeration(p.queue);
  const std::span<const std::uint32_t> after = h.order.after(i);
  h.after.assign(after.begin(), after.end());
  std::sort(h.after.begin(), h.after.end(),
            [&](std::uint32_t a, std::uint32_t b) { return s.passes[a].name < s.passes[b].name; });
  w.u64(h.after.size());
  for (const std::uint32_t e : h.after) w.str(s.passes[e].name);
}

// The buckets, in (class, capacity) order, each with a budget per pool.
void encode_buckets(frame_encoding& w, const state& s, state::hash_scratch& h) {
  const std::span<const state::bucket> buckets =
      s.buckets.empty() ? std::span<const state::bucket>(&h.fallback, 1)
                        : std::span<const state::bucket>(s.buckets.begin(), s.buckets.size());
  h.buckets.resize(buckets.size());
  std::iota(h.buckets.begin(), h.buckets.end(), 0U);
  const auto key = [&](std::uint32_t b) { return std::tie(buckets[b].cls, buckets[b].dims); };
  std::sort(h.buckets.begin(), h.buckets.end(), [&](std::uint32_t a, std::uint32_t b) { return key(a) < key(b); });
  w.u64(buckets.size());
  for (const std::uint32_t b : h.buckets) {
    const state::bucket& bucket = buckets[b];
    w.str(bucket.cls);
    for (const std::uint64_t d : bucket.dims) w.u64(d);
    w.u64(h.pools.pools.size());
    for (const frame_pool_set::pool& pool : h.pools.pools) {
      const auto given = std::find_if(bucket.budgets.begin(), bucket.budgets.end(),
                                      [&](const auto& g) { return g.first == pool.name; });
      w.str(pool.name);
      w.u64(given != bucket.budgets.end() ? given->second.min : 0);
      w.u64(given != bucket.budgets.end() ? given->second.max : s.options.budget_bytes);
    }
  }
}

void encode_uses(frame_encoding& w, const state& s, const std::vector<frame_declared_use>& uses, bool ranged) {
  w.u64(uses.size());
  for (const frame_declared_use& d : uses) {
    w.u64(d.node);
    w.str(s.resources[d.resource].name);
    w.enumeration(d.how);
    if (!ranged) continue;
    w.u64(d.range.base_mip);
    w.u64(d.range.mips);
    w.u64(d.range.base_layer);
    w.u64(d.range.layers);
  }
}

void encode_image(frame_encoding& w, const state::resource& r) {
  const image_desc& image = r.picture.image;
  w.str(r.name);
  w.enumeration(image.format);
  if (image.bucket_extent && image.extent_divisor != 1) {
    w.u8(2);
    w.u64(image.extent_divisor);
    w.u64(0);
  } else {
    w.u8(image.bucket_extent);
    w.u64(image.width);
    w.u64(image.height);
  }
  w.u64(image.mips);
  w.u64(image.layers);
}

// The trailing parts of a v2 plan (hash_v2_tails), each written where it
// or a part after it is present.
void encode_tails(frame_encoding& w, const state& s, state::hash_scratch& h) {
  std::size_t classes = 0, images = 0, histories = 0, kept = 0;
  for (const frame_pool_set::pool& pool : h.pools.pools)
    classes += pool.memory && *pool.memory != detail::derived_memory_class(pool.binding) ? 1 : 0;
  for (const state::resource& r : s.resources) {
    images += r.image ? 1 : 0;
    histories += r.previous_of ? 1 : 0;
    kept += (r.image ? r.picture.kept : r.buffer.kept) ? 1 : 0;
  }
  const bool culling = kept != 0 || !s.options.cull;
  const bool history = histories != 0 || culling;
  const bool ranged = !h.ranged.empty() || history;
  if (!h.whole.empty() || classes != 0 || images != 0 || ranged) encode_uses(w, s, h.whole, false);
  if (classes != 0 || images != 0 || ranged) {
    w.u64(classes);
    for (const frame_pool_set::pool& pool : h.pools.pools)
      if (pool.memory && *pool.memory != detail::derived_memory_class(pool.binding)) {
        w.str(pool.name);
        w.enumeration(*pool.memory);
      }
  }
  if (images != 0 || ranged) {
    w.u64(images);
    for (const std::uint32_t k : h.by_id)
      if (s.resources[k].image) encode_image(w, s.resources[k]);
  }
  if (ranged) encode_uses(w, s, h.ranged, true);
  if (history) {
    w.u64(histories);
    for (const std::uint32_t k : h.by_id)
      if (const state::resource& r = s.resources[k]; r.previous_of) {
        w.str(r.name);
        w.str(s.resources[*r.previous_of].name);
      }
  }
  if (culling) {
    w.u64(kept);
    for (const std::uint32_t k : h.by_id)
      if (const state::resource& r = s.resources[k]; r.image ? r.picture.kept : r.buffer.kept) w.str(r.name);
    w.u8(s.options.cull ? 1 : 0);
  }
}

// The plan's encoding up to its tails.
void encode_plan(frame_encoding& w, const state& s, state::hash_scratch& h) {
  w.clear();
  w.str(to_string(plan_format::v2));
  w.u64(s.passes.size());
  h.whole.clear();
  h.ranged.clear();
  for (std::uint32_t i = 0; i < s.passes.size(); ++i) encode_pass(w, s, i, h);
  // Resources in id order: the order of the frame before, where its names
  // are still in order (the same frame again), else sorted.
  const auto by_name = [&](std::uint32_t a, std::uint32_t b) { return s.resources[a].name < s.resources[b].name; };
  if (h.by_id.size() != s.resources.size() || !std::is_sorted(h.by_id.begin(), h.by_id.end(), by_name)) {
    h.by_id.resize(s.resources.size());
    std::iota(h.by_id.begin(), h.by_id.end(), 0U);
    std::sort(h.by_id.begin(), h.by_id.end(), by_name);
  }
  w.u64(s.resources.size());
  for (const std::uint32_t k : h.by_id) encode_resource(w, s, h.pools, k, h.image_fields);
  encode_buckets(w, s, h);
  std::size_t options = 0;
  for (const frame_pool_set::pool& pool : h.pools.pools)
    options += pool.liveness != liveness_mode::conservative || pool.memory ? 1 : 0;
  w.u64(options);
  for (const frame_pool_set::pool& pool : h.pools.pools)
    if (pool.liveness != liveness_mode::conservative || pool.memory) {
      w.str(pool.name);
      w.enumeration(pool.liveness);
    }
  w.u64(s.options.lanes);
  w.u64(s.options.budget_bytes);
  encode_tails(w, s, h);
}

}  // namespace

result<plan_hash> frame_builder::hash() {
  state& s = *s_;
  if (s.first_error) return *s.first_error;
  if (!s.hashing) s.hashing = std::make_unique<state::hash_scratch>();
  state::hash_scratch& h = *s.hashing;
  // build()'s refusals of the declarations, in its order.
  if (auto assigned = s.assign_pools(h.pools); !assigned) return assigned.error();
  if (auto derived = s.derive_after(h.order); !derived) return derived.error();
  if (auto written = s.check_buffers_written_first(h.written); !written) return written.error();
  if (auto checked = s.check_buckets(h.pools); !checked) return checked.error();
  encode_plan(h.out, s, h);
  const std::span<const unsigned char> bytes = h.out.bytes();
  for (remembered_encoding& before : h.seen_before)
    if (before.valid && std::ranges::equal(before.bytes, bytes)) return before.digest;
  h.writer.restart();
  h.writer.bytes(bytes.data(), bytes.size());
  const result<sha256_digest> digest = h.writer.finish();
  if (!digest) return digest.error();
  // The latest first; the older one's storage takes this encoding.
  std::swap(h.seen_before[0], h.seen_before[1]);
  remembered_encoding& latest = h.seen_before[0];
  latest.bytes.assign(bytes.begin(), bytes.end());
  latest.digest = *digest;
  latest.valid = true;
  return *digest;
}

}  // namespace ferrum
