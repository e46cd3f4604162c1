// json_view — one read-only interface over the two DOMs the plan loader
// reads: nlohmann's (the reference parse) and simdjson's (the fast parse), so
// the schema walk in plan_json.cpp is written once and means the same on both.
//
// A view is a cheap handle to a value; kinds and type names follow nlohmann's
// reading of a literal (non-negative integers unsigned, '-' integers
// negative, anything with a fraction or exponent floating).
#pragma once

#include <simdjson.h>
#include <nlohmann/json.hpp>

#include <cassert>
#include <cstdint>
#include <optional>
#include <string_view>

namespace ferrum::detail {

enum class json_kind : std::uint8_t {
  null,
  boolean,
  unsigned_integer,
  negative_integer,
  floating,
  string,
  array,
  object
};

// The type's name in errors ("expected an object, got array").
[[nodiscard]] constexpr std::string_view type_name(json_kind kind) noexcept {
  switch (kind) {
    case json_kind::null:
      return "null";
    case json_kind::boolean:
      return "boolean";
    case json_kind::unsigned_integer:
    case json_kind::negative_integer:
    case json_kind::floating:
      return "number";
    case json_kind::string:
      return "string";
    case json_kind::array:
      return "array";
    case json_kind::object:
      return "object";
  }
  return "unknown";
}

// A value of the reference DOM. Members iterate in key order (nlohmann's
// objects are maps).
class reference_view {
 public:
  explicit reference_view(const nlohmann::json& value) noexcept : value_(&value) {}

  [[nodiscard]] json_kind kind() const noexcept {
    switch (value_->type()) {
      case nlohmann::json::value_t::boolean:
        return json_kind::boolean;
      case nlohmann::json::value_t::number_unsigned:
        return json_kind::unsigned_integer;
      case nlohmann::json::value_t::number_integer:
        return json_kind::negative_integer;
      case nlohmann::json::value_t::number_float:
        return json_kind::floating;
      case nlohmann::json::value_t::string:
        return json_kind::string;
      case nlohmann::json::value_t::array:
        return json_kind::array;
      case nlohmann::json::value_t::object:
        return json_kind::object;
      default:
        return json_kind::null;  // null; the builder makes no binary or discarded values
    }
  }
  // Only for the kind named.
  [[nodiscard]] std::string_view str() const { return value_->get_ref<const std::string&>(); }
  [[nodiscard]] std::uint64_t u64() const { return value_->get<std::uint64_t>(); }
  [[nodiscard]] bool boolean() const { return value_->get<bool>(); }
  [[nodiscard]] std::size_t size() const noexcept { return value_->size(); }

  template <class F>
  void for_each_element(F&& f) const {
    for (const nlohmann::json& element : *value_) f(reference_view(element));
  }
  template <class F>
  void for_each_member(F&& f) const {
    for (const auto& [key, value] : value_->items()) f(std::string_view(key), reference_view(value));
  }
  [[nodiscard]] std::optional<reference_view> find(std::string_view key) const {
    const auto it = value_->find(key);
    if (it == value_->end()) return std::nullopt;
    return reference_view(*it);
  }

 private:
  const nlohmann::json* value_;
};

// A value of the fast DOM. Members iterate in document order.
class fast_view {
 public:
  explicit fast_view(simdjson::dom::element value) noexcept : value_(value) {}

  [[nodiscard]] json_kind kind() const noexcept {
    using simdjson::dom::element_type;
    switch (value_.type()) {
      case element_type::BOOL:
        return json_kind::boolean;
      // simdjson reads integers that fit int64 as INT64, larger ones as
      // UINT64; json_fast_dom declines texts that may hold -0.
      case element_type::INT64:
        return value_.get_int64().value_unsafe() < 0 ? json_kind::negative_integer : json_kind::unsigned_integer;
      case element_type::UINT64:
        return json_kind::unsigned_integer;
      case element_type::DOUBLE:
        return json_kind::floating;
      case element_type::STRING:
        return json_kind::string;
      case element_type::ARRAY:
        return json_kind::array;
      case element_type::OBJECT:
        return json_kind::object;
      case element_type::NULL_VALUE:
        return json_kind::null;
    }
    return json_kind::null;
  }
  [[nodiscard]] std::string_view str() const { return value_.get_string().value_unsafe(); }
  [[nodiscard]] bool boolean() const { return value_.get_bool().value_unsafe(); }
  [[nodiscard]] std::uint64_t u64() const {
    if (value_.type() == simdjson::dom::element_type::INT64)
      return static_cast<std::uint64_t>(value_.get_int64().value_unsafe());
    return value_.get_uint64().value_unsafe();
  }
  // Only for arrays and objects, as the kind says. (simdjson's get(T&)
  // rather than value_unsafe(): g++ 12 takes the latter's temporaries for
  // uninitialized.)
  [[nodiscard]] std::size_t size() const { return array().size(); }

  template <class F>
  void for_each_element(F&& f) const {
    for (simdjson::dom::element element : array()) f(fast_view(element));
  }
  template <class F>
  void for_each_member(F&& f) const {
    for (simdjson::dom::key_value_pair member : object()) f(member.key, fast_view(member.value));
  }
  [[nodiscard]] std::optional<fast_view> find(std::string_view key) const {
    simdjson::dom::element found;
    if (object().at_key(key).get(found) != simdjson::SUCCESS) return std::nullopt;
    return fast_view(found);
  }

 private:
  [[nodiscard]] simdjson::dom::array array() const {
    simdjson::dom::array out;
    [[maybe_unused]] const simdjson::error_code error = value_.get(out);
    assert(error == simdjson::SUCCESS);  // the caller checked the kind
    return out;
  }
  [[nodiscard]] simdjson::dom::object object() const {
    simdjson::dom::object out;
    [[maybe_unused]] const simdjson::error_code error = value_.get(out);
    assert(error == simdjson::SUCCESS);  // the caller checked the kind
    return out;
  }

  simdjson::dom::element value_;
};

}  // namespace ferrum::detail
