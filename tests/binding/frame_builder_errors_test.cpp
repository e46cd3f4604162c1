// Tests of frame_builder's refusals: each bad declaration is refused by
// build() with the plan file's code, naming the pass and the resource by
// the names the engine gave them.
#include "ferrum/binding/frame_builder.hpp"

#include "test_namespace.hpp"

#include <catch2/catch.hpp>

#include <string>

using namespace ferrum;

namespace {

// Who refuses a bad declaration: build() and hash() alike (a refusal of
// the declarations), or build() only (validate_plan's, which hash() defers:
// it hashes the plan that build() refuses).
enum class refused_by { both, build };

// The error of `f.build()`, which must fail with `code`; its text names
// each of `names`. hash() gives the same error, or (`refused_by::build`)
// a hash.
void check_refused(frame_builder& f, errc code, std::initializer_list<std::string_view> names,
                   std::string_view path = {}, refused_by who = refused_by::both) {
  const result<plan> built = f.build();
  REQUIRE_FALSE(built.has_value());
  INFO(built.error().what());
  CHECK(built.error() == code);
  for (const std::string_view name : names) CHECK(built.error().what().find(name) != std::string::npos);
  if (!path.empty()) CHECK(built.error().path == path);
  const result<plan_hash> hashed = f.hash();
  if (who == refused_by::build) {
    CHECK(hashed.has_value());
    return;
  }
  REQUIRE_FALSE(hashed.has_value());
  CHECK(hashed.error() == code);
  CHECK(hashed.error().what() == built.error().what());
  CHECK(hashed.error().path == built.error().path);
}

buffer_info bytes(std::uint64_t n) { return {.size = resource_demand::fixed(n)}; }
image_info color() { return {.image = {.format = image_format::rgba8_unorm, .width = 8, .height = 8}}; }

}  // namespace

TEST_CASE("frame builder refuses a name declared twice", "[frame_builder][errors]") {
  SECTION("a pass") {
    frame_builder f;
    const buffer_handle b = f.add_buffer("resource/b", bytes(64));
    f.access(f.add_pass("node/a"), b, resource_access::write);
    f.access(f.add_pass("node/a"), b, resource_access::write);
    check_refused(f, errc::duplicate_id, {"pass", "'node/a'"}, "/nodes/1/id");
  }
  SECTION("a resource") {
    frame_builder f;
    f.add_buffer("resource/b", bytes(64));
    f.add_image("resource/b", color());
    check_refused(f, errc::duplicate_id, {"'resource/b'"}, "/resources/1/id");
  }
  SECTION("a parameter block named as a resource") {
    frame_builder f;
    f.add_buffer("resource/pass.args", bytes(64));
    f.add_pass("node/pass", {.parameter_bytes = 64});
    check_refused(f, errc::duplicate_id, {"'resource/pass.args'"});
  }
}

TEST_CASE("frame builder refuses a name that is not an id", "[frame_builder][errors]") {
  SECTION("a pass") {
    frame_builder f;
    f.add_pass("Node A");
    check_refused(f, errc::invalid_id, {"'Node A'"}, "/nodes/0/id");
  }
  SECTION("a resource") {
    frame_builder f;
    f.add_buffer("resource/B", bytes(64));
    check_refused(f, errc::invalid_id, {"'resource/B'"}, "/resources/0/id");
  }
  SECTION("a pool") {
    frame_builder f;
    buffer_info info = bytes(64);
    info.pool = "pool B";
    f.access(f.add_pass("node/a"), f.add_buffer("resource/b", info), resource_access::write);
    check_refused(f, errc::invalid_id, {"'resource/b'", "'pool B'"}, "/resources/0/pool");
  }
  SECTION("a bucket class") {
    frame_builder f;
    f.access(f.add_pass("node/a"), f.add_buffer("resource/b", bytes(64)), resource_access::write);
    f.add_bucket("frame@hd", {1, 1, 1});
    check_refused(f, errc::invalid_id, {"'frame@hd'"}, "/buckets/0/class", refused_by::build);
  }
}

TEST_CASE("frame builder refuses a handle of another builder", "[frame_builder][errors]") {
  frame_builder other;
  const buffer_handle foreign_buffer = other.add_buffer("resource/b", bytes(64));
  const image_handle foreign_image = other.add_image("image/i", color());
  const node_handle foreign_pass = other.add_pass("node/a");
  // Each builder below declares as many of each as `other`, so that only
  // the builder's identity tells the handles apart.
  SECTION("a buffer") {
    frame_builder f;
    f.add_buffer("resource/own", bytes(64));
    f.access(f.add_pass("node/a"), foreign_buffer, resource_access::write);
    check_refused(f, errc::dangling_reference, {"pass 'node/a'", "buffer handle"});
  }
  SECTION("an image") {
    frame_builder f;
    f.add_buffer("resource/own", bytes(64));
    f.add_image("image/own", color());
    f.access(f.add_pass("node/a"), foreign_image, resource_access::storage_write);
    check_refused(f, errc::dangling_reference, {"pass 'node/a'", "image handle"});
  }
  SECTION("an image's handle used as a buffer's of the same builder") {
    frame_builder f;
    const image_handle image = f.add_image("image/i", color());
    f.access(f.add_pass("node/a"), buffer_handle{image.index, image.builder}, resource_access::write);
    check_refused(f, errc::dangling_reference, {"pass 'node/a'", "buffer handle"});
  }
  SECTION("a pass") {
    frame_builder f;
    f.add_pass("node/x");
    f.add_pass("node/y");
    f.add_pass("node/z");
    f.access(foreign_pass, f.add_buffer("resource/b", bytes(64)), resource_access::write);
    check_refused(f, errc::dangling_reference, {"pass handle"});
  }
  SECTION("a pass in 'after'") {
    frame_builder f;
    const node_handle a = f.add_pass("node/a");
    f.after(a, foreign_pass);
    check_refused(f, errc::dangling_reference, {"'after' of pass 'node/a'"});
  }
  SECTION("a default handle") {
    frame_builder f;
    f.access(f.add_pass("node/a"), image_handle{}, resource_access::storage_write);
    check_refused(f, errc::dangling_reference, {"image handle"});
  }
  SECTION("the current of a previous") {
    frame_builder f;
    f.add_previous("image/i.previous", foreign_image);
    check_refused(f, errc::dangling_reference, {"'image/i.previous'"});
  }
}

TEST_CASE("frame builder refuses a resource read before a pass writes it", "[frame_builder][errors]") {
  SECTION("a transient buffer") {
    frame_builder f;
    const buffer_handle b = f.add_buffer("resource/data", bytes(64));
    f.access(f.add_pass("node/read"), b, resource_access::read);
    f.access(f.add_pass("node/write"), b, resource_access::write);
    check_refused(f, errc::invalid_access, {"pass 'node/read'", "buffer 'resource/data'"},
                  "/nodes/0/access/resource~1data");
  }
  SECTION("a transient image") {
    frame_builder f;
    const image_handle i = f.add_image("image/color", color());
    f.access(f.add_pass("node/read"), i, resource_access::sampled);
    f.access(f.add_pass("node/write"), i, resource_access::storage_write);
    check_refused(f, errc::image_read_before_write, {"'node/read'", "'image/color'"}, {}, refused_by::build);
  }
  SECTION("but not a buffer the host uploads, or the engine's") {
    for (const memory_class memory : {memory_class::upload, memory_class::imported}) {
      frame_builder f;
      buffer_info info = bytes(64);
      info.memory = memory;
      f.access(f.add_pass("node/read"), f.add_buffer("resource/data", info), resource_access::read);
      CHECK(f.build().has_value());
    }
  }
}

TEST_CASE("frame builder refuses an 'after' that closes a cycle or names a later pass", "[frame_builder][errors]") {
  frame_builder f;
  const buffer_handle b = f.add_buffer("resource/b", bytes(64));
  const node_handle first = f.add_pass("node/first");
  f.access(first, b, resource_access::write);
  const node_handle second = f.add_pass("node/second");
  f.access(second, b, resource_access::read);
  const node_handle third = f.add_pass("node/third");
  SECTION("itself") {
    f.after(second, second);
    check_refused(f, errc::dependency_cycle, {"'node/second'"}, "/nodes/1/after");
  }
  SECTION("a later pass that runs after it") {
    f.after(first, second);
    check_refused(f, errc::dependency_cycle, {"pass 'node/first'", "pass 'node/second'"}, "/nodes/0/after");
  }
  SECTION("a later pass that does not") {
    f.after(first, third);
    check_refused(f, errc::dependency_not_earlier, {"pass 'node/first'", "pass 'node/third'"}, "/nodes/0/after");
  }
}

TEST_CASE("frame builder refuses an access the image's format cannot take", "[frame_builder][errors]") {
  frame_builder f;
  const image_handle i = f.add_image("image/color", color());
  f.access(f.add_pass("node/depth"), i, resource_access::depth_attachment);
  check_refused(f, errc::invalid_image_access, {"'node/depth'", "'image/color'", "depth-attachment"}, {},
                refused_by::build);
}

TEST_CASE("frame builder refuses two kinds of resources in one pool", "[frame_builder][errors]") {
  frame_builder f;
  buffer_info persistent = bytes(64);
  persistent.lifetime = allocation_lifetime::persistent;
  persistent.pool = "pool/transient";
  const node_handle n = f.add_pass("node/a");
  f.access(n, f.add_buffer("resource/scratch", bytes(64)), resource_access::write);
  f.access(n, f.add_buffer("resource/state", persistent), resource_access::read_write);
  check_refused(f, errc::incompatible_pool_member, {"'resource/scratch'", "'resource/state'", "'pool/transient'"},
                "/resources/1/pool");
}

TEST_CASE("frame builder refuses a budget for a pool no resource is in", "[frame_builder][errors]") {
  frame_builder f;
  f.access(f.add_pass("node/a"), f.add_buffer("resource/b", bytes(64)), resource_access::write);
  f.add_bucket("frame", {1, 1, 1}, {{"pool/transient", 0, 4096}, {"pool/elsewhere", 0, 4096}});
  check_refused(f, errc::dangling_reference, {"'frame'", "'pool/elsewhere'"}, "/buckets/0/budgets/1/pool");
}

TEST_CASE("frame builder refuses what validate_plan refuses, by the engine's names", "[frame_builder][errors]") {
  frame_builder f;
  f.access(f.add_pass("node/a"), f.add_buffer("resource/b", bytes(64)), resource_access::write);
  f.add_buffer("resource/unused", bytes(64));
  check_refused(f, errc::unused_resource, {"'resource/unused'"}, {}, refused_by::build);
}
