#include "plan_index.hpp"

#include "huge_pages.hpp"
#include "second_thread.hpp"

#include <algorithm>
#include <cstring>

namespace ferrum::detail {

std::vector<std::size_t> order_by_key(const std::vector<std::string_view>& keys) {
  std::size_t common = keys.empty() ? 0 : keys.front().size();
  for (std::string_view k : keys) {
    const std::size_t n = std::min(common, k.size());
    common = static_cast<std::size_t>(
        std::mismatch(k.begin(), k.begin() + static_cast<std::ptrdiff_t>(n), keys.front().begin()).first - k.begin());
  }
  struct entry {
    std::uint64_t prefix;
    std::size_t index;
  };
  std::vector<entry> entries(keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) {
    // Big-endian, zero-padded: comparing the integers compares the bytes.
    unsigned char bytes[8] = {};
    const std::string_view rest = keys[i].substr(common);
    std::memcpy(bytes, rest.data(), std::min(rest.size(), sizeof bytes));
    std::uint64_t prefix = 0;
    for (unsigned char b : bytes) prefix = (prefix << 8) | b;
    entries[i] = {prefix, i};
  }
  std::sort(entries.begin(), entries.end(), [&](const entry& a, const entry& b) {
    if (a.prefix != b.prefix) return a.prefix < b.prefix;
    if (int c = keys[a.index].compare(keys[b.index]); c != 0) return c < 0;
    return a.index < b.index;
  });
  std::vector<std::size_t> order(keys.size());
  for (std::size_t i = 0; i < entries.size(); ++i) order[i] = entries[i].index;
  return order;
}

plan_index::plan_index(const plan& p) : plan_(&p) {
  // The node table and the resource table with its sort are independent:
  // on a big plan, build them on two threads (the plan is only read). The
  // node table costs about 30 ns per node.
  auto nodes = beside(worth_a_thread(30 * std::uint64_t{p.nodes.size()}),
                      [&p, this] { return id_table(p.nodes.size(), node_ids{&p}, duplicate_node_); });
  resources_ = id_table(p.resources.size(), resource_ids{&p}, duplicate_resource_);
  std::vector<std::string_view> keys;
  reserve_huge(keys, p.resources.size());
  for (const resource_descriptor& r : p.resources) keys.push_back(r.id.view());
  resources_by_id_ = order_by_key(keys);
  nodes_ = nodes.get();

  // A node's binding is normally one of its uses, and the resource it binds
  // names it as owner: check those guesses by comparing ids instead of
  // looking them up, which costs cache misses per lookup on big plans.
  owner_.assign(p.resources.size(), none);
  binding_.assign(p.nodes.size(), none);
  use_begin_.reserve(p.nodes.size() + 1);
  for (std::size_t n = 0; n < p.nodes.size(); ++n) {
    const plan_node& node = p.nodes[n];
    use_begin_.push_back(uses_.size());
    for (const resource_id& id : node.resources) {
      const std::size_t r = resource(id.view()).value_or(none);
      uses_.push_back(r);
      if (node.binding && r != none && binding_[n] == none && *node.binding == id) binding_[n] = r;
    }
    if (node.binding && binding_[n] == none) binding_[n] = resource(node.binding->view()).value_or(none);
    if (const std::size_t r = binding_[n]; r != none && p.resources[r].node == node.id && owner_[r] == none)
      owner_[r] = n;
  }
  use_begin_.push_back(uses_.size());
  for (std::size_t r = 0; r < p.resources.size(); ++r)
    if (owner_[r] == none && p.resources[r].node) owner_[r] = node(p.resources[r].node->view()).value_or(none);
}

}  // namespace ferrum::detail
