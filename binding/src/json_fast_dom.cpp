#include "json_fast_dom.hpp"

#include "ferrum/binding/plan_json.hpp"

#include "json_pointer.hpp"
#include "plan_rejection.hpp"

#include <algorithm>
#include <array>
#include <cstddef>
#include <string>
#include <unordered_set>

namespace ferrum::detail {
namespace {

namespace dom = simdjson::dom;

// Whether `text` may hold the integer -0 outside a string: a "-0" not followed
// by a digit, fraction or exponent, after a ':', ',' or '[' (or at the start).
// A string may match too ("a:-0"); then the reference parse decides, which
// only costs time.
bool may_hold_negative_zero(std::string_view text) {
  for (auto at = text.find("-0"); at != std::string_view::npos; at = text.find("-0", at + 1)) {
    const std::size_t next = at + 2;
    if (next < text.size() && std::string_view("0123456789.eE").find(text[next]) != std::string_view::npos) continue;
    std::size_t before = at;
    while (before > 0 && std::string_view(" \t\r\n").find(text[before - 1]) != std::string_view::npos) --before;
    if (before == 0 || std::string_view(":,[").find(text[before - 1]) != std::string_view::npos) return true;
  }
  return false;
}

// Where the walk is: a chain of members and elements from the root, turned
// into a JSON pointer only when an error needs one.
struct position {
  const position* parent;
  std::string_view key;  // a member's key; empty with `index` for an element
  std::size_t index;
  bool is_member;

  [[nodiscard]] std::string pointer() const {
    if (parent == nullptr) return "";
    return parent->pointer() + "/" + (is_member ? json_pointer_token(key) : std::to_string(index));
  }
};

// Objects up to this many members are checked for duplicates pairwise; larger
// ones (a plan's objects have at most ten members, but a file may hold
// anything) through a hash set.
constexpr std::size_t pairwise_members = 16;

void check_structure(dom::element value, const position& at, std::size_t depth) {
  const dom::element_type type = value.type();
  if (type != dom::element_type::ARRAY && type != dom::element_type::OBJECT) return;
  // As the reference parse: the container that would open level
  // max_plan_json_depth + 1 is rejected, at its own pointer.
  if (depth > max_plan_json_depth)
    reject(errc::json_too_deep, "more than " + std::to_string(max_plan_json_depth) + " levels of nesting",
           at.pointer());
  if (type == dom::element_type::ARRAY) {
    dom::array elements;
    if (value.get(elements) != simdjson::SUCCESS) return;  // it is an array
    std::size_t index = 0;
    for (dom::element element : elements) {
      check_structure(element, position{&at, {}, index++, false}, depth + 1);
    }
    return;
  }
  std::array<std::string_view, pairwise_members> keys;
  std::size_t key_count = 0;
  std::unordered_set<std::string_view> key_set;  // from the member past pairwise_members on
  dom::object members;
  if (value.get(members) != simdjson::SUCCESS) return;  // it is an object
  for (dom::key_value_pair member : members) {
    const position here{&at, member.key, 0, true};
    bool repeated = false;
    if (key_count < keys.size()) {
      repeated = std::find(keys.begin(), keys.begin() + key_count, member.key) != keys.begin() + key_count;
      keys[key_count++] = member.key;
    } else {
      if (key_set.empty()) key_set.insert(keys.begin(), keys.end());
      repeated = !key_set.insert(member.key).second;
    }
    if (repeated) reject(errc::duplicate_key, "key " + quote_text(member.key) + " appears twice", here.pointer());
    check_structure(member.value, here, depth + 1);
  }
}

}  // namespace

std::optional<dom::element> parse_fast_dom(dom::parser& parser, std::string_view text) {
  if (may_hold_negative_zero(text)) return std::nullopt;
  dom::element root;
  if (parser.parse(text.data(), text.size()).get(root) != simdjson::SUCCESS) return std::nullopt;
  check_structure(root, position{nullptr, {}, 0, false}, 1);
  return root;
}

}  // namespace ferrum::detail
