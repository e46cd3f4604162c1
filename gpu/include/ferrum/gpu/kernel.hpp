// ferrum/gpu/kernel.hpp — compute kernels: one description that both devices
// can run, and the device's compiled form of it.
//
// A kernel is written twice: as GLSL compiled to SPIR-V at build time (for the
// Vulkan device) and as a C++ function (for the null device). Both follow one
// contract, so a test that runs on the null device checks the same arithmetic
// the shader does:
//
// * binding 0 of set 0 is the arena of the dispatch's primary range, binding 0
//   of set 1 the arena of its secondary range (the primary again when there is
//   none), each a `buffer { uint words[]; }`;
// * push constants are `uint primary_offset, primary_size, secondary_offset,
//   secondary_size` in bytes, then the kernel's own `push_words` words;
// * the device dispatches ceil(primary words / local_size_x) workgroups (capped
//   at the device's limit), so a shader loops grid-stride over the primary
//   range's 32-bit words.
//
//   auto k = device.create_kernel(ferrum::gpu::builtin::write_pattern());
//   list.dispatch(**k, slot, {}, std::array{seed});
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace ferrum::gpu {

class device;

// The push constants the device itself passes before a kernel's own words.
inline constexpr std::uint32_t range_push_words = 4;
// Vulkan guarantees 128 bytes of push constants: 32 words, 4 used by ranges.
inline constexpr std::uint32_t max_kernel_push_words = 28;

// What a CPU kernel sees: the ranges' bytes and its own push-constant words.
struct kernel_args {
  std::span<std::byte> primary;
  std::span<std::byte> secondary;
  std::span<const std::uint32_t> push;
};

// A CPU kernel, run by the null device's worker thread.
using cpu_kernel = void (*)(const kernel_args& args) noexcept;

// The description of a kernel; what it points to must outlive the call to
// `device::create_kernel` only.
struct kernel_source {
  std::string_view name;
  // SPIR-V words of a GLSL compute shader with entry point `main`; empty when
  // the kernel has no GPU form.
  std::span<const std::uint32_t> spirv;
  // The CPU form; nullptr when there is none.
  cpu_kernel cpu = nullptr;
  // The kernel's own push-constant words, after the range words; at most
  // max_kernel_push_words.
  std::uint32_t push_words = 0;
  // The shader's local_size_x (workgroup size); 1..1024.
  std::uint32_t local_size_x = 64;
};

// A kernel made ready by one device (a compute pipeline on Vulkan). Made on the
// cold path; immutable and usable from any thread afterwards.
class kernel {
 public:
  kernel(const kernel&) = delete;
  kernel& operator=(const kernel&) = delete;
  virtual ~kernel() = default;

  [[nodiscard]] std::string_view name() const noexcept { return name_; }
  [[nodiscard]] std::uint32_t push_words() const noexcept { return push_words_; }
  [[nodiscard]] std::uint32_t local_size_x() const noexcept { return local_size_x_; }
  [[nodiscard]] const gpu::device& device() const noexcept { return *device_; }

 protected:
  kernel(const gpu::device& owner, std::string_view name, std::uint32_t push_words, std::uint32_t local_size_x) noexcept
      : device_(&owner), name_(name), push_words_(push_words), local_size_x_(local_size_x) {}

 private:
  const gpu::device* device_;
  std::string name_;
  std::uint32_t push_words_;
  std::uint32_t local_size_x_;
};

}  // namespace ferrum::gpu
