// tools/run_imports.hpp — the engine's buffers of a `ferrum run`: for each
// imported resource of the program (a pool of memory class `imported`), one
// device arena of the most bytes any bucket needs, which every wave names
// (wave_request::imports). Waves that write one are ordered by the scheduler
// (wave_imports); the checks read them where the run put them, not where the
// scheduler handed them out (checking_encoder.hpp).
//
//   auto imports = ferrum::tools::run_imports::create(device, *program);
//   request.imports = imports->buffers();
#pragma once

#include "ferrum/binding/compiled_program.hpp"
#include "ferrum/error.hpp"
#include "ferrum/gpu/device.hpp"
#include "ferrum/scheduler/wave.hpp"

#include <memory>
#include <span>
#include <string_view>
#include <vector>

namespace ferrum::tools {

class run_imports {
 public:
  // The buffers of `program`'s imported resources on `device` (none when it
  // has none). Errors: the device's (create_arena).
  [[nodiscard]] static result<run_imports> create(gpu::device& device, const compiled_program& program);

  // What each wave names; ids are the program's.
  [[nodiscard]] std::span<const imported_buffer> buffers() const noexcept { return buffers_; }
  // The buffer of resource `id`, or null.
  [[nodiscard]] const gpu::arena* find(std::string_view id) const noexcept;

 private:
  std::vector<std::unique_ptr<gpu::arena>> arenas_;
  std::vector<imported_buffer> buffers_;
};

}  // namespace ferrum::tools
