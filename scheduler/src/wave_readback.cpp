// wave_readback.cpp — reading a kept wave's lane (ferrum/scheduler/wave_readback.hpp).
#include "ferrum/scheduler/wave_readback.hpp"

#include <string>

namespace ferrum {

result<std::span<const std::byte>> wave_readback::bytes(std::string_view id) const {
  if (!held_) return make_error(errc::lane_not_held, "reading " + quote_text(id) + " through an empty wave readback");
  const node_resource* r = held_->find(id);
  if (r == nullptr)
    return make_error(errc::unknown_resource,
                      "no node of wave " + std::to_string(wave_) + "'s plan lists " + quote_text(id));
  auto host = r->bytes();
  if (!host) return host.error();
  return std::span<const std::byte>(*host);
}

}  // namespace ferrum
