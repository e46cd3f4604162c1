// End-to-end tests of `ferrum compile PLAN --graph FILE.svg`: the drawing
// names every node and resource of the plan, marks exactly the nodes that
// compile() puts a barrier before, the aliasing resources, the persistent
// and imported ones, and every failure is reported with its code.
//
// The SVG is read through the classes and titles graph_svg.hpp documents:
// a node is a `<g class="node ...">` whose `<title>` is its Graphviz name
// (`b<bucket>.n<node>`, `b<bucket>.r<resource>`) and whose first `<text>`
// is its id; an edge is a `<g class="edge ...">` titled `from->to`.

#include "compiled_plan.hpp"
#include "ferrum_process.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <stdlib.h>

#include <cstddef>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace {

using cli_test::command_result;
using cli_test::compile_in_process;
using cli_test::example_plan;
using cli_test::one_line;
using cli_test::read_file;
using cli_test::starts_with;
using cli_test::temp_file;

const std::vector<std::string> graph_plans = {"two_nodes.json",         "two_queues.json", "interval_liveness.json",
                                              "imported.json",          "history.json",    "multi_bucket.json",
                                              "two_queues_access.json", "images.json"};

// A directory in the temp directory, removed with what it holds at scope exit.
class temp_dir {
 public:
  temp_dir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "ferrum_graph_test_XXXXXX").string();
    REQUIRE(::mkdtemp(pattern.data()) != nullptr);
    path_ = pattern;
  }
  ~temp_dir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;

  [[nodiscard]] const std::string& path() const noexcept { return path_; }

 private:
  std::string path_;
};

// The text of SVG character data, entities resolved (Graphviz writes '-' as
// "&#45;" and '>' as "&gt;").
std::string unescape(std::string_view text) {
  static const std::pair<std::string_view, char> entities[] = {{"&#45;", '-'}, {"&gt;", '>'},   {"&lt;", '<'},
                                                               {"&amp;", '&'}, {"&quot;", '"'}, {"&#39;", '\''}};
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    bool replaced = false;
    for (const auto& [entity, c] : entities)
      if (text.substr(i, entity.size()) == entity) {
        out += c;
        i += entity.size();
        replaced = true;
        break;
      }
    if (!replaced) out += text[i++];
  }
  return out;
}

// One `<g>` element of the SVG: its classes, title and texts (up to the
// next `<g` or `</g>`; Graphviz nests none inside a node or edge without
// links).
struct svg_group {
  std::set<std::string> classes;
  std::string title;
  std::vector<std::string> texts;

  [[nodiscard]] bool is(const std::string& c) const { return classes.contains(c); }
};

// The contents of each `<tag ...>...</tag>` in `text`, in order.
std::vector<std::string> elements(std::string_view text, std::string_view tag) {
  std::vector<std::string> found;
  const std::string open = "<" + std::string(tag);
  const std::string close = "</" + std::string(tag) + ">";
  for (std::size_t at = text.find(open); at != std::string_view::npos; at = text.find(open, at + 1)) {
    const std::size_t begin = text.find('>', at);
    const std::size_t end = text.find(close, begin);
    if (begin == std::string_view::npos || end == std::string_view::npos) break;
    found.push_back(unescape(text.substr(begin + 1, end - begin - 1)));
  }
  return found;
}

std::vector<svg_group> svg_groups(const std::string& svg) {
  std::vector<svg_group> groups;
  for (std::size_t at = svg.find("<g "); at != std::string::npos; at = svg.find("<g ", at + 1)) {
    const std::size_t next = std::min(svg.find("<g ", at + 1), svg.find("</g>", at));
    const std::string_view body = std::string_view(svg).substr(at, next - at);
    svg_group g;
    const std::size_t class_at = body.find("class=\"");
    REQUIRE(class_at != std::string_view::npos);
    const std::size_t class_end = body.find('"', class_at + 7);
    // Graphviz writes a class's '-' as "&#45;" too.
    const std::string classes = unescape(body.substr(class_at + 7, class_end - class_at - 7));
    for (std::size_t p = 0; p <= classes.size();) {
      const std::size_t space = std::min(classes.find(' ', p), classes.size());
      if (space > p) g.classes.insert(classes.substr(p, space - p));
      p = space + 1;
    }
    const std::vector<std::string> titles = elements(body, "title");
    if (!titles.empty()) g.title = titles.front();
    g.texts = elements(body, "text");
    groups.push_back(std::move(g));
  }
  return groups;
}

// The drawing of one plan: its nodes and resources by Graphviz name.
struct drawing {
  std::vector<svg_group> groups;
  std::map<std::string, const svg_group*> by_name;  // nodes and resources

  // The bucket index a Graphviz name `b<b>.<x>` is in.
  static std::size_t bucket_of(const std::string& name) { return std::stoul(name.substr(1, name.find('.') - 1)); }
  // The id drawn on the node or resource named `name`.
  [[nodiscard]] std::string id_of(const std::string& name) const {
    const auto it = by_name.find(name);
    REQUIRE(it != by_name.end());
    REQUIRE(!it->second->texts.empty());
    return it->second->texts.front();
  }
};

drawing read_drawing(const std::string& svg) {
  drawing d;
  d.groups = svg_groups(svg);
  for (const svg_group& g : d.groups)
    if (g.is("node")) d.by_name[g.title] = &g;
  return d;
}

// cli_test::run_ferrum, told not to list the leak suppressions it used: under the
// asan preset, LeakSanitizer prints a table of them on stderr at exit
// whenever one matched, and Graphviz's own leaks always match
// (tests/sanitizers/lsan.supp), which would add lines to the one error
// line (or the empty stderr) these tests check. The leak check itself
// stays on.
command_result run_unlisted(const std::vector<std::string>& args,
                            std::vector<std::pair<std::string, std::string>> env = {}) {
  if (const char* lsan = std::getenv("LSAN_OPTIONS"); lsan != nullptr)
    env.emplace_back("LSAN_OPTIONS", std::string(lsan) + ":print_suppressions=0");
  return cli_test::run_ferrum(args, env);
}

// Runs `ferrum compile <plan> --graph <tmp>` and returns the SVG it wrote.
std::string draw(const std::string& plan) {
  const temp_file svg("");
  const command_result result = run_unlisted({"compile", plan, "--graph", svg.path()});
  INFO("stderr: " << result.err);
  REQUIRE(result.status == 0);
  CHECK(result.err.empty());
  CHECK(result.out.find("graph     written to " + svg.path() + " (SVG)\n") != std::string::npos);
  return read_file(svg.path());
}

// draw(plan), once per plan and process: the test cases below read the same
// drawings, and under the sanitizer presets a file's cases share a process
// (each draw is a ferrum process running Graphviz, about a second there).
const std::string& drawing_of(const std::string& plan) {
  static std::map<std::string, std::string> drawn;
  const auto it = drawn.find(plan);
  return it != drawn.end() ? it->second : drawn.emplace(plan, draw(plan)).first->second;
}

// Per bucket, the pairs of resource ids (ascending) whose bytes in the lane
// overlap, from the compiled program's lane recipes.
std::vector<std::set<std::pair<std::string, std::string>>> expected_aliases(const cli_test::compiled_plan& c) {
  std::vector<std::set<std::pair<std::string, std::string>>> pairs;
  for (const ferrum::compiled_bucket& bucket : c.program.buckets) {
    std::map<std::string, std::pair<std::uint64_t, std::uint64_t>> bytes;  // id: [begin, end)
    for (const ferrum::lane_use& use : bucket.lane.uses) {
      const std::size_t r = c.program.domains[use.domain].members[use.member];
      bytes[c.plan.resources[r].id.str()] = {use.offset, use.offset + use.size};
    }
    std::set<std::pair<std::string, std::string>>& overlapping = pairs.emplace_back();
    for (const auto& [a, x] : bytes)
      for (const auto& [b, y] : bytes)
        if (a < b && x.first < x.second && y.first < y.second && x.first < y.second && y.first < x.second)
          overlapping.insert({a, b});
  }
  return pairs;
}

}  // namespace

TEST_CASE("ferrum compile --graph writes SVG naming every node and resource of the plan in every bucket", "[cli]") {
  for (const std::string& name : graph_plans) {
    INFO(name);
    const cli_test::compiled_plan c = compile_in_process(example_plan(name));
    const std::string& svg = drawing_of(example_plan(name));
    CHECK(starts_with(svg, "<?xml"));
    CHECK(svg.find("<svg") != std::string::npos);
    const drawing d = read_drawing(svg);

    std::vector<std::multiset<std::string>> nodes(c.program.buckets.size()), resources(nodes.size());
    std::vector<std::set<std::string>> cluster_labels;
    for (const svg_group& g : d.groups) {
      if (g.is("bucket")) cluster_labels.push_back({g.texts.begin(), g.texts.end()});
      if (!g.is("node")) continue;
      const std::size_t b = drawing::bucket_of(g.title);
      REQUIRE(b < nodes.size());
      REQUIRE(!g.texts.empty());
      if (g.is("plan-node")) nodes[b].insert(g.texts.front());
      if (g.is("resource")) resources[b].insert(g.texts.front());
    }
    std::multiset<std::string> plan_nodes, plan_resources;
    for (const ferrum::plan_node& n : c.plan.nodes) plan_nodes.insert(n.id.str());
    for (const ferrum::resource_descriptor& r : c.plan.resources) plan_resources.insert(r.id.str());
    CHECK(cluster_labels.size() == c.program.buckets.size());
    for (std::size_t b = 0; b < nodes.size(); ++b) {
      INFO("bucket " << c.program.buckets[b].id.str());
      CHECK(nodes[b] == plan_nodes);
      CHECK(resources[b] == plan_resources);
      bool labelled = false;
      for (const std::set<std::string>& labels : cluster_labels)
        labelled = labelled || labels.contains("bucket " + c.program.buckets[b].id.str());
      CHECK(labelled);
    }
  }
}

TEST_CASE("ferrum compile --graph draws the dependency edges and each use with its access", "[cli]") {
  for (const std::string& name : graph_plans) {
    INFO(name);
    const cli_test::compiled_plan c = compile_in_process(example_plan(name));
    const drawing d = read_drawing(drawing_of(example_plan(name)));
    std::multiset<std::string> dependencies, uses;
    for (const svg_group& g : d.groups) {
      if (!g.is("edge")) continue;
      const std::size_t arrow = g.title.find("->");
      REQUIRE(arrow != std::string::npos);
      const std::string from = g.title.substr(0, arrow), to = g.title.substr(arrow + 2);
      const std::string in = c.program.buckets[drawing::bucket_of(from)].id.str() + " ";
      if (g.is("dependency")) dependencies.insert(in + d.id_of(from) + " -> " + d.id_of(to));
      if (g.is("use")) {
        REQUIRE(g.texts.size() == 1);
        uses.insert(in + d.id_of(from) + " " + g.texts.front() + " " + d.id_of(to));
      }
    }
    std::multiset<std::string> expected_dependencies, expected_uses;
    for (const ferrum::compiled_bucket& bucket : c.program.buckets)
      for (std::size_t n = 0; n < c.plan.nodes.size(); ++n) {
        for (const std::size_t before : c.program.dependencies.after(n))
          expected_dependencies.insert(bucket.id.str() + " " + c.plan.nodes[before].id.str() + " -> " +
                                       c.plan.nodes[n].id.str());
        for (std::size_t k = 0; k < c.plan.nodes[n].resources.size(); ++k)
          expected_uses.insert(bucket.id.str() + " " + c.plan.nodes[n].id.str() + " " +
                               std::string(ferrum::to_string(c.plan.nodes[n].access_of(k))) + " " +
                               c.plan.nodes[n].resources[k].str());
      }
    CHECK(dependencies == expected_dependencies);
    CHECK(uses == expected_uses);
    if (c.plan.nodes.size() > 1) CHECK(!expected_dependencies.empty());
  }
}

TEST_CASE("ferrum compile --graph marks exactly the nodes compile() puts a barrier before", "[cli]") {
  std::size_t barriers_seen = 0;
  for (const std::string& name : graph_plans) {
    INFO(name);
    const cli_test::compiled_plan c = compile_in_process(example_plan(name));
    const drawing d = read_drawing(drawing_of(example_plan(name)));
    std::vector<std::set<std::string>> marked(c.program.buckets.size());
    for (const svg_group& g : d.groups) {
      if (!g.is("plan-node")) continue;
      const bool labelled = std::find(g.texts.begin(), g.texts.end(), "barrier before") != g.texts.end();
      CHECK(labelled == g.is("barrier"));
      if (g.is("barrier")) marked[drawing::bucket_of(g.title)].insert(g.texts.front());
    }
    for (std::size_t b = 0; b < c.program.buckets.size(); ++b) {
      INFO("bucket " << c.program.buckets[b].id.str());
      std::set<std::string> expected;
      for (const std::size_t n : cli_test::barrier_nodes(c.program.buckets[b]))
        expected.insert(c.plan.nodes[n].id.str());
      CHECK(marked[b] == expected);
      barriers_seen += expected.size();
    }
  }
  // history.json and two_queues_access.json have barriers: the marks are
  // checked where there are some, not only where there are none.
  CHECK(barriers_seen > 0);
}

TEST_CASE("ferrum compile --graph joins exactly the resources that share bytes", "[cli]") {
  for (const std::string& name : graph_plans) {
    INFO(name);
    const cli_test::compiled_plan c = compile_in_process(example_plan(name));
    const std::string& svg = drawing_of(example_plan(name));
    const drawing d = read_drawing(svg);
    std::vector<std::set<std::pair<std::string, std::string>>> drawn(c.program.buckets.size());
    for (const svg_group& g : d.groups) {
      if (!g.is("alias")) continue;
      const std::size_t dash = g.title.find("->");
      REQUIRE(dash != std::string::npos);
      std::string a = d.id_of(g.title.substr(0, dash)), b = d.id_of(g.title.substr(dash + 2));
      if (b < a) std::swap(a, b);
      drawn[drawing::bucket_of(g.title)].insert({a, b});
      CHECK(g.texts == std::vector<std::string>{"aliases"});
    }
    const auto expected = expected_aliases(c);
    CHECK(drawn == expected);
    std::size_t pairs = 0;
    for (const auto& bucket : expected) pairs += bucket.size();
    // interval_liveness.json's scratch pool aliases; two_nodes.json has no
    // interval pool: no alias mark at all.
    if (name == "interval_liveness.json") CHECK(pairs > 0);
    if (name == "two_nodes.json") {
      CHECK(pairs == 0);
      CHECK(svg.find("aliases") == std::string::npos);
    }
  }
}

TEST_CASE("ferrum compile --graph marks persistent and imported resources", "[cli]") {
  std::size_t persistent_seen = 0, imported_seen = 0;
  for (const std::string& name : graph_plans) {
    INFO(name);
    const cli_test::compiled_plan c = compile_in_process(example_plan(name));
    const drawing d = read_drawing(drawing_of(example_plan(name)));
    std::set<std::string> imported_pools, expected_persistent, expected_imported;
    for (const ferrum::pool_domain& domain : c.program.domains)
      if (domain.memory == ferrum::memory_class::imported) imported_pools.insert(domain.pool.str());
    for (const ferrum::resource_descriptor& r : c.plan.resources) {
      if (r.lifetime == ferrum::allocation_lifetime::persistent) expected_persistent.insert(r.id.str());
      if (imported_pools.contains(r.pool.str())) expected_imported.insert(r.id.str());
    }
    std::vector<std::set<std::string>> persistent(c.program.buckets.size()), imported(persistent.size());
    for (const svg_group& g : d.groups) {
      if (!g.is("resource")) continue;
      const std::size_t b = drawing::bucket_of(g.title);
      if (g.is("persistent")) persistent[b].insert(g.texts.front());
      if (g.is("imported")) imported[b].insert(g.texts.front());
      const bool says_persistent = std::find(g.texts.begin(), g.texts.end(), "persistent") != g.texts.end();
      const bool says_imported = std::find(g.texts.begin(), g.texts.end(), "imported") != g.texts.end();
      CHECK(says_persistent == g.is("persistent"));
      CHECK(says_imported == g.is("imported"));
    }
    for (std::size_t b = 0; b < persistent.size(); ++b) {
      CHECK(persistent[b] == expected_persistent);
      CHECK(imported[b] == expected_imported);
    }
    persistent_seen += expected_persistent.size();
    imported_seen += expected_imported.size();
  }
  CHECK(persistent_seen > 0);
  CHECK(imported_seen > 0);
}

TEST_CASE("ferrum compile --graph with --json leaves the document as it is and still draws", "[cli]") {
  const temp_file svg("");
  const command_result plain = run_unlisted({"compile", "--json", example_plan("two_queues.json")});
  const command_result drawn =
      run_unlisted({"compile", "--json", example_plan("two_queues.json"), "--graph", svg.path()});
  REQUIRE(drawn.status == 0);
  CHECK(drawn.out == plain.out);
  CHECK(read_file(svg.path()).find("<svg") != std::string::npos);
}

TEST_CASE("ferrum compile --graph to a file that cannot be written is an io_error", "[cli]") {
  const std::string path = "/nonexistent-dir/x.svg";
  const command_result result = run_unlisted({"compile", example_plan("two_nodes.json"), "--graph", path});
  CHECK(result.status == 1);
  CHECK(result.out.empty());
  CHECK(one_line(result.err));
  CHECK(starts_with(result.err, "ferrum: error: io_error: cannot write '" + path + "'"));

  const command_result json = run_unlisted({"compile", "--json", example_plan("two_nodes.json"), "--graph", path});
  CHECK(json.status == 1);
  const nlohmann::json doc = nlohmann::json::parse(json.out);
  CHECK(doc.at("error").at("code") == "io_error");
}

TEST_CASE("ferrum compile --graph is graph_failed where Graphviz has no dot layout", "[cli]") {
  // GVBINDIR names where Graphviz looks for its plugins: here none at all.
  const temp_dir plugins;
  const std::string svg = plugins.path() + "/plan.svg";
  const command_result result =
      run_unlisted({"compile", example_plan("two_nodes.json"), "--graph", svg}, {{"GVBINDIR", plugins.path()}});
  INFO("stderr: " << result.err);
  CHECK(result.status == 1);
  CHECK(result.out.empty());
  CHECK(one_line(result.err));
  CHECK(starts_with(result.err,
                    "ferrum: error: graph_failed: cannot draw '" + svg + "': Graphviz could not lay the graph out: "));
  CHECK(!std::filesystem::exists(svg));
}

TEST_CASE("ferrum compile --graph is graph_failed where Graphviz has no SVG renderer", "[cli]") {
  // Only the dot layout plugin: the graph is laid out, but nothing renders SVG.
  const temp_dir plugins;
  const std::string plugin = std::string(FERRUM_GRAPHVIZ_PLUGIN_DIR) + "/libgvplugin_dot_layout.so.6";
  REQUIRE(std::filesystem::exists(plugin));
  std::filesystem::create_symlink(plugin, plugins.path() + "/libgvplugin_dot_layout.so.6");
  std::ofstream(plugins.path() + "/config6a") << "libgvplugin_dot_layout.so.6 dot_layout {\n"
                                                 "\tlayout {\n\t\tdot 0\n\t}\n}\n";
  const std::string svg = plugins.path() + "/plan.svg";
  const command_result result = run_unlisted({"compile", "--json", example_plan("two_nodes.json"), "--graph", svg},
                                             {{"GVBINDIR", plugins.path()}});
  INFO("stderr: " << result.err);
  CHECK(result.status == 1);
  CHECK(one_line(result.err));
  CHECK(
      starts_with(result.err, "ferrum: error: graph_failed: cannot draw '" + svg + "': Graphviz could not render SVG"));
  CHECK(nlohmann::json::parse(result.out).at("error").at("code") == "graph_failed");
  CHECK(!std::filesystem::exists(svg));
}

TEST_CASE("ferrum compile --graph draws the same plan byte-identically twice", "[cli]") {
  const std::string first = draw(example_plan("interval_liveness.json"));
  const std::string second = draw(example_plan("interval_liveness.json"));
  CHECK(!first.empty());
  CHECK(first == second);
}

TEST_CASE("ferrum compile --graph lists each node's layout transitions, exactly compile()'s", "[cli]") {
  const cli_test::compiled_plan c = compile_in_process(example_plan("images.json"));
  const drawing d = read_drawing(drawing_of(example_plan("images.json")));
  std::vector<std::multiset<std::string>> drawn(c.program.buckets.size()), expected(c.program.buckets.size());
  for (const svg_group& g : d.groups) {
    if (!g.is("plan-node")) continue;
    std::size_t lines = 0;
    for (const std::string& text : g.texts)
      if (text.find(" -> ") != std::string::npos) {
        drawn[drawing::bucket_of(g.title)].insert(g.texts.front() + " " + text);
        ++lines;
      }
    CHECK(g.is("transition") == (lines > 0));
  }
  std::size_t transitions = 0;
  for (std::size_t b = 0; b < c.program.buckets.size(); ++b) {
    const ferrum::lane_recipe& lane = c.program.buckets[b].lane;
    for (std::size_t n = 0; n < c.plan.nodes.size(); ++n)
      for (const ferrum::image_transition& t : lane.node_transitions(n))
        expected[b].insert(c.plan.nodes[n].id.str() + " " + lane.images[t.image].resource.str() + ": " +
                           std::string(ferrum::to_string(t.from)) + " -> " + std::string(ferrum::to_string(t.to)));
    CHECK(drawn[b] == expected[b]);
    transitions += expected[b].size();
  }
  CHECK(transitions > 0);
}

TEST_CASE("ferrum compile --graph shows an image that is a fraction of the bucket's as one", "[cli]") {
  const drawing d = read_drawing(drawing_of(example_plan("frame_chains.json")));
  std::multiset<std::string> shown;
  for (const svg_group& g : d.groups)
    for (const std::string& text : g.texts)
      if (text.find("(bucket/") != std::string::npos) shown.insert(text);
  // Each bucket draws its own extent of the five fractions.
  CHECK(shown.count("image rgba16-float 160x90 (bucket/2)") == 1);
  CHECK(shown.count("image rgba16-float 167x94 (bucket/2)") == 1);
  CHECK(shown.count("image rgba16-float 42x24 (bucket/8)") == 1);
  CHECK(shown.size() == 10);
}
