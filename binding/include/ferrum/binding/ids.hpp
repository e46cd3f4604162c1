// ferrum/binding/ids.hpp — validated, totally ordered identifiers.
//
// An id is non-empty, at most 128 characters of `a-z 0-9 / - . _ @`. Ids are
// checked once, when made; afterwards they are plain ordered strings.
//
//   ferrum::result<ferrum::node_id> id = ferrum::node_id::make("node/first");
//   if (!id) ...;  // errc::invalid_id
#pragma once

#include "ferrum/error.hpp"

#include <array>
#include <compare>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace ferrum {

inline constexpr std::size_t max_id_length = 128;

// True when `text` is a well-formed id.
[[nodiscard]] bool is_valid_id(std::string_view text) noexcept;

// A string id of one kind; `Tag` keeps kinds apart (a node id is no resource id).
template <class Tag>
class basic_id {
 public:
  // Makes an id; errc::invalid_id if `text` breaks the rules.
  [[nodiscard]] static result<basic_id> make(std::string_view text) {
    if (!is_valid_id(text)) return make_error(errc::invalid_id, quote(text));
    return basic_id(std::string(text));
  }

  basic_id() = default;

  [[nodiscard]] const std::string& str() const noexcept { return value_; }
  [[nodiscard]] std::string_view view() const noexcept { return value_; }

  friend bool operator==(const basic_id&, const basic_id&) = default;
  friend std::strong_ordering operator<=>(const basic_id& a, const basic_id& b) noexcept {
    return a.value_.compare(b.value_) <=> 0;
  }

  // Quotes a string for error details (quote_text).
  [[nodiscard]] static std::string quote(std::string_view text) { return quote_text(text); }

 private:
  explicit basic_id(std::string value) : value_(std::move(value)) {}
  std::string value_;
};

struct node_id_tag {};
struct resource_id_tag {};
struct pool_id_tag {};
struct bucket_class_tag {};

using node_id = basic_id<node_id_tag>;
using resource_id = basic_id<resource_id_tag>;
using pool_id = basic_id<pool_id_tag>;
// The class of a bucket ("step", "frame.hd"); may not contain '@', which
// separates class and capacity in a bucket id.
using bucket_class = basic_id<bucket_class_tag>;

// A bucket's capacity dimensions.
using bucket_capacity = std::array<std::uint64_t, 3>;

// A bucket's id: `<class>@<d0>x<d1>x<d2>`.
class bucket_id {
 public:
  // errc::invalid_id when the class contains '@' or the id would be too long.
  [[nodiscard]] static result<bucket_id> make(const bucket_class& cls, const bucket_capacity& dims);

  bucket_id() = default;

  [[nodiscard]] const std::string& str() const noexcept { return value_; }

  friend bool operator==(const bucket_id&, const bucket_id&) = default;
  friend std::strong_ordering operator<=>(const bucket_id& a, const bucket_id& b) noexcept {
    return a.value_.compare(b.value_) <=> 0;
  }

 private:
  explicit bucket_id(std::string value) : value_(std::move(value)) {}
  std::string value_;
};

}  // namespace ferrum

template <class Tag>
struct std::hash<ferrum::basic_id<Tag>> {
  std::size_t operator()(const ferrum::basic_id<Tag>& id) const noexcept {
    return std::hash<std::string_view>{}(id.view());
  }
};

template <>
struct std::hash<ferrum::bucket_id> {
  std::size_t operator()(const ferrum::bucket_id& id) const noexcept { return std::hash<std::string>{}(id.str()); }
};
