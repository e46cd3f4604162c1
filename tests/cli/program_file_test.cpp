// End-to-end tests of the compiled-program cache through the built `ferrum`:
// `ferrum compile PLAN --out FILE` and `ferrum run PLAN --program FILE`
// (docs/interfaces.md, "ferrum.program.v1").
#include "ferrum_process.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

using cli_test::command_result;
using cli_test::example_plan;
using cli_test::read_file;
using cli_test::run_ferrum;
using cli_test::temp_file;

namespace {

// Compiles `plan` with --out into `out` (requiring exit 0).
void compile_to(const std::string& plan, const std::string& out) {
  const command_result r = run_ferrum({"compile", plan, "--out", out});
  INFO("stderr: " << r.err);
  REQUIRE(r.status == 0);
}

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

// A rejected program: exit 2, the code on stderr and in the JSON error object.
void check_rejected_program(const command_result& r, const std::string& code) {
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  CHECK(r.status == 2);
  CHECK(cli_test::one_line(r.err));
  CHECK(cli_test::starts_with(r.err, "ferrum: error: " + code + ": "));
  REQUIRE(nlohmann::json::accept(r.out));
  CHECK(nlohmann::json::parse(r.out)["error"]["code"] == code);
}

}  // namespace

TEST_CASE("ferrum compile --out writes a program that ferrum run --program runs without violations", "[cli]") {
  for (const char* name :
       {"two_nodes.json", "multi_bucket.json", "interval_liveness.json", "history.json", "two_queues.json"}) {
    INFO(name);
    const temp_file program("");
    compile_to(example_plan(name), program.path());
    CHECK(read_file(program.path()).rfind("FERRUMCP", 0) == 0);
    const command_result r =
        run_ferrum({"run", example_plan(name), "--program", program.path(), "--json", "--waves", "12"});
    INFO("stdout: " << r.out << "\nstderr: " << r.err);
    CHECK(r.status == 0);
    REQUIRE(nlohmann::json::accept(r.out));
    const nlohmann::json report = nlohmann::json::parse(r.out);
    CHECK(report["violations"] == 0);
    CHECK(report["waves"]["completed"] == 12);
    const command_result compiled = run_ferrum({"compile", example_plan(name), "--json"});
    CHECK(report["plan_hash"] == nlohmann::json::parse(compiled.out)["plan_hash"]);
  }
}

TEST_CASE("ferrum compile --out says where it wrote, in the table and in the JSON document", "[cli]") {
  const temp_file program("");
  const command_result table = run_ferrum({"compile", example_plan("two_nodes.json"), "--out", program.path()});
  CHECK(table.status == 0);
  CHECK(table.out.find("\nprogram   written to " + program.path() + " (") != std::string::npos);

  const command_result json =
      run_ferrum({"compile", "--json", example_plan("two_nodes.json"), "--out", program.path()});
  CHECK(json.status == 0);
  REQUIRE(nlohmann::json::accept(json.out));
  const nlohmann::json document = nlohmann::json::parse(json.out);
  CHECK(document["format"] == "ferrum.compiled.v1");
  CHECK(document["program_file"]["path"] == program.path());
  CHECK(document["program_file"]["bytes"] == std::filesystem::file_size(program.path()));
  // Without --out the document is as before.
  const command_result plain = run_ferrum({"compile", "--json", example_plan("two_nodes.json")});
  CHECK(!nlohmann::json::parse(plain.out).contains("program_file"));
}

TEST_CASE("ferrum run --program rejects the program of another plan as program_stale", "[cli]") {
  const temp_file program("");
  compile_to(example_plan("two_nodes.json"), program.path());
  check_rejected_program(run_ferrum({"run", example_plan("multi_bucket.json"), "--program", program.path(), "--json"}),
                         "program_stale");
}

TEST_CASE("ferrum run --program rejects a truncated or altered file with its code", "[cli]") {
  const temp_file program("");
  compile_to(example_plan("history.json"), program.path());
  const std::string bytes = read_file(program.path());

  write_file(program.path(), bytes.substr(0, bytes.size() / 2));
  check_rejected_program(run_ferrum({"run", example_plan("history.json"), "--program", program.path(), "--json"}),
                         "program_truncated");

  std::string altered = bytes;
  altered[200] = static_cast<char>(altered[200] ^ 1);
  write_file(program.path(), altered);
  check_rejected_program(run_ferrum({"run", example_plan("history.json"), "--program", program.path(), "--json"}),
                         "program_checksum_mismatch");

  write_file(program.path(), read_file(example_plan("history.json")));
  check_rejected_program(run_ferrum({"run", example_plan("history.json"), "--program", program.path(), "--json"}),
                         "program_bad_magic");
}

TEST_CASE("ferrum run --program and compile --out report unreadable and unwritable files as io_error", "[cli]") {
  const command_result missing =
      run_ferrum({"run", example_plan("two_nodes.json"), "--program", "/nonexistent/ferrum.program"});
  CHECK(missing.status == 1);
  CHECK(cli_test::starts_with(missing.err, "ferrum: error: io_error: cannot read '/nonexistent/ferrum.program'"));

  const command_result unwritable =
      run_ferrum({"compile", example_plan("two_nodes.json"), "--out", "/nonexistent/dir/ferrum.program"});
  CHECK(unwritable.status == 1);
  CHECK(cli_test::starts_with(unwritable.err, "ferrum: error: io_error: cannot write"));
}
