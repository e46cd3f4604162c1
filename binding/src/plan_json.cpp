// Placeholder: being written (plan loader).
#include "ferrum/binding/plan_json.hpp"

namespace ferrum {
result<plan> parse_plan(std::string_view) { return make_error(errc::json_syntax, "loader not written yet"); }
}  // namespace ferrum
