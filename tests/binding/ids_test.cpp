#include "ferrum/binding/ids.hpp"

#include "plan_builder.hpp"

#include <set>
#include <unordered_set>

using namespace ferrum;
using test::code_of;

TEST_CASE("ids: well-formed ids of every allowed character are accepted", "[binding][ids]") {
  CHECK(node_id::make("node/first").has_value());
  CHECK(resource_id::make("a-z.0_9/x@y").has_value());
  CHECK(pool_id::make(std::string(max_id_length, 'p')).has_value());
}

TEST_CASE("ids: empty, overlong and out-of-set ids are rejected with invalid_id", "[binding][ids]") {
  CHECK(code_of(node_id::make("")) == errc::invalid_id);
  CHECK(code_of(node_id::make(std::string(max_id_length + 1, 'n'))) == errc::invalid_id);
  for (std::string_view bad : {"Node", "node first", "node\n", "nöde", "node#1", "node\\x"})
    CHECK(code_of(resource_id::make(bad)) == errc::invalid_id);
  auto err = node_id::make("Bad").error();
  CHECK(err.detail == "'Bad'");
}

TEST_CASE("ids: ids are totally ordered and hashable", "[binding][ids]") {
  auto a = test::id<node_id>("a");
  auto b = test::id<node_id>("b");
  CHECK(a < b);
  CHECK(a == test::id<node_id>("a"));
  std::set<node_id> ordered{b, a};
  CHECK(ordered.begin()->str() == "a");
  std::unordered_set<node_id> hashed{a, b, a};
  CHECK(hashed.size() == 2);
}

TEST_CASE("ids: a bucket id joins class and capacity as class@d0xd1xd2", "[binding][ids]") {
  auto id = bucket_id::make(test::id<bucket_class>("step"), {1, 64, 1});
  REQUIRE(id.has_value());
  CHECK(id->str() == "step@1x64x1");
}

TEST_CASE("ids: a bucket class containing '@' or a bucket id past 128 characters is invalid_id", "[binding][ids]") {
  CHECK(code_of(bucket_id::make(test::id<bucket_class>("st@ep"), {1, 1, 1})) == errc::invalid_id);
  auto long_class = test::id<bucket_class>(std::string(120, 'c'));
  CHECK(code_of(bucket_id::make(long_class, {1000, 1000, 1000})) == errc::invalid_id);
}
