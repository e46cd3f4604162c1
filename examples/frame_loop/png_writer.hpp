// examples/frame_loop/png_writer.hpp — encodes 8-bit RGBA pixels as a PNG
// file, with no library: the zlib stream is made of stored (uncompressed)
// deflate blocks, so the file is a little larger than the pixels.
//
//   std::vector<std::byte> file = frame_loop::encode_png(256, 256, rgba);
//   std::ofstream("frame.png", std::ios::binary).write(
//       reinterpret_cast<const char*>(file.data()), static_cast<std::streamsize>(file.size()));
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace frame_loop {

// The PNG file of a `width` x `height` image whose rows, top first, are
// `rgba`: 4 bytes per pixel (red, green, blue, alpha). Throws
// std::invalid_argument when `rgba` does not hold exactly that many bytes or
// a side is 0 or above 2^31 - 1 (PNG's limit).
[[nodiscard]] std::vector<std::byte> encode_png(std::uint32_t width, std::uint32_t height,
                                                std::span<const std::byte> rgba);

// CRC-32 (ISO 3309, as PNG chunks and gzip use it) of `bytes`.
[[nodiscard]] std::uint32_t crc32(std::span<const std::byte> bytes) noexcept;

// Adler-32 (RFC 1950, the zlib stream's checksum) of `bytes`.
[[nodiscard]] std::uint32_t adler32(std::span<const std::byte> bytes) noexcept;

}  // namespace frame_loop
