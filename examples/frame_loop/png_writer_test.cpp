// examples/frame_loop/png_writer_test.cpp — the frame_loop example's PNG
// writer: files read back by stb_image (an independent PNG decoder of the
// same package) hold exactly the pixels written; sizes that do not match the
// pixels are refused before anything is written; an unwritable path fails
// saying which file and why.
#include "png_writer.hpp"
#include "scratch_directory.hpp"

#include <stb_image.h>
#include <catch2/catch.hpp>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

// Every byte value in every channel, alpha included, and rows that differ.
std::vector<std::byte> test_pixels(std::uint32_t width, std::uint32_t height) {
  std::vector<std::byte> rgba(std::size_t{width} * height * 4);
  for (std::size_t i = 0; i < rgba.size(); ++i) rgba[i] = static_cast<std::byte>((i * 7 + i / 4 + i / 997) & 0xFFu);
  return rgba;
}

// What stb_image decodes from a file: its size, its channels, its pixels as
// RGBA.
struct decoded_image {
  int width = 0;
  int height = 0;
  int channels_in_file = 0;
  std::vector<std::byte> rgba;
};

decoded_image decode(const fs::path& path) {
  decoded_image image;
  const std::unique_ptr<stbi_uc, void (*)(void*)> pixels(
      stbi_load(path.c_str(), &image.width, &image.height, &image.channels_in_file, 4), &stbi_image_free);
  INFO("stb_image: " << (pixels ? "ok" : stbi_failure_reason()));
  REQUIRE(pixels != nullptr);
  const auto* first = reinterpret_cast<const std::byte*>(pixels.get());
  image.rgba.assign(
      first, first + std::size_t{4} * static_cast<std::size_t>(image.width) * static_cast<std::size_t>(image.height));
  return image;
}

std::vector<std::byte> file_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::byte> bytes(chars.size());
  for (std::size_t i = 0; i < chars.size(); ++i) bytes[i] = static_cast<std::byte>(chars[i]);
  return bytes;
}

}  // namespace

TEST_CASE("png_writer: a file decodes to exactly the pixels written", "[example]") {
  const frame_loop::scratch_directory dir("png-writer-round-trip");
  // 1x1, one row, one column, and an image whose rows are not a multiple of
  // anything in particular: PNG's filters work row against row.
  const std::uint32_t sizes[][2] = {{1, 1}, {257, 1}, {1, 131}, {600, 301}};
  for (const auto& [width, height] : sizes) {
    INFO(width << "x" << height);
    const fs::path path = dir.path / (std::to_string(width) + "x" + std::to_string(height) + ".png");
    const std::vector<std::byte> rgba = test_pixels(width, height);
    frame_loop::write_png(path, width, height, rgba);

    const decoded_image image = decode(path);
    CHECK(image.width == static_cast<int>(width));
    CHECK(image.height == static_cast<int>(height));
    CHECK(image.channels_in_file == 4);  // RGBA: alpha is kept
    CHECK(image.rgba == rgba);
  }
}

TEST_CASE("png_writer: the file is a PNG, compressed", "[example]") {
  const frame_loop::scratch_directory dir("png-writer-format");
  const fs::path path = dir.path / "frame.png";
  // A smooth image, as frames are: deflate shrinks it well below its pixels.
  const std::uint32_t width = 256;
  const std::uint32_t height = 256;
  std::vector<std::byte> rgba(std::size_t{width} * height * 4);
  for (std::size_t p = 0; p < std::size_t{width} * height; ++p) {
    rgba[4 * p + 0] = static_cast<std::byte>(p % width);
    rgba[4 * p + 1] = static_cast<std::byte>(p / width);
    rgba[4 * p + 2] = std::byte{128};
    rgba[4 * p + 3] = std::byte{255};
  }
  frame_loop::write_png(path, width, height, rgba);

  const std::vector<std::byte> file = file_bytes(path);
  const std::vector<std::byte> signature = {std::byte{0x89}, std::byte{'P'},  std::byte{'N'},  std::byte{'G'},
                                            std::byte{0x0D}, std::byte{0x0A}, std::byte{0x1A}, std::byte{0x0A}};
  REQUIRE(file.size() > 8);
  CHECK(std::vector<std::byte>(file.begin(), file.begin() + 8) == signature);
  CHECK(file.size() < rgba.size() / 4);
  CHECK(decode(path).rgba == rgba);
}

TEST_CASE("png_writer: an existing file is replaced", "[example]") {
  const frame_loop::scratch_directory dir("png-writer-replace");
  const fs::path path = dir.path / "frame.png";
  frame_loop::write_png(path, 64, 64, test_pixels(64, 64));
  const std::vector<std::byte> smaller = test_pixels(3, 2);
  frame_loop::write_png(path, 3, 2, smaller);
  const decoded_image image = decode(path);
  CHECK(image.width == 3);
  CHECK(image.height == 2);
  CHECK(image.rgba == smaller);
}

TEST_CASE("png_writer: pixels that do not match the size are refused, and nothing is written", "[example]") {
  const frame_loop::scratch_directory dir("png-writer-refused");
  const fs::path path = dir.path / "frame.png";
  const std::vector<std::byte> rgba = test_pixels(4, 4);
  CHECK_THROWS_AS(frame_loop::write_png(path, 4, 5, rgba), std::invalid_argument);
  CHECK_THROWS_AS(frame_loop::write_png(path, 4, 3, rgba), std::invalid_argument);
  CHECK_THROWS_AS(frame_loop::write_png(path, 0, 4, {}), std::invalid_argument);
  CHECK_THROWS_AS(frame_loop::write_png(path, 4, 0, {}), std::invalid_argument);
  // stb_image_write counts in ints: (4 x 65536 + 1) x 65536 bytes of rows
  // would overflow them. Refused on the size alone, before the pixels.
  CHECK_THROWS_WITH(frame_loop::write_png(path, 65536, 65536, rgba), Catch::Contains("too large"));
  CHECK_FALSE(fs::exists(path));
}

TEST_CASE("png_writer: an unwritable path fails naming the file and why", "[example]") {
  const frame_loop::scratch_directory dir("png-writer-unwritable");
  const fs::path path = dir.path / "no such directory" / "frame.png";
  const std::vector<std::byte> rgba = test_pixels(2, 2);
  CHECK_THROWS_AS(frame_loop::write_png(path, 2, 2, rgba), std::runtime_error);
  CHECK_THROWS_WITH(frame_loop::write_png(path, 2, 2, rgba),
                    "cannot write '" + path.string() + "': No such file or directory");
  CHECK_FALSE(fs::exists(path));
}
