#include "ferrum/binding/admission.hpp"

#include "plan_builder.hpp"

#include <limits>

using namespace ferrum;
using test::code_of;

TEST_CASE("admission: lanes times every bucket's arenas must fit the budget", "[binding][admission]") {
  const std::vector<std::uint64_t> arenas{192, 1024, 64};
  CHECK(check_admission(3, 3 * 1280, arenas).value() == 3 * 1280);
  auto over = check_admission(3, 3 * 1280 - 1, arenas);
  CHECK(code_of(over) == errc::admission_exceeded);
  CHECK(over.error().path == "/budget_bytes");
}

TEST_CASE("admission: sums that overflow u64 are size_overflow", "[binding][admission]") {
  constexpr auto max = std::numeric_limits<std::uint64_t>::max();
  const std::vector<std::uint64_t> huge{max, 1};
  CHECK(code_of(check_admission(1, max, huge)) == errc::size_overflow);
  const std::vector<std::uint64_t> half{max / 2 + 1};
  CHECK(code_of(check_admission(2, max, half)) == errc::size_overflow);
}

TEST_CASE("admission: compile rejects a plan whose lanes exceed budget_bytes", "[binding][admission]") {
  plan p = test::two_node_plan();
  p.lanes = 3;
  p.budget_bytes = 3 * 192;
  CHECK(test::compile_ok(p).admitted_bytes == 576);
  p.budget_bytes = 3 * 192 - 1;
  auto r = compile(p);
  CHECK(code_of(r) == errc::admission_exceeded);
}
