// ferrum/gpu/kernel.hpp — compute kernels: one description that both devices
// can run, and the device's compiled form of it.
//
// A kernel is written twice: as GLSL compiled to SPIR-V at build time (for the
// Vulkan device) and as a C++ function (for the null device). Both follow one
// contract, so a test that runs on the null device checks the same arithmetic
// the shader does:
//
// * a kernel has two operands, each of a kind it declares
//   (kernel_operand_kind): binding 0 of set 0 is its primary, binding 0 of
//   set 1 its secondary. A buffer operand is an arena range, bound as its
//   arena's `buffer { uint words[]; }` (the primary's again when a buffer
//   kernel is given no secondary); an image operand a 2D image of one level
//   and layer, bound as a storage image (`image2D`, in layout general) or a
//   sampled image (`texture2D`, read with texelFetch, in layout
//   shader-read-only);
// * push constants are `uint primary_offset, primary_size, secondary_offset,
//   secondary_size` in bytes for buffer operands (an image operand's two
//   words are its width and height in texels), then the kernel's own
//   `push_words` words;
// * for a buffer primary the device dispatches ceil(primary words /
//   local_size_x) workgroups (capped at the device's limit), so a shader
//   loops grid-stride over the primary range's 32-bit words; for an image
//   primary, ceil(width / local_size_x) x ceil(height / local_size_y), one
//   invocation per texel (a shader skips those past the edge).
//
// The null device hands a CPU kernel each operand's bytes: a range's, or an
// image's texels, row-major and tightly packed.
//
//   auto k = device.create_kernel(ferrum::gpu::builtin::write_pattern());
//   list.dispatch(**k, slot, {}, std::array{seed});
//   list.dispatch(**blur, gpu::image_operand{&target}, gpu::image_operand{&source, image_layout::shader_read_only},
//                 push);
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace ferrum::gpu {

class device;

// What a kernel's operand is: an arena range, an image it writes or reads
// as a storage image, or one it reads as a sampled image. A primary is a
// buffer or a storage image.
enum class kernel_operand_kind : std::uint8_t { buffer, storage_image, sampled_image };

// The push constants the device itself passes before a kernel's own words.
inline constexpr std::uint32_t range_push_words = 4;
// Vulkan guarantees 128 bytes of push constants: 32 words, 4 used by ranges.
inline constexpr std::uint32_t max_kernel_push_words = 28;

// What a CPU kernel sees: its operands' bytes (a range's, an image's
// texels) and its own push-constant words; for an image operand, its width
// and height in texels.
struct image_extent {
  std::uint32_t width = 0;
  std::uint32_t height = 0;
};
struct kernel_args {
  std::span<std::byte> primary;
  std::span<std::byte> secondary;
  std::span<const std::uint32_t> push;
  image_extent primary_extent{};  // zero for a buffer operand
  image_extent secondary_extent{};
};

// A CPU kernel, run by the null device's worker thread.
using cpu_kernel = void (*)(const kernel_args& args) noexcept;

// "buffer", "storage image", "sampled image".
[[nodiscard]] constexpr std::string_view to_string(kernel_operand_kind k) noexcept {
  switch (k) {
    case kernel_operand_kind::buffer:
      return "buffer";
    case kernel_operand_kind::storage_image:
      return "storage image";
    case kernel_operand_kind::sampled_image:
      return "sampled image";
  }
  return "unknown";
}

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
  // The shader's local_size_x and local_size_y (its workgroup: at most
  // 1024 invocations; local_size_y 1 for a buffer primary).
  std::uint32_t local_size_x = 64;
  std::uint32_t local_size_y = 1;
  kernel_operand_kind primary = kernel_operand_kind::buffer;
  kernel_operand_kind secondary = kernel_operand_kind::buffer;
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
  [[nodiscard]] std::uint32_t local_size_y() const noexcept { return local_size_y_; }
  [[nodiscard]] kernel_operand_kind primary() const noexcept { return primary_; }
  [[nodiscard]] kernel_operand_kind secondary() const noexcept { return secondary_; }
  [[nodiscard]] const gpu::device& device() const noexcept { return *device_; }

 protected:
  kernel(const gpu::device& owner, const kernel_source& source)
      : device_(&owner),
        name_(source.name),
        push_words_(source.push_words),
        local_size_x_(source.local_size_x),
        local_size_y_(source.local_size_y),
        primary_(source.primary),
        secondary_(source.secondary) {}

 private:
  const gpu::device* device_;
  std::string name_;
  std::uint32_t push_words_;
  std::uint32_t local_size_x_;
  std::uint32_t local_size_y_;
  kernel_operand_kind primary_;
  kernel_operand_kind secondary_;
};

}  // namespace ferrum::gpu
