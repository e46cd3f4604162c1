#include "history_rules.hpp"

#include "ferrum/binding/image_access.hpp"

#include "json_pointer.hpp"
#include "plan_rules.hpp"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

namespace ferrum::detail {
namespace {

std::string quote(const resource_descriptor& r) { return resource_id::quote(r.id.view()); }
std::string pool_path(const pool_id& pool) { return "/pools/" + json_pointer_token(pool.view()); }

// A history resource's part in its pair.
enum class role : std::uint8_t { none, current, previous };

std::string who(const resource_descriptor& r, role part) {
  return std::string(part == role::previous ? "previous " : "history ") + (r.image ? "image " : "buffer ") + quote(r);
}

// The first field in which previous `b` differs from its current `a`: its
// name, and each one's value; nullopt where they agree.
struct difference {
  std::string field;
  std::string current;
  std::string previous;
};
std::optional<difference> differs(const resource_descriptor& a, const resource_descriptor& b) {
  const auto text = [](auto v) { return std::string(to_string(v)); };
  if (a.image.has_value() != b.image.has_value())
    return difference{"kind of resource", a.image ? "an image" : "a buffer", b.image ? "an image" : "a buffer"};
  if (a.kind != b.kind) return difference{"kind", text(a.kind), text(b.kind)};
  if (a.image) {
    const image_desc& x = *a.image;
    const image_desc& y = *b.image;
    if (x.format != y.format) return difference{"image/format", text(x.format), text(y.format)};
    if (extent_text(x) != extent_text(y)) return difference{"image/extent", extent_text(x), extent_text(y)};
    if (x.mips != y.mips) return difference{"image/mips", std::to_string(x.mips), std::to_string(y.mips)};
    if (x.layers != y.layers) return difference{"image/layers", std::to_string(x.layers), std::to_string(y.layers)};
    return std::nullopt;
  }
  const auto demand = [](const resource_demand& d) {
    return d.dimension ? std::to_string(d.base) + " + " + std::to_string(d.per_unit) + " per unit of dimension " +
                             std::to_string(*d.dimension)
                       : std::to_string(d.base) + " fixed";
  };
  if (a.demand != b.demand) return difference{"demand", demand(a.demand), demand(b.demand)};
  if (a.alignment != b.alignment)
    return difference{"alignment", std::to_string(a.alignment), std::to_string(b.alignment)};
  if (a.usage != b.usage) return difference{"usage", text(a.usage), text(b.usage)};
  if (a.element != b.element) return difference{"element", text(a.element), text(b.element)};
  if (a.storage != b.storage)
    return difference{"storage", text(a.storage.allocator) + ", " + text(a.storage.view) + ", " + a.storage.digest,
                      text(b.storage.allocator) + ", " + text(b.storage.view) + ", " + b.storage.digest};
  return std::nullopt;
}

// Each resource's own fields: lifetime history and history_of in a v2 plan
// only, history_of on a history resource only, no binding resource, no
// block-compressed image; `kept` and the plan's `cull` (Culling) in a v2
// plan only.
result<void> check_declarations(const plan& p) {
  if (!p.cull && p.format != plan_format::v2) return v2_field_in_v1("cull", "/cull");
  for (std::size_t i = 0; i < p.resources.size(); ++i) {
    const resource_descriptor& r = p.resources[i];
    const bool history = r.lifetime == allocation_lifetime::history;
    if (r.kept && p.format != plan_format::v2) return v2_field_in_v1("kept", resource_path(i) + "/kept");
    if (history && p.format != plan_format::v2)
      return make_error(errc::unknown_value,
                        "resource " + quote(r) + ": lifetime 'history' is defined in ferrum.plan.v2 only",
                        resource_path(i) + "/lifetime");
    if (r.history_of && p.format != plan_format::v2)
      return v2_field_in_v1("history_of", resource_path(i) + "/history_of");
    if (r.history_of && !history)
      return make_error(errc::invalid_history,
                        "resource " + quote(r) + " names a current (history_of) but its lifetime is " +
                            quote_text(to_string(r.lifetime)) + ", not 'history'",
                        resource_path(i) + "/history_of");
    if (!history) continue;
    if (r.kind == allocation_kind::binding)
      return make_error(errc::invalid_history,
                        "resource " + quote(r) +
                            " is a binding resource; a history resource is a workspace resource (the scheduler "
                            "keeps its two copies, outside the lanes)",
                        resource_path(i) + "/kind");
    if (r.image && is_block_compressed(r.image->format))
      return make_error(errc::invalid_image,
                        "history image " + quote(r) + " is of block-compressed format " +
                            quote_text(to_string(r.image->format)) +
                            "; history is cleared on the first wave and after a resize, which such a format cannot be",
                        resource_path(i) + "/image/format");
  }
  return {};
}

// The pairs: each previous names a current of the same description, each
// current has one previous. `roles` gets each resource's part.
result<void> check_pairs(const plan& p, const std::vector<std::size_t>& history, std::vector<role>& roles) {
  const auto find = [&](std::string_view id) -> std::optional<std::size_t> {
    const auto at = std::lower_bound(history.begin(), history.end(), id, [&](std::size_t r, std::string_view key) {
      return p.resources[r].id.view() < key;
    });
    if (at == history.end() || p.resources[*at].id.view() != id) return std::nullopt;
    return *at;
  };
  std::vector<std::size_t> previous_of(p.resources.size(), p.resources.size());
  for (std::size_t i : history) {
    const resource_descriptor& r = p.resources[i];
    if (!r.history_of) continue;
    roles[i] = role::previous;
    const std::string path = resource_path(i) + "/history_of";
    const std::string named = resource_id::quote(r.history_of->view());
    const std::optional<std::size_t> current = find(r.history_of->view());
    if (!current) {
      const bool exists = std::any_of(p.resources.begin(), p.resources.end(),
                                      [&](const resource_descriptor& x) { return x.id == *r.history_of; });
      if (!exists)
        return make_error(errc::dangling_reference,
                          "resource " + quote(r) + " is the history of resource " + named + ", which the plan lacks",
                          path);
      return make_error(
          errc::invalid_history,
          "resource " + quote(r) + " is the history of resource " + named + ", whose lifetime is not 'history'", path);
    }
    const resource_descriptor& c = p.resources[*current];
    if (c.history_of)
      return make_error(errc::invalid_history,
                        "resource " + quote(r) + " is the history of resource " + named +
                            ", which is itself a previous (the history of " + resource_id::quote(c.history_of->view()) +
                            "): a pair is one current and one previous",
                        path);
    if (previous_of[*current] != p.resources.size())
      return make_error(errc::invalid_history,
                        "resources " + quote(p.resources[previous_of[*current]]) + " and " + quote(r) +
                            " are both the history of " + named + "; a current has one previous",
                        path);
    previous_of[*current] = i;
    if (const auto d = differs(c, r))
      return make_error(errc::invalid_history,
                        "previous " + quote(r) + " differs from its current " + named + " in its " + d->field + " (" +
                            d->previous + ", the current's " + d->current +
                            "): a pair's two resources are described alike",
                        resource_path(i));
  }
  for (std::size_t i : history) {
    if (roles[i] == role::previous) continue;
    roles[i] = role::current;
    if (previous_of[i] == p.resources.size())
      return make_error(errc::invalid_history,
                        "history resource " + quote(p.resources[i]) +
                            " has no previous (no resource names it in 'history_of'), so no node reads what it "
                            "holds: make it 'invocation', or add its previous",
                        resource_path(i) + "/lifetime");
  }
  return {};
}

// A pool of history resources holds nothing else, is conservative, of
// `device` memory (the default).
result<void> check_pools(const plan& p, const std::vector<std::size_t>& history) {
  std::vector<std::pair<std::string_view, std::size_t>> pools;  // (pool, a history resource of it)
  for (std::size_t i : history) pools.emplace_back(p.resources[i].pool.view(), i);
  std::sort(pools.begin(), pools.end());
  const auto of = [&](const pool_id& pool) -> std::optional<std::size_t> {
    const auto at = std::lower_bound(pools.begin(), pools.end(), std::pair(pool.view(), std::size_t{0}));
    if (at == pools.end() || at->first != pool.view()) return std::nullopt;
    return at->second;
  };
  for (const pool_option& o : p.pools) {
    const auto member = of(o.pool);
    if (!member) continue;
    const std::string pool = pool_id::quote(o.pool.view());
    if (o.liveness == liveness_mode::interval)
      return make_error(errc::invalid_liveness,
                        "pool " + pool + " holds history resource " + quote(p.resources[*member]) +
                            ", which never shares memory; it cannot be interval",
                        pool_path(o.pool) + "/liveness");
    if (o.memory && *o.memory != memory_class::device)
      return make_error(errc::invalid_memory_class,
                        "pool " + pool + " holds history resource " + quote(p.resources[*member]) +
                            ", which the scheduler keeps in 'device' memory, not " + quote_text(to_string(*o.memory)),
                        pool_path(o.pool) + "/memory");
  }
  for (std::size_t i = 0; i < p.resources.size(); ++i) {
    const resource_descriptor& r = p.resources[i];
    if (r.lifetime == allocation_lifetime::history) continue;
    if (const auto member = of(r.pool))
      return make_error(errc::incompatible_pool_member,
                        "pool " + pool_id::quote(r.pool.view()) + " holds history resource " +
                            quote(p.resources[*member]) + " and resource " + quote(r) + ", whose lifetime is " +
                            quote_text(to_string(r.lifetime)) + "; a pool of history resources holds nothing else",
                        resource_path(i) + "/pool");
  }
  return {};
}

// The uses: no node writes a previous or reaches part of a history image; a
// history buffer's current is first written whole.
result<void> check_uses(const plan& p, std::span<const std::size_t> all_uses, const std::vector<role>& roles) {
  std::vector<bool> used(p.resources.size(), false);
  for (std::size_t n = 0, first = 0; n < p.nodes.size(); first += p.nodes[n].resources.size(), ++n) {
    const plan_node& node = p.nodes[n];
    const auto uses = all_uses.subspan(first, node.resources.size());
    for (std::size_t k = 0; k < uses.size(); ++k) {
      const std::size_t i = uses[k];
      if (roles[i] == role::none) continue;
      const resource_descriptor& r = p.resources[i];
      const resource_access a = node.access_of(k);
      const std::string access = quote_text(to_string(a));
      const std::string path = element_path("nodes", n) + "/access/" + json_pointer_token(r.id.view());
      const std::string at = "node " + node_id::quote(node.id.view()) + ": ";
      if (roles[i] == role::previous && (access_writes(a) || a == resource_access::present))
        return make_error(errc::invalid_access,
                          at + who(r, roles[i]) + " is read only (what the wave before left in its current " +
                              resource_id::quote(r.history_of->view()) + "), not " + access,
                          path);
      if (r.image && !node.range_of(k).whole())
        return make_error(errc::invalid_image_access,
                          at + who(r, roles[i]) +
                              " is reached whole: each wave points it at one of the two images the scheduler keeps, "
                              "and ferrum makes views of ranges of the lane's own images only",
                          path);
      if (!r.image && roles[i] == role::current && !used[i] && a != resource_access::write)
        return make_error(errc::invalid_access,
                          at + who(r, roles[i]) + " is first used by " + access +
                              "; a history buffer's first use in a wave is 'write' (it holds the wave before's "
                              "contents, which its previous reads)",
                          path);
      used[i] = true;
    }
  }
  return {};
}

}  // namespace

result<void> check_history(const plan& p, std::span<const std::size_t> uses) {
  if (auto ok = check_declarations(p); !ok) return ok.error();
  std::vector<std::size_t> history;
  for (std::size_t i = 0; i < p.resources.size(); ++i)
    if (p.resources[i].lifetime == allocation_lifetime::history) history.push_back(i);
  if (history.empty()) return {};
  std::sort(history.begin(), history.end(),
            [&](std::size_t a, std::size_t b) { return p.resources[a].id < p.resources[b].id; });
  std::vector<role> roles(p.resources.size(), role::none);
  if (auto ok = check_pairs(p, history, roles); !ok) return ok.error();
  if (auto ok = check_pools(p, history); !ok) return ok.error();
  return check_uses(p, uses, roles);
}

}  // namespace ferrum::detail
