// node_resource.cpp — a node's resource on a lane (ferrum/scheduler/wave.hpp).
#include "ferrum/scheduler/wave.hpp"

#include <string>

namespace ferrum {

result<std::span<std::byte>> node_resource::bytes() const {
  if (!host_touches(memory))
    return make_error(errc::no_host_bytes, "resource " + quote_text(id->view()) + " is " +
                                               std::string(to_string(memory)) +
                                               " memory, which the host never touches");
  return host_;
}

}  // namespace ferrum
