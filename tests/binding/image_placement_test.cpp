// Tests of place_lane_images: a lane's images in image memory of their own,
// the device's sizes and alignments deciding where, the compiler's live
// intervals deciding which may share.
#include "ferrum/binding/image_placement.hpp"
#include "ferrum/binding/compiled_program.hpp"
#include "ferrum/binding/plan_json.hpp"

#include "example_plans.hpp"
#include "pinned_digests.hpp"

#include <catch2/catch.hpp>

#include <string>

using namespace ferrum;

namespace {

compiled_program images_program() { return compile(test::load_source_plan(pinned::images_hash.plan_file)).value(); }

// Sizes a discrete GPU might give: texels rounded up to 64 KiB pages, with
// 64 KiB alignment, and depth twice that.
std::vector<image_size> device_sizes(const lane_recipe& lane) {
  std::vector<image_size> sizes;
  for (const lane_image& i : lane.images) {
    const std::uint64_t texels = level_bytes(i.image.format, i.image.width, i.image.height) * i.image.layers;
    const std::uint64_t page = 65536;
    sizes.push_back({((texels + page - 1) / page) * page * (is_depth(i.image.format) ? 2 : 1), page});
  }
  return sizes;
}

}  // namespace

TEST_CASE("image placement: aligned, and sharing only between images whose intervals do not overlap",
          "[binding][image]") {
  const compiled_program program = images_program();
  for (const compiled_bucket& bucket : program.buckets) {
    const lane_recipe& lane = bucket.lane;
    const std::vector<image_size> sizes = device_sizes(lane);
    const image_placement placed = place_lane_images(lane, sizes).value();
    REQUIRE(placed.offsets.size() == lane.images.size());
    std::size_t shared = 0;
    for (std::size_t a = 0; a < lane.images.size(); ++a) {
      CHECK(placed.offsets[a] % sizes[a].alignment == 0);
      CHECK(placed.offsets[a] + sizes[a].bytes <= placed.bytes);
      for (std::size_t b = a + 1; b < lane.images.size(); ++b) {
        const bool overlap = placed.offsets[a] < placed.offsets[b] + sizes[b].bytes &&
                             placed.offsets[b] < placed.offsets[a] + sizes[a].bytes;
        if (!overlap) continue;
        ++shared;
        INFO(lane.images[a].resource.str() << " and " << lane.images[b].resource.str());
        CHECK(lane.images[a].aliasable);
        CHECK(lane.images[b].aliasable);
        CHECK(lane.images[a].domain == lane.images[b].domain);
        CHECK_FALSE(lane.images[a].live.overlaps(lane.images[b].live));
      }
    }
    CHECK(shared > 0);
    CHECK(placed.bytes < placed.unaliased_bytes);
    std::uint64_t sum = 0;
    for (const image_size& s : sizes) sum += s.bytes;
    CHECK(placed.unaliased_bytes == sum);  // every size a multiple of every alignment: no padding
  }
}

TEST_CASE("image placement: the persistent image never shares", "[binding][image]") {
  const compiled_program program = images_program();
  const lane_recipe& lane = program.buckets[0].lane;
  for (const lane_image& i : lane.images) CHECK(i.aliasable == (i.lifetime == allocation_lifetime::invocation));
  const std::vector<image_size> sizes(lane.images.size(), image_size{4096, 4096});
  const image_placement placed = place_lane_images(lane, sizes).value();
  for (std::size_t a = 0; a < lane.images.size(); ++a) {
    if (lane.images[a].aliasable) continue;
    for (std::size_t b = 0; b < lane.images.size(); ++b)
      if (b != a) CHECK(placed.offsets[a] != placed.offsets[b]);
  }
}

TEST_CASE("image placement: refuses sizes that do not describe the lane's images", "[binding][image]") {
  const compiled_program program = images_program();
  const lane_recipe& lane = program.buckets[0].lane;
  std::vector<image_size> sizes(lane.images.size(), image_size{4096, 256});
  CHECK(place_lane_images(lane, std::span(sizes).first(sizes.size() - 1)).error() == errc::invalid_image);
  sizes[2] = {0, 256};
  const auto empty = place_lane_images(lane, sizes);
  CHECK(empty.error() == errc::invalid_image);
  CHECK(empty.error().detail.find(lane.images[2].resource.str()) != std::string::npos);
  sizes[2] = {4096, 96};
  CHECK(place_lane_images(lane, sizes).error() == errc::invalid_image);
  sizes[2] = {~std::uint64_t{0} - 8, 256};
  CHECK(place_lane_images(lane, sizes).error() == errc::size_overflow);
  CHECK(place_lane_images(lane_recipe{}, {}).value().bytes == 0);
}
