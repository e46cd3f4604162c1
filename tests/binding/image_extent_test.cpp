// Tests of image extents relative to the frame ("extent": "bucket/<k>",
// image_desc::extent_divisor): how they are read, every refusal with its
// code and JSON pointer, the extent each bucket gives (each side rounded
// up), and their part in the plan hash (docs/canonical-encoding.md).
// examples/plans/frame_chains.json declares them.
#include "ferrum/binding/compiled_program.hpp"

#include "both_parsers.hpp"
#include "example_plans.hpp"
#include "pinned_digests.hpp"
#include "plan_builder.hpp"

#include <nlohmann/json.hpp>

#include <functional>

using namespace ferrum;
using test::code_of;

namespace {

std::string chains_text() { return test::source_text(pinned::frame_chains_hash.plan_file); }

// frame_chains.json with image/bloom.half's image edited.
std::string half_edited(const std::function<void(nlohmann::json&)>& edit) {
  nlohmann::json doc = nlohmann::json::parse(chains_text());
  REQUIRE(doc["resources"][2]["id"] == "image/bloom.half");
  edit(doc["resources"][2]["image"]);
  return doc.dump();
}

// The error `text` is refused with: by both parsers where they see it, else by compile.
error extent_refusal(const std::string& text) {
  if (!parse_plan(text)) return both_parsers::rejection(text);
  auto program = compile(parse_plan(text).value());
  REQUIRE_FALSE(program.has_value());
  return program.error();
}

const lane_image& lane_image_of(const compiled_bucket& bucket, std::string_view id) {
  for (const lane_image& i : bucket.lane.images)
    if (i.resource.view() == id) return i;
  FAIL("no image " << id);
  return bucket.lane.images.front();
}

}  // namespace

TEST_CASE("image extents: 'bucket/<k>' is read as the bucket's extent divided by k", "[binding][image][extent]") {
  const plan p = both_parsers::parsed(chains_text());
  const image_desc& color = *p.resources[0].image;
  CHECK(color.bucket_extent);
  CHECK(color.extent_divisor == 1);
  const image_desc& half = *p.resources[2].image;
  CHECK(half.bucket_extent);
  CHECK(half.extent_divisor == 2);
  CHECK(p.resources[3].image->extent_divisor == 4);
  CHECK(p.resources[4].image->extent_divisor == 8);
  CHECK(extent_text(color) == "bucket");
  CHECK(extent_text(half) == "bucket/2");
  CHECK(extent_text(image_desc{image_format::r32_float, false, 64, 32}) == "64x32");
  for (const std::uint32_t k : {2u, 4u, 8u, 16u, 32u, 64u}) {
    const plan q = both_parsers::parsed(half_edited([k](auto& i) { i["extent"] = "bucket/" + std::to_string(k); }));
    CHECK(q.resources[2].image->extent_divisor == k);
  }
}

TEST_CASE("image extents: each bucket gives ceil(side / k), never 0", "[binding][image][extent]") {
  const compiled_program program = compile(both_parsers::parsed(chains_text())).value();
  REQUIRE(program.buckets.size() == 2);
  const compiled_bucket& even = program.buckets[0];
  const compiled_bucket& odd = program.buckets[1];
  REQUIRE(even.id.str() == "frame@320x180x1");
  REQUIRE(odd.id.str() == "frame@333x187x1");
  const auto extent = [](const compiled_bucket& b, std::string_view id) {
    const image_desc& i = lane_image_of(b, id).image;
    CHECK_FALSE(i.bucket_extent);
    CHECK(i.extent_divisor == 1);
    return std::pair(i.width, i.height);
  };
  CHECK(extent(even, "image/scene.color") == std::pair(320u, 180u));
  CHECK(extent(even, "image/bloom.half") == std::pair(160u, 90u));
  CHECK(extent(even, "image/bloom.quarter") == std::pair(80u, 45u));
  CHECK(extent(even, "image/bloom.eighth") == std::pair(40u, 23u));
  CHECK(extent(odd, "image/scene.color") == std::pair(333u, 187u));
  CHECK(extent(odd, "image/bloom.half") == std::pair(167u, 94u));
  CHECK(extent(odd, "image/bloom.quarter") == std::pair(84u, 47u));
  CHECK(extent(odd, "image/bloom.eighth") == std::pair(42u, 24u));
  // The lane image keeps the declared fraction for reports.
  CHECK(lane_image_of(odd, "image/bloom.quarter").bucket_divisor == 4);
  CHECK(lane_image_of(odd, "image/bloom.quarter").declared_extent() == "bucket/4");
  CHECK(lane_image_of(odd, "image/bloom.quarter").extent_in_bucket() == "84x47 (bucket/4)");
  CHECK(lane_image_of(odd, "image/scene.color").extent_in_bucket() == "333x187");
  CHECK(lane_image_of(odd, "image/scene.color").declared_extent() == "bucket");
  // Its bytes are its texels at that extent: 84x47 and 42x23, 8 bytes each.
  for (const projection& x : odd.capacity_layouts[0].projections)
    if (x.resource.view() == "image/bloom.quarter") CHECK(x.capacity == (84u * 47 + 42 * 23) * 8);

  // A bucket smaller than the divisor still gives one texel a side.
  plan tiny = both_parsers::parsed(half_edited([](auto& i) { i["extent"] = "bucket/64"; }));
  tiny.buckets[1].dims = {3, 70, 1};
  const compiled_program small = compile(tiny).value();
  CHECK(lane_image_of(small.buckets[0], "image/bloom.half").image.width == 5);   // 320/64
  CHECK(lane_image_of(small.buckets[1], "image/bloom.half").image.width == 1);   // 3/64, up
  CHECK(lane_image_of(small.buckets[1], "image/bloom.half").image.height == 2);  // 70/64, up
}

TEST_CASE("image extents: every bad fraction is refused with invalid_image at its pointer",
          "[binding][image][extent]") {
  const std::vector<std::pair<std::string, errc>> texts{
      {"bucket/3", errc::invalid_image},   {"bucket/1", errc::invalid_image},   {"bucket/0", errc::unknown_value},
      {"bucket/128", errc::invalid_image}, {"bucket/96", errc::invalid_image},  {"bucket/65536", errc::invalid_image},
      {"bucket/", errc::unknown_value},    {"bucket/02", errc::unknown_value},  {"bucket/2x", errc::unknown_value},
      {"bucket/-2", errc::unknown_value},  {"bucket / 2", errc::unknown_value}, {"Bucket/2", errc::unknown_value}};
  for (const auto& [text, code] : texts) {
    INFO(text);
    const error e = extent_refusal(half_edited([&](auto& i) { i["extent"] = text; }));
    CHECK(e == code);
    CHECK(e.path == "/resources/2/image/extent");
    if (code == errc::invalid_image) CHECK(e.detail.find("2..64") != std::string::npos);
  }
  // More mips than the divided extent has in one bucket: 320x180 / 4 is
  // 80x45, 7 levels; the detail names the image and the bucket.
  const error mips = extent_refusal(half_edited([](auto& i) {
    i["extent"] = "bucket/4";
    i["mips"] = 8;
  }));
  CHECK(mips == errc::invalid_image);
  CHECK(mips.path == "/resources/2/image");
  CHECK(mips.detail.find("'image/bloom.half'") != std::string::npos);
  CHECK(mips.detail.find("80x45 (bucket/4) in a bucket of 320x180 has 7") != std::string::npos);
  // 7 levels fit both buckets (333x187 / 4 is 84x47, also 7).
  CHECK(compile(parse_plan(half_edited([](auto& i) {
                  i["extent"] = "bucket/4";
                  i["mips"] = 7;
                })).value())
            .has_value());
}

TEST_CASE("image extents: a plan built in code is checked as a file is", "[binding][image][extent]") {
  const plan good = both_parsers::parsed(chains_text());
  for (const std::uint32_t k : {0u, 3u, 128u}) {
    INFO(k);
    plan p = good;
    p.resources[2].image->extent_divisor = k;
    CHECK(code_of(validate_plan(p)) == errc::invalid_image);
    CHECK(validate_plan(p).error().path == "/resources/2/image/extent");
  }
  // A divisor on a fixed extent: only a bucket's extent is divided.
  plan fixed = good;
  image_desc& i = *fixed.resources[2].image;
  i.bucket_extent = false;
  i.width = 64;
  i.height = 64;
  i.extent_divisor = 2;
  CHECK(code_of(validate_plan(fixed)) == errc::invalid_image);
  CHECK(validate_plan(fixed).error().path == "/resources/2/image/extent");
  CHECK(validate_plan(fixed).error().detail.find("fixed extent") != std::string::npos);
  i.extent_divisor = 1;
  CHECK(validate_plan(fixed).has_value());
}

TEST_CASE("image extents: a fraction hashes apart from the bucket and from each other, old plans as pinned",
          "[binding][image][extent][hash]") {
  const plan p = both_parsers::parsed(chains_text());
  CHECK(hash_plan(p).value().str() == pinned::frame_chains_hash.digest);
  // images.json, which has no fraction, keeps its pin: image_plan_test.cpp.
  plan whole = p;
  whole.resources[2].image->extent_divisor = 1;
  plan quarter = p;
  quarter.resources[2].image->extent_divisor = 4;
  plan fixed = p;  // a fixed extent whose width is the divisor
  fixed.resources[2].image->bucket_extent = false;
  fixed.resources[2].image->extent_divisor = 1;
  fixed.resources[2].image->width = 2;
  const plan_hash h = hash_plan(p).value();
  CHECK(hash_plan(whole).value() != h);
  CHECK(hash_plan(quarter).value() != h);
  CHECK(hash_plan(fixed).value() != h);
  CHECK(hash_plan(quarter).value() != hash_plan(whole).value());
  // The file with "bucket/2" written as "bucket" is the plan of divisor 1.
  const plan parsed_whole = both_parsers::parsed(half_edited([](auto& i) { i["extent"] = "bucket"; }));
  CHECK(hash_plan(parsed_whole).value() == hash_plan(whole).value());
}
