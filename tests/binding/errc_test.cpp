#include "ferrum/error.hpp"

#include "plan_builder.hpp"

#include <set>

using namespace ferrum;

TEST_CASE("errc: every code has a distinct snake_case name and a message", "[binding][errc]") {
  std::set<std::string_view> names;
  for (int value = 1; errc_name(static_cast<errc>(value)) != "unknown"; ++value) {
    const auto code = static_cast<errc>(value);
    const std::string_view name = errc_name(code);
    CHECK(names.insert(name).second);
    CHECK(name.find_first_not_of("abcdefghijklmnopqrstuvwxyz_0123456789") == std::string_view::npos);
    CHECK_FALSE(make_error_code(code).message().empty());
    CHECK(make_error_code(code).message() != "unknown ferrum error");
  }
  CHECK(names.size() > 40);
}

TEST_CASE("errc: codes belong to the ferrum category and compare with errc", "[binding][errc]") {
  boost::system::error_code code = errc::inexact_cover;
  CHECK(code.category().name() == std::string("ferrum"));
  CHECK(code == make_error_code(errc::inexact_cover));
  CHECK(error_code_name(code) == "inexact_cover");
  CHECK(error_code_name(boost::system::error_code(5, boost::system::generic_category())) == "generic:5");
}

TEST_CASE("errc: an error's what() names code, message, detail and path on one line", "[binding][errc]") {
  const error e = make_error(errc::invalid_alignment, "resource 'r': alignment 3", "/resources/0/alignment");
  CHECK(e == errc::invalid_alignment);
  CHECK(e.what() ==
        "invalid_alignment: an alignment is not a power of two: resource 'r': alignment 3 (at /resources/0/alignment)");
  CHECK(make_error(errc::empty_plan).what() == "empty_plan: the plan has no nodes or no buckets");
}

TEST_CASE("errc: result::value() on an error throws error_exception carrying the error", "[binding][errc]") {
  result<int> r = make_error(errc::empty_demand, "x");
  try {
    (void)r.value();
    FAIL("value() did not throw");
  } catch (const error_exception& e) {
    CHECK(e.error() == errc::empty_demand);
  }
}

TEST_CASE("errc: quoted details stay one printable ASCII line whatever the input", "[binding][errc]") {
  CHECK(quote_text("node/a") == "'node/a'");
  CHECK(quote_text("a'b\\c") == "'a\\x27b\\x5cc'");
  CHECK(quote_text(std::string_view("\n\xc3\xa9\0", 4)) == "'\\x0a\\xc3\\xa9\\x00'");
  const std::string quoted = quote_text(std::string(100, 'x'));
  CHECK(quoted == "'" + std::string(64, 'x') + "...'");
  CHECK(printable("tab\there", 3) == "tab...");
}

// Appended here rather than at the top while tests/binding is being edited by
// others; it belongs with the includes above.
#include <boost/asio/error.hpp>

TEST_CASE("errc: a cancellation is named operation_aborted rather than system:125", "[binding][errc]") {
  CHECK(error_code_name(boost::asio::error::operation_aborted) == "operation_aborted");
  CHECK(error_code_name(make_error_code(boost::system::errc::operation_canceled)) == "operation_aborted");
  // Other system codes keep the generic form.
  CHECK(error_code_name(boost::system::error_code(5, boost::system::system_category())) == "system:5");
}

TEST_CASE("errc: scheduler options have a code of their own apart from device options", "[binding][errc]") {
  CHECK(errc_name(errc::invalid_scheduler_option) == "invalid_scheduler_option");
  CHECK(make_error_code(errc::invalid_scheduler_option) != make_error_code(errc::invalid_device_option));
  CHECK(make_error_code(errc::invalid_scheduler_option).message() == "a scheduler option is outside its allowed range");
  // Added at the end of the enum, so that the codes before it keep their values.
  CHECK(static_cast<int>(errc::invalid_scheduler_option) > static_cast<int>(errc::scheduler_shut_down));
}
