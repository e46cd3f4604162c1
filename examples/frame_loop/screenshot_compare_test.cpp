// examples/frame_loop/screenshot_compare_test.cpp — the frame checks'
// comparison: differences away from edges are the largest reported, edge
// pixels are only counted, an overlay's region is apart (its differing
// pixels counted, never in the largest); screenshots of another size and
// region files that are not four numbers are refused naming the file.
#include "screenshot_compare.hpp"
#include "png_writer.hpp"
#include "scratch_directory.hpp"

#include <catch2/catch.hpp>

#include <cstdint>
#include <fstream>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using frame_loop::pixel_region;

constexpr std::uint32_t width = 8;
constexpr std::uint32_t height = 6;

std::vector<std::byte> grey_frame(std::uint8_t value) {
  std::vector<std::byte> rgba(std::size_t{width} * height * 4, std::byte{value});
  for (std::size_t p = 3; p < rgba.size(); p += 4) rgba[p] = std::byte{255};
  return rgba;
}

void set_pixel(std::vector<std::byte>& rgba, std::uint32_t x, std::uint32_t y, std::uint8_t red) {
  rgba[(std::size_t{y} * width + x) * 4] = std::byte{red};
}

}  // namespace

TEST_CASE("screenshot_compare: the largest difference away from edges, edge pixels counted apart", "[example]") {
  const std::vector<std::byte> a = grey_frame(100);
  std::vector<std::byte> b = a;
  std::vector<std::uint8_t> edges(std::size_t{width} * height, 0);
  CHECK(frame_loop::compare_frames(a, b, edges, width, height, 2).largest == 0);

  set_pixel(b, 1, 1, 103);  // away from edges: the largest
  set_pixel(b, 5, 2, 180);  // an edge pixel: counted, not the largest
  set_pixel(b, 6, 2, 101);  // an edge pixel within the tolerance
  edges[2 * width + 5] = 1;
  edges[2 * width + 6] = 1;
  const frame_loop::frame_difference d = frame_loop::compare_frames(a, b, edges, width, height, 2);
  CHECK(d.largest == 3);
  CHECK(d.edge_pixels == 2);
  CHECK(d.edge_differing == 1);
  CHECK(d.region_pixels == 0);
  CHECK(d.region_differing == 0);
}

TEST_CASE("screenshot_compare: an overlay's region is apart, its differing pixels counted", "[example]") {
  const std::vector<std::byte> a = grey_frame(100);
  std::vector<std::byte> b = a;
  const std::vector<std::uint8_t> edges(std::size_t{width} * height, 0);
  // A 3x2 region at (4, 3): every pixel but one darkened.
  const pixel_region region{4, 3, 3, 2};
  for (std::uint32_t y = 3; y < 5; ++y)
    for (std::uint32_t x = 4; x < 7; ++x) set_pixel(b, x, y, 20);
  set_pixel(b, 6, 4, 100);
  const frame_loop::frame_difference d = frame_loop::compare_frames(a, b, edges, width, height, 2, region);
  CHECK(d.largest == 0);
  CHECK(d.region_pixels == 6);
  CHECK(d.region_differing == 5);

  // Without the region, the same pixels are the largest difference.
  CHECK(frame_loop::compare_frames(a, b, edges, width, height, 2).largest == 80);
  // A region past the frame holds only the frame's pixels.
  CHECK(frame_loop::compare_frames(a, b, edges, width, height, 2, pixel_region{6, 4, 10, 10}).region_pixels == 4);
}

TEST_CASE("screenshot_compare: PNG files compared, another size refused naming both files", "[example]") {
  const frame_loop::scratch_directory dir("screenshot-compare-files");
  std::vector<std::byte> shot = grey_frame(50);
  set_pixel(shot, 2, 2, 60);
  const std::vector<std::byte> expected = grey_frame(50);
  const std::vector<std::byte> no_edges = grey_frame(0);
  frame_loop::write_png(dir.path / "shot.png", width, height, shot);
  frame_loop::write_png(dir.path / "expected.png", width, height, expected);
  frame_loop::write_png(dir.path / "edges.png", width, height, no_edges);
  CHECK(frame_loop::compare_screenshot(dir.path / "shot.png", dir.path / "expected.png", dir.path / "edges.png", 2)
            .largest == 10);
  const frame_loop::frame_difference apart = frame_loop::compare_screenshot(
      dir.path / "shot.png", dir.path / "expected.png", dir.path / "edges.png", 2, pixel_region{2, 2, 1, 1});
  CHECK(apart.largest == 0);
  CHECK(apart.region_differing == 1);

  frame_loop::write_png(dir.path / "small.png", width / 2, height, std::span(expected).first(expected.size() / 2));
  CHECK_THROWS_WITH(
      frame_loop::compare_screenshot(dir.path / "small.png", dir.path / "expected.png", dir.path / "edges.png", 2),
      Catch::Contains("small.png' is 4x6") && Catch::Contains("expected.png' 8x6"));
  CHECK_THROWS_WITH(
      frame_loop::compare_screenshot(dir.path / "missing.png", dir.path / "expected.png", dir.path / "edges.png", 2),
      Catch::Contains("cannot read '") && Catch::Contains("missing.png' as an image"));
}

TEST_CASE("screenshot_compare: a region file round-trips, one that is not four numbers is refused", "[example]") {
  const frame_loop::scratch_directory dir("screenshot-compare-region");
  const pixel_region written{8, 9, 226, 174};
  frame_loop::write_region(dir.path / "region.txt", written);
  const pixel_region read = frame_loop::read_region(dir.path / "region.txt");
  CHECK(read.x == 8);
  CHECK(read.y == 9);
  CHECK(read.width == 226);
  CHECK(read.height == 174);

  std::ofstream(dir.path / "short.txt") << "8 9 226\n";
  CHECK_THROWS_WITH(frame_loop::read_region(dir.path / "short.txt"),
                    Catch::Contains("short.txt' as a region: four whole numbers"));
  CHECK_THROWS_WITH(frame_loop::read_region(dir.path / "missing.txt"), Catch::Contains("missing.txt' as a region"));
  CHECK_THROWS_WITH(frame_loop::write_region(dir.path / "no-such-folder" / "region.txt", written),
                    Catch::Contains("cannot write '") && Catch::Contains("region.txt'"));
}
