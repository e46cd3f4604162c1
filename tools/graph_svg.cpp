#include "graph_svg.hpp"

#include <graphviz/cgraph.h>
#include <graphviz/gvc.h>

#include <memory>
#include <string_view>
#include <utility>
#include <vector>

namespace ferrum::tools {
namespace {

using std::to_string;

// Graphviz's C API takes `char*` for names and values it only reads; each
// call gets a copy in a mutable buffer of its own rather than a cast-away
// const.
class c_text {
 public:
  explicit c_text(std::string_view text) : buffer_(text.begin(), text.end()) { buffer_.push_back('\0'); }
  [[nodiscard]] char* get() noexcept { return buffer_.data(); }

 private:
  std::vector<char> buffer_;
};

struct context_deleter {
  void operator()(GVC_t* gvc) const noexcept { gvFreeContext(gvc); }
};
struct graph_deleter {
  void operator()(Agraph_t* g) const noexcept { agclose(g); }
};
struct render_data_deleter {
  void operator()(char* data) const noexcept { gvFreeRenderData(data); }
};
using context_ptr = std::unique_ptr<GVC_t, context_deleter>;
using graph_ptr = std::unique_ptr<Agraph_t, graph_deleter>;
using render_data_ptr = std::unique_ptr<char, render_data_deleter>;

// A graph's layout, freed (gvFreeLayout) before the graph is closed.
class layout_guard {
 public:
  layout_guard(GVC_t* gvc, Agraph_t* g) noexcept : gvc_(gvc), g_(g) {}
  ~layout_guard() { gvFreeLayout(gvc_, g_); }
  layout_guard(const layout_guard&) = delete;
  layout_guard& operator=(const layout_guard&) = delete;

 private:
  GVC_t* gvc_;
  Agraph_t* g_;
};

// What Graphviz reports (agerr) while a drawing is made, instead of its
// stderr: a failure is reported as the command's one error line. One
// buffer, as Graphviz's handler is one global with no user pointer.
std::string graphviz_messages;

int collect_message(char* message) {
  graphviz_messages += message;
  return 0;
}

// Routes Graphviz's messages to graphviz_messages for its lifetime.
class message_capture {
 public:
  message_capture() : previous_(agseterrf(collect_message)) { graphviz_messages.clear(); }
  ~message_capture() { agseterrf(previous_); }
  message_capture(const message_capture&) = delete;
  message_capture& operator=(const message_capture&) = delete;

 private:
  agusererrf previous_;
};

// `what`, and the first line Graphviz reported, without its "Error: ".
std::string failure(std::string_view what) {
  std::string said = graphviz_messages.substr(0, graphviz_messages.find('\n'));
  if (said.starts_with("Error: ")) said.erase(0, 7);
  while (!said.empty() && (said.back() == ' ' || said.back() == '\r')) said.pop_back();
  return said.empty() ? std::string(what) : std::string(what) + ": " + said;
}

void set(void* object, std::string_view name, std::string_view value) {
  c_text n(name), v(value), no_default("");
  agsafeset(object, n.get(), v.get(), no_default.get());
}

// Declares attribute `name` for objects of `kind` (AGRAPH, AGNODE, AGEDGE),
// with `value` where an object does not set it.
void declare(Agraph_t* g, int kind, std::string_view name, std::string_view value) {
  c_text n(name), v(value);
  agattr(g, kind, n.get(), v.get());
}

// Every attribute the drawing sets, with its default: the graph's (and
// clusters'), the nodes', the edges'.
struct attribute_default {
  int kind;
  const char* name;
  const char* value;
};
constexpr attribute_default attribute_defaults[] = {{AGRAPH, "fontname", "Helvetica"},
                                                    {AGRAPH, "rankdir", "TB"},
                                                    {AGRAPH, "label", ""},
                                                    {AGRAPH, "style", ""},
                                                    {AGRAPH, "color", "black"},
                                                    {AGRAPH, "class", ""},
                                                    {AGNODE, "fontname", "Helvetica"},
                                                    {AGNODE, "fontsize", "11"},
                                                    {AGNODE, "shape", "box"},
                                                    {AGNODE, "style", "rounded"},
                                                    {AGNODE, "color", "black"},
                                                    {AGNODE, "fillcolor", "white"},
                                                    {AGNODE, "penwidth", "1"},
                                                    {AGNODE, "label", "\\N"},
                                                    {AGNODE, "class", ""},
                                                    {AGEDGE, "fontname", "Helvetica"},
                                                    {AGEDGE, "fontsize", "9"},
                                                    {AGEDGE, "style", "solid"},
                                                    {AGEDGE, "color", "black"},
                                                    {AGEDGE, "fontcolor", "black"},
                                                    {AGEDGE, "dir", "forward"},
                                                    {AGEDGE, "constraint", "true"},
                                                    {AGEDGE, "xlabel", ""},
                                                    {AGEDGE, "class", ""}};

void declare_attributes(Agraph_t* g) {
  for (const attribute_default& a : attribute_defaults) declare(g, a.kind, a.name, a.value);
}

Agnode_t* add_node(Agraph_t* g, const std::string& name) {
  c_text n(name);
  return agnode(g, n.get(), 1);
}

Agedge_t* add_edge(Agraph_t* g, Agnode_t* from, Agnode_t* to) { return agedge(g, from, to, nullptr, 1); }

std::string resource_label(const plan_picture& picture, const picture_resource& r) {
  std::string label = r.id + "\\n" + r.pool + ", " + std::string(ferrum::to_string(r.memory)) + "\\n" +
                      to_string(r.size) + " bytes at " + to_string(r.offset);
  if (!r.uses.empty())
    label += "\\nlive " + picture.nodes[r.first_node()].id +
             (r.first_node() == r.last_node() ? std::string() : " .. " + picture.nodes[r.last_node()].id);
  if (!r.image.empty()) label += "\\nimage " + r.image;
  if (r.persistent()) label += "\\npersistent";
  if (r.imported()) label += "\\nimported";
  return label;
}

// Bucket `b`'s cluster: its nodes, resources and their edges. Graphviz
// names are `b<b>.n<node>` and `b<b>.r<resource>`, unique in the graph.
void add_bucket(Agraph_t* g, const plan_picture& picture, std::size_t b) {
  const bucket_picture& bucket = picture.buckets[b];
  c_text cluster_name("cluster_" + to_string(b));
  Agraph_t* cluster = agsubg(g, cluster_name.get(), 1);
  set(cluster, "label", "bucket " + bucket.id);
  set(cluster, "style", "rounded");
  set(cluster, "color", "gray50");
  set(cluster, "class", "bucket");
  const std::string prefix = "b" + to_string(b) + ".";

  std::vector<Agnode_t*> nodes;
  for (std::size_t n = 0; n < picture.nodes.size(); ++n) {
    const bool barrier = n < bucket.barrier_before.size() && bucket.barrier_before[n];
    Agnode_t* node = add_node(cluster, prefix + "n" + to_string(n));
    // The barrier's layout transitions, one line each.
    std::string transitions;
    for (const picture_transition& t : bucket.transitions[n])
      transitions += "\\n" + bucket.resources[t.resource].id +
                     (t.range.whole() ? std::string() : " (" + ferrum::to_string(t.range) + ")") + ": " +
                     std::string(ferrum::to_string(t.from)) + " -> " + std::string(ferrum::to_string(t.to));
    set(node, "label",
        picture.nodes[n].id + "\\n" + std::string(ferrum::to_string(picture.nodes[n].queue)) +
            (barrier ? "\\nbarrier before" : "") + transitions);
    set(node, "class",
        std::string(barrier ? "plan-node barrier" : "plan-node") + (transitions.empty() ? "" : " transition"));
    if (picture.nodes[n].queue != queue_kind::compute) {
      set(node, "style", "rounded,filled");
      set(node, "fillcolor", picture.nodes[n].queue == queue_kind::transfer ? "gray90" : "lightcyan");
    }
    if (barrier) {
      set(node, "color", "red");
      set(node, "penwidth", "2");
    }
    nodes.push_back(node);
  }
  for (const picture_dependency& d : picture.dependencies) {
    Agedge_t* edge = add_edge(cluster, nodes[d.before], nodes[d.after]);
    set(edge, "class", "dependency");
    if (d.after < bucket.barrier_before.size() && bucket.barrier_before[d.after]) set(edge, "color", "red");
  }

  std::vector<Agnode_t*> resources;
  for (std::size_t i = 0; i < bucket.resources.size(); ++i) {
    const picture_resource& r = bucket.resources[i];
    Agnode_t* node = add_node(cluster, prefix + "r" + to_string(i));
    set(node, "label", resource_label(picture, r));
    set(node, "shape", "note");
    set(node, "style", "filled");
    set(node, "fillcolor", r.imported() ? "lightblue" : r.persistent() ? "lightyellow" : "white");
    set(node, "class",
        std::string("resource") + (r.persistent() ? " persistent" : "") + (r.imported() ? " imported" : ""));
    for (const picture_use& use : r.uses) {
      Agedge_t* edge = add_edge(cluster, nodes[use.node], node);
      set(edge, "style", "dotted");
      set(edge, "color", "gray40");
      set(edge, "fontcolor", "gray30");
      // xlabel, not label: with labels on flat edges (these, between nodes
      // of one rank), Graphviz 2.42's dot reallocates a list in flat_edges
      // that gvFreeLayout then frees again (valgrind: an invalid free; heap
      // corruption on interval_liveness.json). xlabels are placed after
      // the layout and take no part in it.
      set(edge, "xlabel", ferrum::to_string(use.access));
      set(edge, "class", "use");
      // Only the first use ranks the resource: it is drawn where its
      // lifetime starts, beside the next node, not below its last user.
      if (use.node != r.first_node()) set(edge, "constraint", "false");
    }
    resources.push_back(node);
  }
  for (const picture_alias& a : bucket.aliases) {
    Agedge_t* edge = add_edge(cluster, resources[a.first], resources[a.second]);
    set(edge, "dir", "none");
    set(edge, "style", "dashed");
    set(edge, "color", "purple");
    set(edge, "fontcolor", "purple");
    set(edge, "xlabel", "aliases");
    set(edge, "class", "alias");
    set(edge, "constraint", "false");
  }
}

}  // namespace

graph_svg draw_graph_svg(const plan_picture& picture) {
  const message_capture capture;
  const context_ptr gvc(gvContext());
  if (!gvc) return {{}, failure("Graphviz could not start")};
  c_text name("plan");
  const graph_ptr g(agopen(name.get(), Agdirected, nullptr));
  if (!g) return {{}, failure("Graphviz could not make a graph")};
  declare_attributes(g.get());
  for (std::size_t b = 0; b < picture.buckets.size(); ++b) add_bucket(g.get(), picture, b);

  if (gvLayout(gvc.get(), g.get(), "dot") != 0) return {{}, failure("Graphviz could not lay the graph out")};
  const layout_guard layout(gvc.get(), g.get());
  char* data = nullptr;
  unsigned int length = 0;
  // The core plugin's SVG renderer by name: it writes the `class`
  // attributes (cairo's SVG, where installed, would not).
  const int rendered = gvRenderData(gvc.get(), g.get(), "svg:svg:core", &data, &length);
  const render_data_ptr owned(data);
  if (rendered != 0 || data == nullptr) return {{}, failure("Graphviz could not render SVG")};
  return {std::string(data, length), {}};
}

}  // namespace ferrum::tools
