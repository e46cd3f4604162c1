// write_plan_json: a plan as the `ferrum.plan.v1`/`v2` text parse_plan reads
// back (plan_json.hpp). One node, resource and bucket a line, in the plan's
// order; pools in id order; a field at its default left out where the
// format lets it be (a node's compute queue, `kept`, `cull`).
#include "ferrum/binding/plan_json.hpp"
#include "ferrum/json_text.hpp"

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

namespace ferrum {
namespace {

class plan_text {
 public:
  std::string out;

  void raw(std::string_view s) { out += s; }
  // A JSON string: ids need no escaping, a hand-set contract might.
  void str(std::string_view s) {
    out += '"';
    out += json_escaped(s);
    out += '"';
  }

  void num(std::uint64_t v) { out += std::to_string(v); }
  // `"key": ` before a value.
  void key(std::string_view k) {
    str(k);
    raw(": ");
  }
  void field(std::string_view k, std::string_view value) {
    key(k);
    str(value);
  }
  void field(std::string_view k, std::uint64_t value) {
    key(k);
    num(value);
  }
  // `[a, b, ...]` of ids.
  template <class Ids>
  void ids(const Ids& list) {
    raw("[");
    bool first = true;
    for (const auto& id : list) {
      if (!std::exchange(first, false)) raw(", ");
      str(id.view());
    }
    raw("]");
  }
};

// [first, count] of a range's mips or layers; a count of 0 (to the last)
// is written as the count to the image's `total`, which is what it means.
void write_span(plan_text& w, std::string_view name, std::uint32_t base, std::uint32_t count, std::uint32_t total) {
  w.raw(", ");
  w.key(name);
  w.raw("[");
  w.num(base);
  w.raw(", ");
  w.num(count != 0 ? count : (total > base ? total - base : 0));
  w.raw("]");
}

void write_one_access(plan_text& w, resource_access a, const subresource_range& r, const image_desc* image) {
  if (r.whole()) {
    w.str(to_string(a));
    return;
  }
  w.raw("{");
  w.field("access", to_string(a));
  if (r.base_mip != 0 || r.mips != 0) write_span(w, "mips", r.base_mip, r.mips, image ? image->mips : 0);
  if (r.base_layer != 0 || r.layers != 0) write_span(w, "layers", r.base_layer, r.layers, image ? image->layers : 0);
  w.raw("}");
}

const image_desc* listed_image(const plan& p, const resource_id& id) {
  const auto it =
      std::find_if(p.resources.begin(), p.resources.end(), [&](const resource_descriptor& r) { return r.id == id; });
  return it != p.resources.end() && it->image ? &*it->image : nullptr;
}

// `"resources": [...]` once per resource, and `"access"`: each resource's
// accesses, an array where it is listed more than once (which the parser
// lists again right after its first listing, in the array's order).
void write_node_uses(plan_text& w, const plan& p, const plan_node& n) {
  std::vector<resource_id> distinct;
  for (const resource_id& r : n.resources)
    if (std::find(distinct.begin(), distinct.end(), r) == distinct.end()) distinct.push_back(r);
  w.raw(", ");
  w.key("resources");
  w.ids(distinct);
  if (n.binding) {
    w.raw(", ");
    w.field("binding", n.binding->view());
  }
  if (p.format == plan_format::v1) return;
  if (!n.after.empty()) {
    w.raw(", ");
    w.key("after");
    w.ids(n.after);
  }
  if (n.access.empty() || n.access.size() != n.resources.size()) return;
  w.raw(",\n      ");
  w.key("access");
  w.raw("{");
  bool first = true;
  for (const resource_id& r : distinct) {
    if (!std::exchange(first, false)) w.raw(", ");
    w.key(r.view());
    const image_desc* image = listed_image(p, r);
    const auto listed = std::count(n.resources.begin(), n.resources.end(), r);
    if (listed > 1) w.raw("[");
    bool first_use = true;
    for (std::size_t k = 0; k < n.resources.size(); ++k) {
      if (n.resources[k] != r) continue;
      if (!std::exchange(first_use, false)) w.raw(", ");
      write_one_access(w, n.access_of(k), n.range_of(k), image);
    }
    if (listed > 1) w.raw("]");
  }
  w.raw("}");
}

void write_node(plan_text& w, const plan& p, const plan_node& n) {
  w.raw("{");
  w.field("id", n.id.view());
  if (p.format == plan_format::v2 && n.queue != queue_kind::compute) {
    w.raw(", ");
    w.field("queue", to_string(n.queue));
  }
  write_node_uses(w, p, n);
  w.raw("}");
}

void write_image(plan_text& w, const image_desc& image) {
  w.raw("{");
  w.field("format", to_string(image.format));
  w.raw(", ");
  w.key("extent");
  if (!image.bucket_extent) {
    w.raw("[");
    w.num(image.width);
    w.raw(", ");
    w.num(image.height);
    w.raw("]");
  } else {
    w.str(image.extent_divisor == 1 ? std::string("bucket") : "bucket/" + std::to_string(image.extent_divisor));
  }
  w.raw(", ");
  w.field("mips", image.mips);
  w.raw(", ");
  w.field("layers", image.layers);
  w.raw("}");
}

void write_buffer_fields(plan_text& w, const resource_descriptor& r) {
  if (r.node) {
    w.raw(", ");
    w.field("node", r.node->view());
  }
  w.raw(", ");
  w.key("demand");
  if (r.demand.dimension) {
    w.raw("{");
    w.field("base", r.demand.base);
    w.raw(", ");
    w.field("per_unit", r.demand.per_unit);
    w.raw(", ");
    w.field("dimension", *r.demand.dimension);
    w.raw("}");
  } else {
    w.raw("{");
    w.field("fixed", r.demand.base);
    w.raw("}");
  }
  w.raw(", ");
  w.field("alignment", r.alignment);
  w.raw(", ");
  w.field("lifetime", to_string(r.lifetime));
  w.raw(", ");
  w.field("usage", to_string(r.usage));
  w.raw(", ");
  w.field("element", to_string(r.element));
  w.raw(",\n      ");
  w.key("storage");
  w.raw("{");
  w.field("allocator", to_string(r.storage.allocator));
  w.raw(", ");
  w.field("view", to_string(r.storage.view));
  w.raw(", ");
  w.field("contract", r.storage.digest);
  w.raw("}");
}

void write_resource(plan_text& w, const plan& p, const resource_descriptor& r) {
  w.raw("{");
  w.field("id", r.id.view());
  w.raw(", ");
  w.field("pool", r.pool.view());
  w.raw(", ");
  w.field("kind", to_string(r.kind));
  if (p.format == plan_format::v2 && r.image) {
    w.raw(", ");
    w.field("lifetime", to_string(r.lifetime));
    w.raw(", ");
    w.key("image");
    write_image(w, *r.image);
  } else {
    write_buffer_fields(w, r);
  }
  if (p.format == plan_format::v1) {
    w.raw("}");
    return;
  }
  if (r.history_of) {
    w.raw(", ");
    w.field("history_of", r.history_of->view());
  }
  if (r.kept) w.raw(", \"kept\": true");
  w.raw("}");
}

void write_bucket(plan_text& w, const bucket_spec& b) {
  w.raw("{");
  w.field("class", b.cls.view());
  w.raw(", ");
  w.key("capacity");
  w.raw("[");
  for (std::size_t d = 0; d < b.dims.size(); ++d) {
    if (d != 0) w.raw(", ");
    w.num(b.dims[d]);
  }
  w.raw("], ");
  w.key("budgets");
  w.raw("[");
  for (std::size_t i = 0; i < b.budgets.size(); ++i) {
    w.raw(i == 0 ? "" : ",\n                  ");
    w.raw("{");
    w.field("pool", b.budgets[i].pool.view());
    w.raw(", ");
    w.field("min", b.budgets[i].min);
    w.raw(", ");
    w.field("max", b.budgets[i].max);
    w.raw("}");
  }
  w.raw("]}");
}

// `"pools": {...}` in pool id order (the parser reads them so); a v2 pool
// with a memory class leaves out a conservative liveness.
void write_pools(plan_text& w, const plan& p) {
  std::vector<const pool_option*> pools;
  for (const pool_option& o : p.pools) pools.push_back(&o);
  std::stable_sort(pools.begin(), pools.end(),
                   [](const pool_option* a, const pool_option* b) { return a->pool < b->pool; });
  w.key("pools");
  w.raw("{");
  for (std::size_t i = 0; i < pools.size(); ++i) {
    const pool_option& o = *pools[i];
    w.raw(i == 0 ? "\n    " : ",\n    ");
    w.key(o.pool.view());
    w.raw("{");
    const bool v2_memory = p.format == plan_format::v2 && o.memory;
    if (!v2_memory || o.liveness != liveness_mode::conservative) {
      w.field("liveness", to_string(o.liveness));
      if (v2_memory) w.raw(", ");
    }
    if (v2_memory) w.field("memory", to_string(*o.memory));
    w.raw("}");
  }
  w.raw(pools.empty() ? "}" : "\n  }");
}

// `"name": [\n    item,\n    item\n  ]`
template <class Items, class Write>
void write_list(plan_text& w, std::string_view name, const Items& items, Write write) {
  w.raw("  ");
  w.key(name);
  w.raw("[");
  bool first = true;
  for (const auto& item : items) {
    w.raw(std::exchange(first, false) ? "\n    " : ",\n    ");
    write(item);
  }
  w.raw(items.empty() ? "],\n" : "\n  ],\n");
}

}  // namespace

std::string write_plan_json(const plan& p) {
  plan_text w;
  w.raw("{\n  ");
  w.field("format", to_string(p.format));
  w.raw(",\n");
  write_list(w, "nodes", p.nodes, [&](const plan_node& n) { write_node(w, p, n); });
  write_list(w, "resources", p.resources, [&](const resource_descriptor& r) { write_resource(w, p, r); });
  write_list(w, "buckets", p.buckets, [&](const bucket_spec& b) { write_bucket(w, b); });
  w.raw("  ");
  write_pools(w, p);
  w.raw(",\n  ");
  w.field("lanes", p.lanes);
  w.raw(",\n  ");
  w.field("budget_bytes", p.budget_bytes);
  if (p.format == plan_format::v2 && !p.cull) w.raw(",\n  \"cull\": false");
  w.raw("\n}\n");
  return std::move(w.out);
}

}  // namespace ferrum
