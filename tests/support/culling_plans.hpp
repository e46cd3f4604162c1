// culling_plans.hpp — the small v2 plans the culling tests compile
// (docs/design.md, "Culling"), as JSON documents to edit.
//
//   nlohmann::json doc = culling_plans::cull_chain();   // node/a -> node/b -> node/c
//   doc["resources"][2]["kept"] = true;
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace culling_plans {

// A 256-byte storage buffer of `pool`.
inline nlohmann::json cull_buffer(std::string_view id, std::string_view pool,
                                  std::string_view lifetime = "invocation") {
  return nlohmann::json{
      {"id", id},
      {"pool", pool},
      {"kind", "workspace"},
      {"demand", {{"fixed", 256}}},
      {"alignment", 16},
      {"lifetime", lifetime},
      {"usage", "storage"},
      {"element", "u8"},
      {"storage", {{"allocator", "linear-arena"}, {"view", "contiguous"}, {"contract", std::string(64, 'c')}}}};
}

// A v2 node using `uses` (resource, access), in order.
inline nlohmann::json cull_node(std::string_view id, std::vector<std::pair<std::string, std::string>> uses,
                                std::vector<std::string> after = {}) {
  nlohmann::json resources = nlohmann::json::array();
  nlohmann::json access = nlohmann::json::object();
  for (const auto& [r, a] : uses) {
    resources.push_back(r);
    access[r] = a;
  }
  nlohmann::json n{{"id", id}, {"resources", resources}, {"access", access}};
  if (!after.empty()) n["after"] = after;
  return n;
}

// A chain: node/a writes resource/x, node/b reads it and writes resource/y,
// node/c reads y and writes resource/z, which nothing reads.
inline nlohmann::json cull_chain() {
  return {{"format", "ferrum.plan.v2"},
          {"nodes",
           {cull_node("node/a", {{"resource/x", "write"}}),
            cull_node("node/b", {{"resource/x", "read"}, {"resource/y", "write"}}),
            cull_node("node/c", {{"resource/y", "read"}, {"resource/z", "write"}})}},
          {"resources",
           {cull_buffer("resource/x", "pool/work"), cull_buffer("resource/y", "pool/work"),
            cull_buffer("resource/z", "pool/work")}},
          {"buckets",
           {{{"class", "frame"},
             {"capacity", {1, 1, 1}},
             {"budgets", {{{"pool", "pool/work"}, {"min", 0}, {"max", 65536}}}}}}},
          {"lanes", 1},
          {"budget_bytes", 1048576}};
}

}  // namespace culling_plans
