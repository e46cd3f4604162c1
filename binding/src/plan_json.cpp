// Reads `ferrum.plan.v1` and `ferrum.plan.v2` documents (plan_json.hpp) in
// two passes.
//
// 1. A parse into a DOM: the fast one (json_fast_dom.hpp, simdjson) where it
//    accepts the text, otherwise the reference one (json_reference_dom.hpp,
//    nlohmann), which names syntax errors by their byte. Either rejects
//    duplicate keys and nesting deeper than max_plan_json_depth.
// 2. A walk over the DOM (json_view.hpp, written once for both) checks the
//    schema — types, field sets, number ranges, ids, enum names — and fills a
//    `plan`, which validate_plan then checks. Pointers for errors are built
//    only when one is reported.
//
// Both passes report by throwing `rejection` (plan_rejection.hpp), caught in
// parse_plan, so every check is one line; nothing else here throws on bad
// input.
#include "ferrum/binding/plan_json.hpp"

#include "image_rules.hpp"
#include "json_fast_dom.hpp"
#include "json_pointer.hpp"
#include "json_reference_dom.hpp"
#include "json_view.hpp"
#include "plan_rejection.hpp"
#include "plan_rules.hpp"

#include <algorithm>
#include <array>
#include <cassert>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ferrum {
namespace {

using detail::json_kind;
using detail::reject;

constexpr std::uint64_t u64_max = std::numeric_limits<std::uint64_t>::max();
constexpr std::string_view id_rules = " (1 to 128 of a-z 0-9 / - . _ @)";

template <class Enum>
std::string names_of() {
  std::string out;
  // The enums number their values from 0 without gaps; to_string says
  // "unknown" past the last one.
  for (unsigned i = 0; i <= std::numeric_limits<std::uint8_t>::max(); ++i) {
    const std::string_view name = to_string(static_cast<Enum>(i));
    if (name == "unknown") break;
    out += (out.empty() ? "'" : ", '") + std::string(name) + "'";
  }
  return out;
}

// A value of the document and where it is; each accessor checks what it reads
// and rejects with the value's JSON pointer. A cursor refers to its parent,
// so children live no longer than the cursor they came from.
template <class View>
class known_members;

template <class View>
class cursor {
 public:
  explicit cursor(View value) : value_(value) {}

  // The JSON pointer of the value, e.g. "/resources/3/alignment".
  [[nodiscard]] std::string path() const {
    if (parent_ == nullptr) return "";
    return parent_->path() + "/" + (is_member_ ? detail::json_pointer_token(key_) : std::to_string(index_));
  }

  const cursor& require_object() const {
    if (value_.kind() != json_kind::object) wrong_type("an object");
    return *this;
  }

  // Checks that this is an object whose keys are all in `allowed` (of
  // several unknown keys, the first in key order is rejected), and returns
  // its members by name. In a v1 document, `v2_only` names the keys that
  // ferrum.plan.v2 defines here: rejected as unknown all the same, with a
  // detail that says so.
  [[nodiscard]] known_members<View> require_object(std::initializer_list<std::string_view> allowed,
                                                   std::initializer_list<std::string_view> v2_only = {}) const {
    require_object();
    return known_members<View>(*this, allowed, v2_only);
  }

  // The cursor of member `key` of this object, whose value is `value`.
  [[nodiscard]] cursor member(View value, std::string_view key) const { return cursor(value, this, key); }

  [[nodiscard]] bool has(std::string_view key) const { return value_.find(key).has_value(); }

  [[nodiscard]] std::optional<cursor> optional(std::string_view key) const {
    const std::optional<View> found = value_.find(key);
    if (!found) return std::nullopt;
    return member(*found, key);
  }

  [[nodiscard]] cursor operator[](std::string_view key) const {
    auto found = optional(key);
    if (!found) reject(errc::missing_field, "field " + quote_text(key) + " is required", child(key));
    return *found;
  }

  // The number of elements of an array.
  [[nodiscard]] std::size_t size() const {
    if (value_.kind() != json_kind::array) wrong_type("an array");
    return value_.size();
  }

  // Calls `f(cursor)` for each element of an array, in order.
  template <class F>
  void for_each_element(F&& f) const {
    if (value_.kind() != json_kind::array) wrong_type("an array");
    std::size_t index = 0;
    value_.for_each_element([&](View element) { f(cursor(element, this, index++)); });
  }

  // Calls `f(key, cursor)` for each member of an object keyed by ids, in key
  // order.
  template <class F>
  void for_each_member_in_key_order(F&& f) const {
    require_object();
    std::vector<std::pair<std::string_view, View>> members;
    value_.for_each_member([&](std::string_view key, View value) { members.emplace_back(key, value); });
    std::sort(members.begin(), members.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (const auto& [key, value] : members) f(key, member(value, key));
  }

  [[nodiscard]] bool is_string() const { return value_.kind() == json_kind::string; }
  [[nodiscard]] bool is_array() const { return value_.kind() == json_kind::array; }

  [[nodiscard]] std::string_view str() const {
    if (value_.kind() != json_kind::string) wrong_type("a string");
    return value_.str();
  }

  [[nodiscard]] bool boolean() const {
    if (value_.kind() != json_kind::boolean) wrong_type("a boolean");
    return value_.boolean();
  }

  [[nodiscard]] std::uint64_t u64(std::uint64_t min = 0, std::uint64_t max = u64_max) const {
    // Non-negative integer literals that fit 64 bits are unsigned; a '-'
    // makes a negative integer, and a fraction, an exponent or a value beyond
    // 2^64-1 a floating one (json_view.hpp).
    switch (value_.kind()) {
      case json_kind::negative_integer:
        reject(errc::number_out_of_range, "expected an unsigned integer, got a negative number", path());
      case json_kind::floating:
        reject(errc::number_out_of_range,
               "expected an unsigned integer, got a fraction, an exponent or a number beyond 2^64-1", path());
      case json_kind::unsigned_integer:
        break;
      default:
        wrong_type("an unsigned integer");
    }
    const std::uint64_t n = value_.u64();
    if (n < min || n > max)
      reject(errc::number_out_of_range,
             std::to_string(n) + " is outside " + std::to_string(min) + ".." + std::to_string(max), path());
    return n;
  }

  template <class Id>
  [[nodiscard]] Id id() const {
    const std::string_view text = str();
    auto made = Id::make(text);
    if (!made) reject(errc::invalid_id, quote_text(text) + " is not an id" + std::string(id_rules), path());
    return *std::move(made);
  }

  template <class Enum>
  [[nodiscard]] Enum enumeration() const {
    const std::string_view text = str();
    auto value = enum_from_string<Enum>(text);
    if (!value) reject(errc::unknown_value, quote_text(text) + " is not one of " + names_of<Enum>(), path());
    return *value;
  }

 private:
  cursor(View value, const cursor* parent, std::string_view key)
      : value_(value), parent_(parent), key_(key), is_member_(true) {}
  cursor(View value, const cursor* parent, std::size_t index) : value_(value), parent_(parent), index_(index) {}

  friend class known_members<View>;

  [[nodiscard]] std::string child(std::string_view key) const { return path() + "/" + detail::json_pointer_token(key); }

  [[noreturn]] void wrong_type(std::string_view expected) const {
    reject(errc::wrong_type,
           "expected " + std::string(expected) + ", got " + std::string(detail::type_name(value_.kind())), path());
  }

  View value_;
  const cursor* parent_ = nullptr;
  std::string_view key_;   // a member's key
  std::size_t index_ = 0;  // an element's index
  bool is_member_ = false;
};

// An object's members by the names its schema allows, collected in one pass
// over the object: looking each of a resource's twelve fields up by scanning its
// members took 55 key comparisons per resource.
template <class View>
class known_members {
 public:
  known_members(const cursor<View>& object, std::initializer_list<std::string_view> names,
                std::initializer_list<std::string_view> v2_only)
      : object_(&object) {
    assert(names.size() <= names_.size());
    std::copy(names.begin(), names.end(), names_.begin());
    count_ = names.size();
    std::optional<std::string_view> unknown;
    object.value_.for_each_member([&](std::string_view key, View value) {
      if (const std::size_t i = index_of(key); i < count_)
        values_[i] = value;
      else if (!unknown || key < *unknown)
        unknown = key;
    });
    if (!unknown) return;
    if (std::find(v2_only.begin(), v2_only.end(), *unknown) != v2_only.end())
      throw detail::rejection{detail::v2_field_in_v1(*unknown, object.child(*unknown))};
    reject(errc::unknown_field, "field " + quote_text(*unknown) + " is not defined here", object.child(*unknown));
  }

  [[nodiscard]] std::optional<cursor<View>> optional(std::string_view name) const {
    const std::size_t i = index_of(name);
    assert(i < count_);  // a name the schema allows
    const std::optional<View>& value = values_[i];
    if (!value) return std::nullopt;
    return object_->member(*value, name);
  }

  [[nodiscard]] cursor<View> operator[](std::string_view name) const {
    auto found = optional(name);
    if (!found) reject(errc::missing_field, "field " + quote_text(name) + " is required", object_->child(name));
    return *found;
  }

 private:
  [[nodiscard]] std::size_t index_of(std::string_view name) const {
    return static_cast<std::size_t>(std::find(names_.begin(), names_.begin() + count_, name) - names_.begin());
  }

  const cursor<View>* object_;
  std::array<std::string_view, 12> names_{};
  std::array<std::optional<View>, 12> values_{};
  std::size_t count_ = 0;
};

// `[base, count]`: part of an image's mip levels or layers.
template <class View>
void read_span(const cursor<View>& c, std::uint32_t& base, std::uint32_t& count) {
  if (const std::size_t length = c.size(); length != 2)
    reject(errc::wrong_type, "expected [first, count], an array of 2 numbers, not " + std::to_string(length), c.path());
  constexpr std::uint64_t most = std::numeric_limits<std::uint32_t>::max();
  bool first = true;
  c.for_each_element([&](const cursor<View>& n) {
    if (std::exchange(first, false))
      base = static_cast<std::uint32_t>(n.u64(0, most));
    else
      count = static_cast<std::uint32_t>(n.u64(1, most));
  });
}

// One access: `"sampled"`, or `{"access": "sampled", "mips": [first, count],
// "layers": [first, count]}` for part of an image.
template <class View>
std::pair<resource_access, subresource_range> read_one_access(const cursor<View>& c) {
  if (c.is_string()) return {c.template enumeration<resource_access>(), {}};
  const known_members<View> m = c.require_object({"access", "mips", "layers"});
  subresource_range range;
  if (auto mips = m.optional("mips")) read_span(*mips, range.base_mip, range.mips);
  if (auto layers = m.optional("layers")) read_span(*layers, range.base_layer, range.layers);
  return {m["access"].template enumeration<resource_access>(), range};
}

// `{"<resource id>": ACCESS | [ACCESS, ...], ...}`: how the node uses some
// of its resources; the others are read-write. An array gives one image
// several accesses, each to its own mip levels or layers: the resource is
// listed again after itself for each further one. Fills node.access (and
// node.ranges where a range is named), parallel to node.resources. The keys
// come in key order and are matched against the resources in id order, so a
// node of many resources costs O(n log n), not a scan per key.
template <class View>
void read_access(const cursor<View>& c, plan_node& node) {
  node.access.assign(node.resources.size(), resource_access::read_write);
  std::vector<subresource_range> ranges(node.resources.size());
  struct further {
    std::size_t after;  // the listing it follows
    resource_access access;
    subresource_range range;
  };
  std::vector<further> more;
  std::vector<std::size_t> by_id(node.resources.size());
  for (std::size_t k = 0; k < by_id.size(); ++k) by_id[k] = k;
  std::stable_sort(by_id.begin(), by_id.end(),
                   [&](std::size_t a, std::size_t b) { return node.resources[a] < node.resources[b]; });
  auto next = by_id.begin();
  c.for_each_member_in_key_order([&](std::string_view key, const cursor<View>& value) {
    while (next != by_id.end() && node.resources[*next].view() < key) ++next;
    if (next == by_id.end() || node.resources[*next].view() != key)
      reject(errc::dangling_reference,
             "node " + node_id::quote(node.id.view()) + " declares an access to resource " + quote_text(key) +
                 ", which is not in its resources",
             value.path());
    const std::size_t k = *next;
    if (!value.is_array()) {
      std::tie(node.access[k], ranges[k]) = read_one_access(value);
      return;
    }
    if (value.size() == 0) reject(errc::invalid_access, "an array of accesses names at least one", value.path());
    bool first = true;
    value.for_each_element([&](const cursor<View>& e) {
      auto [access, range] = read_one_access(e);
      if (std::exchange(first, false))
        std::tie(node.access[k], ranges[k]) = std::pair(access, range);
      else
        more.push_back({k, access, range});
    });
  });
  const bool ranged =
      !more.empty() || std::any_of(ranges.begin(), ranges.end(), [](const subresource_range& r) { return !r.whole(); });
  if (!ranged) return;
  if (more.empty()) {
    node.ranges = std::move(ranges);
    return;
  }
  // Each further access right after the listing it extends, in the
  // array's order.
  std::stable_sort(more.begin(), more.end(), [](const further& a, const further& b) { return a.after < b.after; });
  std::vector<resource_id> resources;
  std::vector<resource_access> access;
  auto extra = more.begin();
  for (std::size_t k = 0; k < node.resources.size(); ++k) {
    resources.push_back(node.resources[k]);
    access.push_back(node.access[k]);
    node.ranges.push_back(ranges[k]);
    for (; extra != more.end() && extra->after == k; ++extra) {
      resources.push_back(node.resources[k]);
      access.push_back(extra->access);
      node.ranges.push_back(extra->range);
    }
  }
  node.resources = std::move(resources);
  node.access = std::move(access);
}

// A v2 node may also name its queue, the nodes it runs after and how it
// accesses its resources; in a v1 document those fields are unknown, and the
// error says that they are v2's.
template <class View>
plan_node read_node(const cursor<View>& c, plan_format format) {
  const known_members<View> m = format == plan_format::v1
                                    ? c.require_object({"id", "resources", "binding"}, {"queue", "after", "access"})
                                    : c.require_object({"id", "resources", "binding", "queue", "after", "access"});
  plan_node node;
  node.id = m["id"].template id<node_id>();
  m["resources"].for_each_element(
      [&](const cursor<View>& r) { node.resources.push_back(r.template id<resource_id>()); });
  if (auto binding = m.optional("binding")) node.binding = binding->template id<resource_id>();
  if (format == plan_format::v1) return node;
  if (auto queue = m.optional("queue")) {
    const std::string_view name = queue->str();
    const std::optional<queue_kind> kind = queue_kind_from_string(name);
    if (!kind)
      reject(errc::unknown_queue, quote_text(name) + " is not one of 'compute', 'transfer', 'async-compute'",
             queue->path());
    node.queue = *kind;
  }
  if (auto after = m.optional("after"))
    after->for_each_element([&](const cursor<View>& d) { node.after.push_back(d.template id<node_id>()); });
  if (auto access = m.optional("access")) read_access(*access, node);
  return node;
}

// `{"fixed": B}` or `{"base": B, "per_unit": U, "dimension": D}`; which form
// is meant is decided by its keys, so a mix is reported as an unknown field
// of the form that was started.
template <class View>
resource_demand read_demand(const cursor<View>& c) {
  c.require_object();
  const bool scaled = !c.has("fixed") && (c.has("base") || c.has("per_unit") || c.has("dimension"));
  if (!scaled) return resource_demand::fixed(c.require_object({"fixed"})["fixed"].u64());
  const known_members<View> m = c.require_object({"base", "per_unit", "dimension"});
  const std::uint64_t base = m["base"].u64();
  const std::uint64_t per_unit = m["per_unit"].u64();
  return resource_demand::scaled(base, per_unit, static_cast<std::uint8_t>(m["dimension"].u64(0, 2)));
}

template <class View>
storage_contract read_storage(const cursor<View>& c) {
  const known_members<View> m = c.require_object({"allocator", "view", "contract"});
  storage_contract storage;
  storage.allocator = m["allocator"].template enumeration<storage_allocator>();
  storage.view = m["view"].template enumeration<storage_view>();
  storage.digest = m["contract"].str();
  return storage;
}

// The divisor of "bucket/<k>" (decimal digits, no leading zero); nullopt
// for any other text. invalid_image at `path` for one that is not a power of
// two in 2..max_extent_divisor.
std::optional<std::uint32_t> bucket_divisor(std::string_view text, const std::string& path) {
  constexpr std::string_view prefix = "bucket/";
  if (!text.starts_with(prefix)) return std::nullopt;
  const std::string_view digits = text.substr(prefix.size());
  if (digits.empty() || digits.front() == '0' ||
      !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return std::nullopt;
  std::uint64_t k = 0;
  for (char c : digits.substr(0, 4)) k = k * 10 + static_cast<std::uint64_t>(c - '0');
  if (digits.size() > 4 || !detail::is_extent_divisor(k))
    reject(errc::invalid_image,
           quote_text(text) + ": the bucket's extent is divided by a power of two in 2.." +
               std::to_string(max_extent_divisor),
           path);
  return static_cast<std::uint32_t>(k);
}

// `{"format": F, "extent": "bucket" | "bucket/<k>" | [W, H], "mips": M,
// "layers": L}`, mips and layers 1 when left out; validate_plan checks the
// ranges.
template <class View>
image_desc read_image(const cursor<View>& c) {
  const known_members<View> m = c.require_object({"format", "extent", "mips", "layers"});
  constexpr std::uint64_t u32_max = std::numeric_limits<std::uint32_t>::max();
  image_desc image;
  image.format = m["format"].template enumeration<image_format>();
  const cursor<View> extent = m["extent"];
  if (extent.is_string()) {
    const std::string_view text = extent.str();
    if (text != "bucket") {
      const std::optional<std::uint32_t> divisor = bucket_divisor(text, extent.path());
      if (!divisor)
        reject(errc::unknown_value, quote_text(text) + " is not 'bucket', 'bucket/<k>' or [width, height]",
               extent.path());
      image.extent_divisor = *divisor;
    }
    image.bucket_extent = true;
  } else {
    if (const std::size_t length = extent.size(); length != 2)
      reject(errc::wrong_type,
             "expected 'bucket' or an array of 2 unsigned integers, got " + std::to_string(length) + " elements",
             extent.path());
    std::array<std::uint32_t, 2> wh{};
    std::size_t d = 0;
    extent.for_each_element([&](const cursor<View>& n) { wh[d++] = static_cast<std::uint32_t>(n.u64(0, u32_max)); });
    image.width = wh[0];
    image.height = wh[1];
  }
  if (auto mips = m.optional("mips")) image.mips = static_cast<std::uint32_t>(mips->u64(0, u32_max));
  if (auto layers = m.optional("layers")) image.layers = static_cast<std::uint32_t>(layers->u64(0, u32_max));
  return image;
}

// An image resource (v2): id, pool, kind, lifetime and its image; a
// buffer's fields are unknown there, and the error says why.
template <class View>
resource_descriptor read_image_resource(const cursor<View>& c) {
  c.require_object();
  for (std::string_view buffer_field : {"demand", "alignment", "usage", "element", "storage", "node"})
    if (auto field = c.optional(buffer_field))
      reject(errc::unknown_field,
             "field " + quote_text(buffer_field) +
                 " is not defined for an image: its bytes follow from its format "
                 "and extent",
             field->path());
  const known_members<View> m = c.require_object({"id", "pool", "kind", "lifetime", "image", "history_of", "kept"});
  resource_descriptor r;
  r.id = m["id"].template id<resource_id>();
  r.pool = m["pool"].template id<pool_id>();
  r.kind = m["kind"].template enumeration<allocation_kind>();
  r.lifetime = m["lifetime"].template enumeration<allocation_lifetime>();
  r.image = read_image(m["image"]);
  if (auto of = m.optional("history_of")) r.history_of = of->template id<resource_id>();
  if (auto kept = m.optional("kept")) r.kept = kept->boolean();
  return r;
}

template <class View>
resource_descriptor read_resource(const cursor<View>& c, plan_format format) {
  if (format == plan_format::v2 && c.require_object().has("image")) return read_image_resource(c);
  // `history_of` (v2): the current whose previous this is (History).
  const known_members<View> m = format == plan_format::v1
                                    ? c.require_object({"id", "pool", "kind", "node", "demand", "alignment", "lifetime",
                                                        "usage", "element", "storage"},
                                                       {"image", "history_of", "kept"})
                                    : c.require_object({"id", "pool", "kind", "node", "demand", "alignment", "lifetime",
                                                        "usage", "element", "storage", "history_of", "kept"});
  resource_descriptor r;
  r.id = m["id"].template id<resource_id>();
  r.pool = m["pool"].template id<pool_id>();
  r.kind = m["kind"].template enumeration<allocation_kind>();
  // Which fields exist depends on the kind; that is the schema's business, so
  // it is reported here, before validate_plan looks at references.
  if (r.kind == allocation_kind::binding) {
    r.node = m["node"].template id<node_id>();
  } else if (auto node = m.optional("node")) {
    reject(errc::unknown_field, "a workspace resource has no owning node", node->path());
  }
  r.demand = read_demand(m["demand"]);
  r.alignment = m["alignment"].u64();
  r.lifetime = m["lifetime"].template enumeration<allocation_lifetime>();
  r.usage = m["usage"].template enumeration<buffer_usage>();
  r.element = m["element"].template enumeration<element_type>();
  r.storage = read_storage(m["storage"]);
  if (format == plan_format::v1) return r;
  if (auto of = m.optional("history_of")) r.history_of = of->template id<resource_id>();
  if (auto kept = m.optional("kept")) r.kept = kept->boolean();
  return r;
}

template <class View>
bucket_spec read_bucket(const cursor<View>& c) {
  const known_members<View> m = c.require_object({"class", "capacity", "budgets"});
  bucket_spec bucket;
  bucket.cls = m["class"].template id<bucket_class>();
  const cursor<View> capacity = m["capacity"];
  // A capacity is a fixed-shape tuple: another length is another type.
  if (const std::size_t length = capacity.size(); length != bucket.dims.size())
    reject(errc::wrong_type, "expected an array of 3 unsigned integers, got " + std::to_string(length) + " elements",
           capacity.path());
  std::size_t d = 0;
  capacity.for_each_element([&](const cursor<View>& dim) { bucket.dims[d++] = dim.u64(1); });
  m["budgets"].for_each_element([&](const cursor<View>& b) {
    const known_members<View> budget = b.require_object({"pool", "min", "max"});
    bucket.budgets.push_back({budget["pool"].template id<pool_id>(), budget["min"].u64(), budget["max"].u64()});
  });
  return bucket;
}

// A pool's options: its liveness; in a v2 document also its memory class,
// and with one the liveness may be left out (conservative). In a v1 document
// `memory` is unknown, and the error says that it is v2's.
template <class View>
pool_option read_pool_option(const pool_id& pool, const cursor<View>& c, plan_format format) {
  if (format == plan_format::v1)
    return {pool, c.require_object({"liveness"}, {"memory"})["liveness"].template enumeration<liveness_mode>()};
  const known_members<View> m = c.require_object({"liveness", "memory"});
  pool_option option{pool};
  if (auto memory = m.optional("memory")) option.memory = memory->template enumeration<memory_class>();
  if (auto liveness = m.optional("liveness"); liveness || !option.memory)
    option.liveness = m["liveness"].template enumeration<liveness_mode>();
  return option;
}

template <class View>
plan read_plan(const cursor<View>& root) {
  root.require_object();
  // The format first: another document type should say so, not list its
  // fields as unknown.
  const cursor<View> format = root["format"];
  plan p;
  if (format.str() == to_string(plan_format::v2))
    p.format = plan_format::v2;
  else if (format.str() != to_string(plan_format::v1))
    reject(errc::unsupported_format, quote_text(format.str()) + " is not 'ferrum.plan.v1' or 'ferrum.plan.v2'",
           format.path());
  // `cull` (v2): whether compile culls the nodes nothing reads (Culling).
  const known_members<View> m =
      p.format == plan_format::v1
          ? root.require_object({"format", "nodes", "resources", "buckets", "pools", "lanes", "budget_bytes"}, {"cull"})
          : root.require_object({"format", "nodes", "resources", "buckets", "pools", "lanes", "budget_bytes", "cull"});

  const cursor<View> nodes = m["nodes"];
  p.nodes.reserve(nodes.size());
  nodes.for_each_element([&](const cursor<View>& c) { p.nodes.push_back(read_node(c, p.format)); });
  const cursor<View> resources = m["resources"];
  p.resources.reserve(resources.size());
  resources.for_each_element([&](const cursor<View>& c) { p.resources.push_back(read_resource(c, p.format)); });
  m["buckets"].for_each_element([&](const cursor<View>& c) { p.buckets.push_back(read_bucket(c)); });
  if (auto pools = m.optional("pools")) {
    pools->for_each_member_in_key_order([&](std::string_view key, const cursor<View>& options) {
      auto pool = pool_id::make(key);
      if (!pool)
        reject(errc::invalid_id, quote_text(key) + " is not a pool id" + std::string(id_rules), options.path());
      p.pools.push_back(read_pool_option(*pool, options, p.format));
    });
  }
  p.lanes = static_cast<std::uint32_t>(m["lanes"].u64(1, std::numeric_limits<std::uint32_t>::max()));
  p.budget_bytes = m["budget_bytes"].u64();
  if (p.format == plan_format::v2)
    if (auto cull = m.optional("cull")) p.cull = cull->boolean();
  return p;
}

template <class View>
result<plan> read_and_validate(View root, plan_checks checks) {
  plan p = read_plan(cursor<View>(root));
  if (checks == plan_checks::schema_only) return p;
  if (auto valid = validate_plan(p); !valid) return valid.error();
  return p;
}

}  // namespace

result<plan> parse_plan(std::string_view text) { return parse_plan(text, plan_checks::validated); }

result<plan> parse_plan(std::string_view text, plan_checks checks) {
  try {
    simdjson::dom::parser parser;
    if (const auto root = detail::parse_fast_dom(parser, text))
      return read_and_validate(detail::fast_view(*root), checks);
    return detail::parse_plan_reference(text, checks);
  } catch (const detail::rejection& r) {
    return r.error;
  }
}

namespace detail {

result<plan> parse_plan_reference(std::string_view text) { return parse_plan_reference(text, plan_checks::validated); }

result<plan> parse_plan_reference(std::string_view text, plan_checks checks) {
  try {
    const nlohmann::json document = parse_reference_dom(text);
    return read_and_validate(reference_view(document), checks);
  } catch (const rejection& r) {
    return r.error;
  }
}

}  // namespace detail

}  // namespace ferrum
