#include "ferrum/binding/demand.hpp"

#include "plan_builder.hpp"

#include <limits>

using namespace ferrum;
using test::code_of;

namespace {
constexpr std::uint64_t u64_max = std::numeric_limits<std::uint64_t>::max();

resource_descriptor scaled(std::uint64_t base, std::uint64_t per_unit, std::uint8_t dimension,
                           std::uint64_t alignment) {
  return test::workspace_resource("resource/w", "pool/w", resource_demand::scaled(base, per_unit, dimension),
                                  alignment);
}
}  // namespace

TEST_CASE("demand: a fixed demand is rounded up to its alignment", "[binding][demand]") {
  auto r = test::workspace_resource("resource/w", "pool/w", resource_demand::fixed(100), 64);
  CHECK(resolve_demand(r, {1, 1, 1}).value() == 128);
  r.alignment = 1;
  CHECK(resolve_demand(r, {1, 1, 1}).value() == 100);
}

TEST_CASE("demand: a scaled demand is base + per_unit * capacity[dimension]", "[binding][demand]") {
  CHECK(resolve_demand(scaled(16, 256, 1, 16), {2, 64, 3}).value() == 16 + 256 * 64);
  CHECK(resolve_demand(scaled(0, 10, 2, 8), {2, 64, 3}).value() == 32);
  CHECK(resolve_demand(scaled(0, 10, 0, 1), {7, 64, 3}).value() == 70);
}

TEST_CASE("demand: an alignment that is not a power of two is invalid_alignment", "[binding][demand]") {
  for (std::uint64_t bad : {std::uint64_t{0}, std::uint64_t{3}, std::uint64_t{48}, u64_max})
    CHECK(code_of(resolve_demand(scaled(1, 0, 0, bad), {1, 1, 1})) == errc::invalid_alignment);
  CHECK(is_valid_alignment(std::uint64_t{1} << 63));
}

TEST_CASE("demand: overflow anywhere is size_overflow, not a wrap", "[binding][demand]") {
  CHECK(code_of(resolve_demand(scaled(0, u64_max, 0, 1), {2, 1, 1})) == errc::size_overflow);
  CHECK(code_of(resolve_demand(scaled(u64_max, 1, 0, 1), {1, 1, 1})) == errc::size_overflow);
  CHECK(code_of(resolve_demand(scaled(u64_max - 2, 0, 0, 16), {1, 1, 1})) == errc::size_overflow);
  CHECK(resolve_demand(scaled(u64_max, 0, 0, 1), {1, 1, 1}).value() == u64_max);
}

TEST_CASE("demand: a demand of zero bytes is empty_demand", "[binding][demand]") {
  CHECK(code_of(resolve_demand(scaled(0, 0, 0, 16), {1, 1, 1})) == errc::empty_demand);
  auto r = test::workspace_resource("resource/w", "pool/w", resource_demand::fixed(0), 16);
  auto err = resolve_demand(r, {1, 1, 1}).error();
  CHECK(err.detail.find("'resource/w'") != std::string::npos);
}

TEST_CASE("demand: a dimension outside 0..2 is number_out_of_range", "[binding][demand]") {
  CHECK(code_of(resolve_demand(scaled(0, 1, 3, 1), {1, 1, 1})) == errc::number_out_of_range);
}

TEST_CASE("demand: checked helpers report overflow", "[binding][demand]") {
  CHECK(checked_add(u64_max, 1) == std::nullopt);
  CHECK(checked_mul(u64_max, 2) == std::nullopt);
  CHECK(checked_align_up(u64_max, 2) == std::nullopt);
  CHECK(checked_align_up(17, 16) == std::optional<std::uint64_t>(32));
}
