// examples/frame_loop/png_writer_test.cpp — the frame_loop example's PNG
// writer: checksums against their standard check values, a small file byte for
// byte against one made by Python's zlib, and larger files read back: chunk
// CRCs, the header, and the stored deflate blocks against the pixels.
#include "png_writer.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace {

std::vector<std::byte> bytes_of(std::string_view text) {
  std::vector<std::byte> bytes;
  for (char c : text) bytes.push_back(static_cast<std::byte>(c));
  return bytes;
}

std::uint32_t big_endian(std::span<const std::byte> bytes, std::size_t at) {
  std::uint32_t value = 0;
  for (std::size_t i = 0; i < 4; ++i) value = (value << 8) | static_cast<std::uint32_t>(bytes[at + i]);
  return value;
}

// What a reader sees of a PNG file: its chunks, each CRC checked.
struct png_chunk {
  std::string type;
  std::vector<std::byte> data;
};

std::vector<png_chunk> read_chunks(const std::vector<std::byte>& png) {
  const std::vector<std::byte> signature = {std::byte{0x89}, std::byte{'P'},  std::byte{'N'},  std::byte{'G'},
                                            std::byte{0x0D}, std::byte{0x0A}, std::byte{0x1A}, std::byte{0x0A}};
  REQUIRE(png.size() >= signature.size());
  REQUIRE(std::vector<std::byte>(png.begin(), png.begin() + 8) == signature);
  std::vector<png_chunk> chunks;
  std::size_t at = 8;
  while (at < png.size()) {
    REQUIRE(at + 12 <= png.size());
    const std::uint32_t length = big_endian(png, at);
    REQUIRE(at + 12 + length <= png.size());
    const std::span<const std::byte> typed = std::span(png).subspan(at + 4, 4 + std::size_t{length});
    CHECK(frame_loop::crc32(typed) == big_endian(png, at + 8 + length));
    png_chunk chunk;
    for (std::size_t i = 0; i < 4; ++i) chunk.type += static_cast<char>(typed[i]);
    chunk.data.assign(typed.begin() + 4, typed.end());
    chunks.push_back(std::move(chunk));
    at += 12 + length;
  }
  return chunks;
}

// The bytes a zlib stream of stored blocks holds, its header, block lengths
// and Adler-32 checked.
std::vector<std::byte> inflate_stored(const std::vector<std::byte>& stream) {
  REQUIRE(stream.size() >= 6);
  const auto cmf = static_cast<std::uint32_t>(stream[0]);
  const auto flg = static_cast<std::uint32_t>(stream[1]);
  CHECK((cmf & 0x0Fu) == 8);  // deflate
  CHECK((cmf * 256 + flg) % 31 == 0);
  CHECK((flg & 0x20u) == 0);  // no preset dictionary
  std::vector<std::byte> raw;
  std::size_t at = 2;
  bool last = false;
  while (!last) {
    REQUIRE(at + 5 <= stream.size());
    const auto block = static_cast<std::uint32_t>(stream[at]);
    last = (block & 1u) != 0;
    REQUIRE((block >> 1) == 0);  // BTYPE 00: stored
    const std::uint32_t len = static_cast<std::uint32_t>(stream[at + 1]) | static_cast<std::uint32_t>(stream[at + 2])
                                                                               << 8;
    const std::uint32_t nlen = static_cast<std::uint32_t>(stream[at + 3]) | static_cast<std::uint32_t>(stream[at + 4])
                                                                                << 8;
    REQUIRE(len == (~nlen & 0xFFFFu));
    REQUIRE(at + 5 + len <= stream.size());
    raw.insert(raw.end(), stream.begin() + static_cast<std::ptrdiff_t>(at + 5),
               stream.begin() + static_cast<std::ptrdiff_t>(at + 5 + len));
    at += 5 + len;
  }
  REQUIRE(at + 4 == stream.size());
  CHECK(frame_loop::adler32(raw) == big_endian(stream, at));
  return raw;
}

std::vector<std::byte> test_pixels(std::uint32_t width, std::uint32_t height) {
  std::vector<std::byte> rgba(std::size_t{width} * height * 4);
  for (std::size_t i = 0; i < rgba.size(); ++i) rgba[i] = static_cast<std::byte>((i * 7 + i / 4) & 0xFFu);
  return rgba;
}

}  // namespace

TEST_CASE("png_writer: crc32 and adler32 give the standard check values", "[example]") {
  CHECK(frame_loop::crc32(bytes_of("123456789")) == 0xCBF43926u);
  CHECK(frame_loop::crc32({}) == 0u);
  CHECK(frame_loop::adler32(bytes_of("Wikipedia")) == 0x11E60398u);
  CHECK(frame_loop::adler32({}) == 1u);
}

TEST_CASE("png_writer: a 2x1 image is byte for byte the file Python's zlib level 0 makes", "[example]") {
  // An opaque red pixel and a half transparent blue one; the expected bytes
  // were made with struct.pack, zlib.crc32 and zlib.compress(raw, 0).
  const std::vector<std::byte> rgba = {std::byte{255}, std::byte{0}, std::byte{0},   std::byte{255},
                                       std::byte{0},   std::byte{0}, std::byte{255}, std::byte{128}};
  const std::vector<std::uint8_t> expected = {
      0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x48, 0x44, 0x52,
      0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0xF4, 0x22, 0x7F,
      0x8A, 0x00, 0x00, 0x00, 0x14, 0x49, 0x44, 0x41, 0x54, 0x78, 0x01, 0x01, 0x09, 0x00, 0xF6, 0xFF,
      0x00, 0xFF, 0x00, 0x00, 0xFF, 0x00, 0x00, 0xFF, 0x80, 0x0F, 0x7A, 0x03, 0x7E, 0x4A, 0x6E, 0x70,
      0x0C, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4E, 0x44, 0xAE, 0x42, 0x60, 0x82};
  const std::vector<std::byte> png = frame_loop::encode_png(2, 1, rgba);
  REQUIRE(png.size() == expected.size());
  for (std::size_t i = 0; i < png.size(); ++i) {
    INFO("byte " << i);
    CHECK(static_cast<std::uint8_t>(png[i]) == expected[i]);
  }
}

TEST_CASE("png_writer: a large image reads back as its rows, over several blocks and IDAT chunks", "[example]") {
  // 600 x 600: 1.44 MB of rows, so 22 stored blocks and two IDAT chunks.
  const std::uint32_t width = 600;
  const std::uint32_t height = 600;
  const std::vector<std::byte> rgba = test_pixels(width, height);
  const std::vector<png_chunk> chunks = read_chunks(frame_loop::encode_png(width, height, rgba));

  REQUIRE(chunks.size() >= 4);
  CHECK(chunks.front().type == "IHDR");
  CHECK(chunks.back().type == "IEND");
  CHECK(chunks.back().data.empty());
  const std::vector<std::byte>& header = chunks.front().data;
  REQUIRE(header.size() == 13);
  CHECK(big_endian(header, 0) == width);
  CHECK(big_endian(header, 4) == height);
  CHECK(header[8] == std::byte{8});  // bit depth
  CHECK(header[9] == std::byte{6});  // RGBA
  CHECK(header[10] == std::byte{0});
  CHECK(header[11] == std::byte{0});
  CHECK(header[12] == std::byte{0});

  std::vector<std::byte> stream;
  std::size_t idat_chunks = 0;
  for (std::size_t i = 1; i + 1 < chunks.size(); ++i) {
    REQUIRE(chunks[i].type == "IDAT");
    stream.insert(stream.end(), chunks[i].data.begin(), chunks[i].data.end());
    ++idat_chunks;
  }
  CHECK(idat_chunks == 2);
  const std::vector<std::byte> raw = inflate_stored(stream);
  const std::size_t row_bytes = std::size_t{width} * 4;
  REQUIRE(raw.size() == (row_bytes + 1) * height);
  for (std::size_t row = 0; row < height; ++row) {
    INFO("row " << row);
    REQUIRE(raw[row * (row_bytes + 1)] == std::byte{0});  // filter: none
    const auto got = raw.begin() + static_cast<std::ptrdiff_t>(row * (row_bytes + 1) + 1);
    const auto want = rgba.begin() + static_cast<std::ptrdiff_t>(row * row_bytes);
    REQUIRE(std::equal(want, want + static_cast<std::ptrdiff_t>(row_bytes), got));
  }
}

TEST_CASE("png_writer: pixels that do not match the size are refused", "[example]") {
  const std::vector<std::byte> rgba = test_pixels(4, 4);
  CHECK_THROWS_AS(frame_loop::encode_png(4, 5, rgba), std::invalid_argument);
  CHECK_THROWS_AS(frame_loop::encode_png(0, 4, {}), std::invalid_argument);
  CHECK_NOTHROW(frame_loop::encode_png(4, 4, rgba));
}
