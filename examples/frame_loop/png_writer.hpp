// examples/frame_loop/png_writer.hpp — writes 8-bit RGBA pixels as a PNG file,
// through stb_image_write (Debian's libstb-dev: the packaged libstb, found
// with pkg-config in CMakeLists.txt).
//
//   frame_loop::write_png("frame.png", 256, 256, rgba);
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>

namespace frame_loop {

// Writes the `width` x `height` image whose rows, top first, are `rgba` (4
// bytes per pixel: red, green, blue, alpha) to the PNG file `path`, replacing
// it. Throws std::invalid_argument when `rgba` does not hold exactly that many
// bytes, or a side is 0, or the image is too large for stb_image_write (whose
// sizes are ints: its filtered rows, (4 width + 1) height bytes, must stay
// below 2^31); std::runtime_error naming the file when it cannot be written.
void write_png(const std::filesystem::path& path, std::uint32_t width, std::uint32_t height,
               std::span<const std::byte> rgba);

}  // namespace frame_loop
