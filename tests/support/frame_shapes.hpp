// frame_shapes — a frame declared with frame_builder in shapes of any
// length, for the tests of hash(), reset() and program_cache: a chain of
// passes, each with a parameter block, reading the buffer the pass before
// wrote and writing its own. Its names are made once (chain_names), so
// that declaring it again allocates nothing of the caller's.
#pragma once

#include "ferrum/binding/frame_builder.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace ferrum::test {

struct chain_names {
  std::vector<std::string> passes, buffers;
  explicit chain_names(std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) {
      passes.push_back("node/pass" + std::to_string(i));
      buffers.push_back("resource/buffer" + std::to_string(i));
    }
  }
};

// The first `length` passes of the chain (length <= the names'), at a
// bucket `width` wide (another width: another plan, encoded as long).
inline void declare_chain(frame_builder& f, const chain_names& names, std::size_t length, std::uint64_t width = 64) {
  buffer_handle previous{};
  for (std::size_t i = 0; i < length; ++i) {
    const node_handle pass = f.add_pass(names.passes[i], {.parameter_bytes = 64});
    if (i > 0) f.access(pass, previous, resource_access::read);
    previous =
        f.add_buffer(names.buffers[i], {.size = resource_demand::scaled(0, 256, 0), .element = element_type::f32});
    f.access(pass, previous, resource_access::write);
  }
  f.add_bucket("frame", {width, 32, 1});
}

}  // namespace ferrum::test
