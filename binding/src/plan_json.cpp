// Reads `ferrum.plan.v1` documents (plan_json.hpp) in two passes.
//
// 1. nlohmann's SAX parser drives a DOM builder of ours (linear in the text)
//    that rejects duplicate keys (a DOM would silently keep only the last
//    one) and nesting deeper than max_plan_json_depth as they come.
// 2. A walk over the DOM checks the schema — types, field sets, number ranges,
//    ids, enum names — and fills a `plan`, which validate_plan then checks.
//
// Both passes report by throwing `rejection`, caught in parse_plan, so every
// check is one line; nothing else here throws on bad input.
#include "ferrum/binding/plan_json.hpp"

#include "json_pointer.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ferrum {
namespace {

using json = nlohmann::json;

constexpr std::string_view plan_format = "ferrum.plan.v1";
constexpr std::uint64_t u64_max = std::numeric_limits<std::uint64_t>::max();
constexpr std::string_view id_rules = " (1 to 128 of a-z 0-9 / - . _ @)";

struct rejection {
  ferrum::error error;
};

[[noreturn]] void reject(errc code, std::string detail, std::string path) {
  throw rejection{make_error(code, std::move(detail), std::move(path))};
}

// Builds the DOM from nlohmann's SAX events in one pass, linear in the text,
// rejecting duplicate keys (a DOM would silently keep only the last one) and
// nesting deeper than max_plan_json_depth as they come, with the pointer of
// the offending element. nlohmann's callback parser can make the same checks,
// but it rescans every object at its end once a callback is installed, which
// made loading quadratic (100k nodes: 5.8 s, half of it in end_object).
class dom_builder {
 public:
  [[nodiscard]] json take() { return std::move(root_); }

  // The pointer of the value the parser is reading but has not reported: an
  // object's member is named by its key event already, an array's element
  // only by the value event still to come.
  [[nodiscard]] std::string pending_path() const {
    if (frames_.empty() || !frames_.back().value->is_array()) return path();
    return path(frames_.size() - 1) + "/" + std::to_string(frames_.back().value->size());
  }

  // nlohmann's SAX interface.
  bool null() { return put(nullptr) != nullptr; }
  bool boolean(bool v) { return put(v) != nullptr; }
  bool number_integer(json::number_integer_t v) { return put(v) != nullptr; }
  bool number_unsigned(json::number_unsigned_t v) { return put(v) != nullptr; }
  bool number_float(json::number_float_t v, const json::string_t& /*text*/) { return put(v) != nullptr; }
  bool string(json::string_t& v) { return put(std::move(v)) != nullptr; }
  bool binary(json::binary_t& v) { return put(json::binary(std::move(v))) != nullptr; }
  bool start_object(std::size_t /*elements*/) { return open(json::object()); }
  bool start_array(std::size_t /*elements*/) { return open(json::array()); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }

  bool key(json::string_t& name) {
    frame& object = frames_.back();
    object.token = detail::json_pointer_token(name);
    auto [member, inserted] = object.value->get_ref<json::object_t&>().try_emplace(name);
    if (!inserted) reject(errc::duplicate_key, "key " + quote_text(name) + " appears twice", path());
    object.member = &member->second;
    return true;
  }

  bool parse_error(std::size_t /*position*/, const std::string& /*token*/, const nlohmann::detail::exception& e) {
    // Error 406: a number literal beyond the range of a double (1e400).
    if (e.id == 406)
      reject(errc::number_out_of_range, "expected an unsigned integer, got a number beyond the range of a double",
             pending_path());
    // what() is "[json.exception.parse_error.101] parse error at line 1, ...".
    std::string_view message = e.what();
    if (const auto end = message.find("] "); end != std::string_view::npos) message.remove_prefix(end + 2);
    if (const auto* syntax = dynamic_cast<const json::parse_error*>(&e))
      reject(errc::json_syntax, "at byte " + std::to_string(syntax->byte) + ": " + printable(message, 240), "");
    reject(errc::json_syntax, printable(e.what(), 240), "");
  }

 private:
  struct frame {
    json* value;             // the open container
    json* member = nullptr;  // an object's member whose key came last
    std::string token;       // the pointer token of its current element
  };

  // Places `value` where the parser is: the root, an array's next element or
  // the member of the last key. Returns where it went.
  json* put(json value) {
    if (frames_.empty()) {
      root_ = std::move(value);
      return &root_;
    }
    frame& top = frames_.back();
    if (top.value->is_array()) {
      top.token = std::to_string(top.value->size());
      top.value->push_back(std::move(value));
      return &top.value->back();
    }
    *top.member = std::move(value);
    return top.member;
  }

  bool open(json container) {
    json* placed = put(std::move(container));
    if (frames_.size() >= max_plan_json_depth)
      reject(errc::json_too_deep, "more than " + std::to_string(max_plan_json_depth) + " levels of nesting", path());
    frames_.push_back({placed, nullptr, {}});
    return true;
  }

  bool close() {
    frames_.pop_back();
    return true;
  }

  // The pointer of the current element of the outermost `depth` containers.
  [[nodiscard]] std::string path(std::size_t depth) const {
    std::string out;
    for (std::size_t i = 0; i < depth; ++i) out += "/" + frames_[i].token;
    return out;
  }
  [[nodiscard]] std::string path() const { return path(frames_.size()); }

  json root_;
  std::vector<frame> frames_;
};

json parse_document(std::string_view text) {
  // nlohmann takes a NUL byte outside a string for the end of the input and
  // ignores what follows; well-formed JSON text holds none.
  if (const auto nul = text.find('\0'); nul != std::string_view::npos)
    reject(errc::json_syntax, "at byte " + std::to_string(nul + 1) + ": a NUL byte", "");
  dom_builder builder;
  try {
    json::sax_parse(text.begin(), text.end(), &builder);
  } catch (const json::exception& e) {
    // Any other exception of the parser (none is known to reach here).
    reject(errc::json_syntax, printable(e.what(), 240), "");
  }
  return builder.take();
}

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

// A value of the document and its JSON pointer; each accessor checks what it
// reads and rejects with that pointer.
class cursor {
 public:
  cursor(const json& value, std::string path) : value_(&value), path_(std::move(path)) {}

  [[nodiscard]] const std::string& path() const noexcept { return path_; }

  const cursor& require_object() const {
    if (!value_->is_object()) wrong_type("an object");
    return *this;
  }

  // Checks that this is an object whose keys are all in `allowed`; the first
  // unknown key in key order is rejected.
  const cursor& require_object(std::initializer_list<std::string_view> allowed) const {
    require_object();
    for (auto it = value_->begin(); it != value_->end(); ++it) {
      bool known = false;
      for (std::string_view name : allowed) known = known || it.key() == name;
      if (!known)
        reject(errc::unknown_field, "field " + quote_text(it.key()) + " is not defined here", child(it.key()));
    }
    return *this;
  }

  [[nodiscard]] bool has(std::string_view key) const { return value_->contains(key); }

  [[nodiscard]] std::optional<cursor> optional(std::string_view key) const {
    auto it = value_->find(key);
    if (it == value_->end()) return std::nullopt;
    return cursor(*it, child(key));
  }

  [[nodiscard]] cursor operator[](std::string_view key) const {
    auto found = optional(key);
    if (!found) reject(errc::missing_field, "field " + quote_text(key) + " is required", child(key));
    return *found;
  }

  [[nodiscard]] std::vector<cursor> elements() const {
    if (!value_->is_array()) wrong_type("an array");
    std::vector<cursor> out;
    out.reserve(value_->size());
    for (std::size_t i = 0; i < value_->size(); ++i) out.emplace_back((*value_)[i], path_ + "/" + std::to_string(i));
    return out;
  }

  // The members of an object keyed by ids, in key order.
  [[nodiscard]] std::vector<std::pair<std::string, cursor>> members() const {
    require_object();
    std::vector<std::pair<std::string, cursor>> out;
    for (auto it = value_->begin(); it != value_->end(); ++it)
      out.emplace_back(it.key(), cursor(it.value(), child(it.key())));
    return out;
  }

  [[nodiscard]] const std::string& str() const {
    if (!value_->is_string()) wrong_type("a string");
    return value_->get_ref<const std::string&>();
  }

  [[nodiscard]] std::uint64_t u64(std::uint64_t min = 0, std::uint64_t max = u64_max) const {
    // nlohmann keeps non-negative integer literals that fit 64 bits as
    // number_unsigned; a '-' makes number_integer, and a fraction, an exponent
    // or a value beyond 2^64-1 makes number_float.
    if (value_->is_number_integer() && !value_->is_number_unsigned())
      reject(errc::number_out_of_range, "expected an unsigned integer, got a negative number", path_);
    if (value_->is_number_float())
      reject(errc::number_out_of_range,
             "expected an unsigned integer, got a fraction, an exponent or a number beyond 2^64-1", path_);
    if (!value_->is_number_unsigned()) wrong_type("an unsigned integer");
    const auto n = value_->get<std::uint64_t>();
    if (n < min || n > max)
      reject(errc::number_out_of_range,
             std::to_string(n) + " is outside " + std::to_string(min) + ".." + std::to_string(max), path_);
    return n;
  }

  template <class Id>
  [[nodiscard]] Id id() const {
    const std::string& text = str();
    auto made = Id::make(text);
    if (!made) reject(errc::invalid_id, quote_text(text) + " is not an id" + std::string(id_rules), path_);
    return *made;
  }

  template <class Enum>
  [[nodiscard]] Enum enumeration() const {
    const std::string& text = str();
    auto value = enum_from_string<Enum>(text);
    if (!value) reject(errc::unknown_value, quote_text(text) + " is not one of " + names_of<Enum>(), path_);
    return *value;
  }

 private:
  [[nodiscard]] std::string child(std::string_view key) const { return path_ + "/" + detail::json_pointer_token(key); }

  [[noreturn]] void wrong_type(std::string_view expected) const {
    reject(errc::wrong_type, "expected " + std::string(expected) + ", got " + value_->type_name(), path_);
  }

  const json* value_;
  std::string path_;
};

plan_node read_node(const cursor& c) {
  c.require_object({"id", "resources", "binding"});
  plan_node node;
  node.id = c["id"].id<node_id>();
  for (const cursor& r : c["resources"].elements()) node.resources.push_back(r.id<resource_id>());
  if (auto binding = c.optional("binding")) node.binding = binding->id<resource_id>();
  return node;
}

// `{"fixed": B}` or `{"base": B, "per_unit": U, "dimension": D}`; which form
// is meant is decided by its keys, so a mix is reported as an unknown field
// of the form that was started.
resource_demand read_demand(const cursor& c) {
  c.require_object();
  const bool scaled = !c.has("fixed") && (c.has("base") || c.has("per_unit") || c.has("dimension"));
  if (!scaled) {
    c.require_object({"fixed"});
    return resource_demand::fixed(c["fixed"].u64());
  }
  c.require_object({"base", "per_unit", "dimension"});
  const std::uint64_t base = c["base"].u64();
  const std::uint64_t per_unit = c["per_unit"].u64();
  return resource_demand::scaled(base, per_unit, static_cast<std::uint8_t>(c["dimension"].u64(0, 2)));
}

storage_contract read_storage(const cursor& c) {
  c.require_object({"allocator", "view", "contract"});
  storage_contract storage;
  storage.allocator = c["allocator"].enumeration<storage_allocator>();
  storage.view = c["view"].enumeration<storage_view>();
  storage.digest = c["contract"].str();
  return storage;
}

resource_descriptor read_resource(const cursor& c) {
  c.require_object({"id", "pool", "kind", "node", "demand", "alignment", "lifetime", "usage", "element", "storage"});
  resource_descriptor r;
  r.id = c["id"].id<resource_id>();
  r.pool = c["pool"].id<pool_id>();
  r.kind = c["kind"].enumeration<allocation_kind>();
  // Which fields exist depends on the kind; that is the schema's business, so
  // it is reported here, before validate_plan looks at references.
  if (r.kind == allocation_kind::binding) {
    r.node = c["node"].id<node_id>();
  } else if (auto node = c.optional("node")) {
    reject(errc::unknown_field, "a workspace resource has no owning node", node->path());
  }
  r.demand = read_demand(c["demand"]);
  r.alignment = c["alignment"].u64();
  r.lifetime = c["lifetime"].enumeration<allocation_lifetime>();
  r.usage = c["usage"].enumeration<buffer_usage>();
  r.element = c["element"].enumeration<element_type>();
  r.storage = read_storage(c["storage"]);
  return r;
}

bucket_spec read_bucket(const cursor& c) {
  c.require_object({"class", "capacity", "budgets"});
  bucket_spec bucket;
  bucket.cls = c["class"].id<bucket_class>();
  const cursor capacity = c["capacity"];
  const std::vector<cursor> dims = capacity.elements();
  // A capacity is a fixed-shape tuple: another length is another type.
  if (dims.size() != bucket.dims.size())
    reject(errc::wrong_type,
           "expected an array of 3 unsigned integers, got " + std::to_string(dims.size()) + " elements",
           capacity.path());
  for (std::size_t d = 0; d < dims.size(); ++d) bucket.dims[d] = dims[d].u64(1);
  for (const cursor& b : c["budgets"].elements()) {
    b.require_object({"pool", "min", "max"});
    bucket.budgets.push_back({b["pool"].id<pool_id>(), b["min"].u64(), b["max"].u64()});
  }
  return bucket;
}

plan read_plan(const cursor& root) {
  root.require_object();
  // The format first: another document type should say so, not list its
  // fields as unknown.
  const cursor format = root["format"];
  if (format.str() != plan_format)
    reject(errc::unsupported_format, quote_text(format.str()) + " is not 'ferrum.plan.v1'", format.path());
  root.require_object({"format", "nodes", "resources", "buckets", "pools", "lanes", "budget_bytes"});

  plan p;
  for (const cursor& c : root["nodes"].elements()) p.nodes.push_back(read_node(c));
  for (const cursor& c : root["resources"].elements()) p.resources.push_back(read_resource(c));
  for (const cursor& c : root["buckets"].elements()) p.buckets.push_back(read_bucket(c));
  if (auto pools = root.optional("pools")) {
    for (const auto& [key, options] : pools->members()) {
      auto pool = pool_id::make(key);
      if (!pool)
        reject(errc::invalid_id, quote_text(key) + " is not a pool id" + std::string(id_rules), options.path());
      options.require_object({"liveness"});
      p.pools.push_back({*pool, options["liveness"].enumeration<liveness_mode>()});
    }
  }
  p.lanes = static_cast<std::uint32_t>(root["lanes"].u64(1, std::numeric_limits<std::uint32_t>::max()));
  p.budget_bytes = root["budget_bytes"].u64();
  return p;
}

}  // namespace

result<plan> parse_plan(std::string_view text) {
  try {
    const json document = parse_document(text);
    plan p = read_plan(cursor(document, ""));
    if (auto valid = validate_plan(p); !valid) return valid.error();
    return p;
  } catch (const rejection& r) {
    return r.error;
  }
}

}  // namespace ferrum
