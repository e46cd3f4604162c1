// Timestamp pools on the null device: its worker's steady_clock, and every
// check the device layer makes of pools, slots and reads.
#include "null_device_support.hpp"
#include "timestamp_checks.hpp"

#include <vector>

using ferrum::errc;

TEST_CASE("timestamps (null device): stamps follow submission order, inside the submission, fresh on resubmit",
          "[gpu]") {
  auto device = test::null_device();
  const ferrum::gpu::timestamp_clock clock = device->timestamps();
  CHECK(clock.supported);
  CHECK(clock.calibration == "steady_clock");
  CHECK(clock.uncertainty.count() == 0);
  test::check_timed_submissions(*device);
}

TEST_CASE("timestamps (null device): also with inline completion, on the submitting thread", "[gpu]") {
  ferrum::gpu::null_device_options options;
  options.inline_completion = true;
  auto device = test::null_device(options);
  test::check_timed_submissions(*device);
}

TEST_CASE("timestamps: a device without them refuses a pool with timestamps_unsupported, saying why", "[gpu]") {
  ferrum::gpu::null_device_options options;
  options.timestamps = false;
  auto device = test::null_device(options);
  CHECK_FALSE(device->timestamps().supported);
  auto pool = device->create_timestamp_pool(2);
  REQUIRE_FALSE(pool.has_value());
  CHECK(pool.error() == errc::timestamps_unsupported);
  CHECK(pool.error().what().find("null_device_options::timestamps") != std::string::npos);
}

TEST_CASE("timestamps: a pool of zero slots or of more than 2^32 - 1 is refused with invalid_device_option", "[gpu]") {
  auto device = test::null_device();
  CHECK(device->create_timestamp_pool(0).error() == errc::invalid_device_option);
  auto huge = device->create_timestamp_pool(std::size_t{1} << 32);
  REQUIRE_FALSE(huge.has_value());
  CHECK(huge.error() == errc::invalid_device_option);
  CHECK(huge.error().what().find("4294967296 slots") != std::string::npos);
}

TEST_CASE("timestamps: a lost device makes no pool", "[gpu]") {
  auto device = test::null_device();
  device->lose();
  CHECK(device->create_timestamp_pool(2).error() == errc::device_lost);
}

TEST_CASE("timestamps: recording checks the list's state, the pool's device and the slot", "[gpu]") {
  auto device = test::null_device();
  auto other = test::null_device();
  auto stamps = test::require(device->create_timestamp_pool(2));
  auto foreign = test::require(other->create_timestamp_pool(2));
  auto list = test::require(device->create_command_list());
  CHECK(list->timestamp(*stamps, 0).error() == errc::command_list_state);  // before begin()
  test::require(list->begin());
  CHECK(list->timestamp(*foreign, 0).error() == errc::foreign_object);
  auto outside = list->timestamp(*stamps, 2);
  REQUIRE_FALSE(outside.has_value());
  CHECK(outside.error() == errc::range_out_of_bounds);
  CHECK(outside.error().what().find("slot 2 of a pool of 2") != std::string::npos);
  test::require(list->timestamp(*stamps, 1));
  test::require(list->end());
  CHECK(list->timestamp(*stamps, 0).error() == errc::command_list_state);  // after end()
}

TEST_CASE("timestamps: reads outside the pool or of slots never written are refused", "[gpu]") {
  auto device = test::null_device();
  auto stamps = test::require(device->create_timestamp_pool(4));
  std::vector<ferrum::gpu::timestamp_pool::time_point> out(3);
  CHECK(stamps->read(2, out).error() == errc::range_out_of_bounds);
  CHECK(stamps->read(5, std::span(out).first(0)).error() == errc::range_out_of_bounds);
  CHECK(stamps->read(4, std::span(out).first(0)).has_value());  // an empty read at the end
  auto unwritten = stamps->read(0, out);
  REQUIRE_FALSE(unwritten.has_value());
  CHECK(unwritten.error() == errc::timestamp_unavailable);

  // Slot 1 written, slot 0 not: a read covering both is still refused.
  auto list = test::require(device->create_command_list());
  const std::uint64_t value =
      test::submit(*device, *list, [&](ferrum::gpu::command_list& l) { test::require(l.timestamp(*stamps, 1)); });
  test::require_reached(device->queue().timeline(), value);
  CHECK(stamps->read(1, std::span(out).first(1)).has_value());
  CHECK(stamps->read(0, std::span(out).first(2)).error() == errc::timestamp_unavailable);
}
