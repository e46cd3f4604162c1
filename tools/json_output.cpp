#include "json_output.hpp"

namespace ferrum::tools {

void write_json(std::ostream& out, const nlohmann::ordered_json& document) {
  out << document.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << '\n';
}

}  // namespace ferrum::tools
