#include "compiled_json.hpp"

namespace ferrum::tools {
namespace {

nlohmann::ordered_json domain_json(const capacity_layout& domain, std::uint64_t lane_offset) {
  nlohmann::ordered_json projections = nlohmann::ordered_json::array();
  for (const projection& p : domain.projections) {
    nlohmann::ordered_json entry;
    entry["resource"] = p.resource.str();
    entry["offset"] = p.offset;
    entry["capacity"] = p.capacity;
    projections.push_back(std::move(entry));
  }
  nlohmann::ordered_json out;
  out["pool"] = domain.pool.str();
  out["liveness"] = std::string(to_string(domain.liveness));
  out["lane_offset"] = lane_offset;
  out["physical_size_bytes"] = domain.physical_size_bytes;
  out["unaliased_size_bytes"] = domain.unaliased_size_bytes;
  out["projections"] = std::move(projections);
  return out;
}

nlohmann::ordered_json binding_json(const program_binding_layout& binding) {
  nlohmann::ordered_json slots = nlohmann::ordered_json::array();
  for (const binding_slot& s : binding.slots()) {
    nlohmann::ordered_json entry;
    entry["node_index"] = s.node_index;
    entry["node"] = s.node.str();
    entry["resource"] = s.resource.str();
    entry["offset"] = s.offset;
    entry["capacity"] = s.capacity;
    entry["alignment"] = s.alignment;
    slots.push_back(std::move(entry));
  }
  nlohmann::ordered_json out;
  out["physical_size_bytes"] = binding.physical_size_bytes();
  out["fingerprint"] = binding.fingerprint().str();
  out["slots"] = std::move(slots);
  return out;
}

nlohmann::ordered_json bucket_json(const compiled_bucket& bucket) {
  nlohmann::ordered_json domains = nlohmann::ordered_json::array();
  for (std::size_t d = 0; d < bucket.capacity_layouts.size(); ++d)
    domains.push_back(domain_json(bucket.capacity_layouts[d], bucket.pool_offsets[d]));
  nlohmann::ordered_json out;
  out["id"] = bucket.id.str();
  out["class"] = bucket.spec.cls.str();
  out["capacity"] = bucket.spec.dims;
  out["lane_bytes"] = bucket.lane_bytes();
  out["unaliased_lane_bytes"] = bucket.unaliased_lane_size_bytes;
  out["domains"] = std::move(domains);
  out["program_binding"] = bucket.binding ? binding_json(*bucket.binding) : nlohmann::ordered_json(nullptr);
  return out;
}

}  // namespace

nlohmann::ordered_json compiled_json(const compiled_program& program) {
  nlohmann::ordered_json buckets = nlohmann::ordered_json::array();
  for (const compiled_bucket& bucket : program.buckets) buckets.push_back(bucket_json(bucket));
  nlohmann::ordered_json out;
  out["format"] = compiled_format;
  out["plan_hash"] = program.hash.str();
  out["buckets"] = std::move(buckets);
  return out;
}

}  // namespace ferrum::tools
