// examples/frame_loop/png_writer.cpp — PNG (RFC 2083) with a zlib stream
// (RFC 1950) of stored deflate blocks (RFC 1951, section 3.2.4).
#include "png_writer.hpp"

#include <algorithm>
#include <array>
#include <stdexcept>
#include <string>
#include <string_view>

namespace frame_loop {
namespace {

constexpr std::array<std::uint32_t, 256> crc_table = [] {
  std::array<std::uint32_t, 256> table{};
  for (std::uint32_t n = 0; n < 256; ++n) {
    std::uint32_t c = n;
    for (int k = 0; k < 8; ++k) c = (c & 1u) != 0 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    table[n] = c;
  }
  return table;
}();

// A deflate stored block holds at most 65535 bytes.
constexpr std::size_t max_stored_block = 0xFFFF;
// A chunk may hold up to 2^31 - 1 bytes; the zlib stream is split into IDAT
// chunks of at most this many.
constexpr std::size_t max_idat_bytes = std::size_t{1} << 20;

void put_byte(std::vector<std::byte>& out, std::uint32_t value) {
  out.push_back(static_cast<std::byte>(value & 0xFFu));
}

// PNG and zlib numbers are big-endian.
void put_u32(std::vector<std::byte>& out, std::uint32_t value) {
  for (int shift = 24; shift >= 0; shift -= 8) put_byte(out, value >> shift);
}

// A chunk: length, type, data, and the CRC of type and data.
void put_chunk(std::vector<std::byte>& out, std::string_view type, std::span<const std::byte> data) {
  put_u32(out, static_cast<std::uint32_t>(data.size()));
  const std::size_t typed = out.size();
  for (char c : type) put_byte(out, static_cast<std::uint8_t>(c));
  out.insert(out.end(), data.begin(), data.end());
  put_u32(out, crc32(std::span(out).subspan(typed)));
}

// The zlib stream of `raw`: header, stored blocks, Adler-32 of `raw`.
std::vector<std::byte> zlib_stored(std::span<const std::byte> raw) {
  std::vector<std::byte> out;
  out.reserve(raw.size() + raw.size() / max_stored_block * 5 + 16);
  // CMF 0x78: deflate, 32 KiB window; FLG 0x01: no dictionary, and
  // (CMF * 256 + FLG) is a multiple of 31, as the header check requires.
  put_byte(out, 0x78);
  put_byte(out, 0x01);
  std::size_t at = 0;
  do {
    const std::size_t length = std::min(max_stored_block, raw.size() - at);
    const bool last = at + length == raw.size();
    put_byte(out, last ? 1u : 0u);  // BFINAL, BTYPE 00 (stored)
    // LEN and its ones' complement NLEN, little-endian (deflate's own order).
    const auto len = static_cast<std::uint32_t>(length);
    put_byte(out, len);
    put_byte(out, len >> 8);
    put_byte(out, ~len);
    put_byte(out, ~len >> 8);
    out.insert(out.end(), raw.begin() + static_cast<std::ptrdiff_t>(at),
               raw.begin() + static_cast<std::ptrdiff_t>(at + length));
    at += length;
  } while (at < raw.size());
  put_u32(out, adler32(raw));
  return out;
}

}  // namespace

std::uint32_t crc32(std::span<const std::byte> bytes) noexcept {
  std::uint32_t c = 0xFFFFFFFFu;
  for (std::byte b : bytes) c = crc_table[(c ^ static_cast<std::uint32_t>(b)) & 0xFFu] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

std::uint32_t adler32(std::span<const std::byte> bytes) noexcept {
  constexpr std::uint32_t modulus = 65521;
  std::uint32_t a = 1;
  std::uint32_t b = 0;
  for (std::byte byte : bytes) {
    a = (a + static_cast<std::uint32_t>(byte)) % modulus;
    b = (b + a) % modulus;
  }
  return (b << 16) | a;
}

std::vector<std::byte> encode_png(std::uint32_t width, std::uint32_t height, std::span<const std::byte> rgba) {
  constexpr std::uint32_t max_side = 0x7FFFFFFFu;
  if (width == 0 || height == 0 || width > max_side || height > max_side)
    throw std::invalid_argument("png: image sides must be 1 to 2^31 - 1 pixels");
  const std::size_t row_bytes = std::size_t{width} * 4;
  if (rgba.size() != row_bytes * height)
    throw std::invalid_argument("png: " + std::to_string(rgba.size()) + " bytes of pixels for a " +
                                std::to_string(width) + "x" + std::to_string(height) + " RGBA image");

  // Each row starts with its filter type: 0, none.
  std::vector<std::byte> scanlines;
  scanlines.reserve((row_bytes + 1) * height);
  for (std::size_t row = 0; row < height; ++row) {
    scanlines.push_back(std::byte{0});
    const auto begin = rgba.begin() + static_cast<std::ptrdiff_t>(row * row_bytes);
    scanlines.insert(scanlines.end(), begin, begin + static_cast<std::ptrdiff_t>(row_bytes));
  }

  std::vector<std::byte> header;
  put_u32(header, width);
  put_u32(header, height);
  // Bit depth 8, colour type 6 (RGBA), deflate, adaptive filtering, no interlace.
  for (std::uint32_t field : {8u, 6u, 0u, 0u, 0u}) put_byte(header, field);

  std::vector<std::byte> png;
  for (std::uint32_t signature_byte : {0x89u, 0x50u, 0x4Eu, 0x47u, 0x0Du, 0x0Au, 0x1Au, 0x0Au})
    put_byte(png, signature_byte);
  put_chunk(png, "IHDR", header);
  const std::vector<std::byte> stream = zlib_stored(scanlines);
  for (std::size_t at = 0; at < stream.size(); at += max_idat_bytes)
    put_chunk(png, "IDAT", std::span(stream).subspan(at, std::min(max_idat_bytes, stream.size() - at)));
  put_chunk(png, "IEND", {});
  return png;
}

}  // namespace frame_loop
