#include "json_reference_dom.hpp"

#include "ferrum/binding/plan_json.hpp"

#include "json_pointer.hpp"
#include "plan_rejection.hpp"

#include <string>
#include <utility>
#include <vector>

namespace ferrum::detail {
namespace {

using json = nlohmann::json;

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
    object.token = json_pointer_token(name);
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

}  // namespace

json parse_reference_dom(std::string_view text) {
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

}  // namespace ferrum::detail
