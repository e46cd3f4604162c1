#include "ferrum/binding/compiled_program_file.hpp"

#include "ferrum/binding/demand.hpp"
#include "lane_recipes.hpp"
#include "plan_index.hpp"
#include "program_file_format.hpp"
#include "sha256_writer.hpp"

#include <openssl/evp.h>

#include <algorithm>
#include <limits>
#include <string>

namespace ferrum {
namespace {

using detail::program_tables;

std::string at_byte(std::size_t offset) { return "at byte " + std::to_string(offset); }

result<sha256_digest> sha256(std::span<const std::byte> bytes) {
  sha256_digest digest;
  unsigned int size = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), digest.bytes.data(), &size, detail::sha256_md(), nullptr) != 1 ||
      size != digest.bytes.size())
    return make_error(errc::digest_failed, "OpenSSL EVP SHA-256");
  return digest;
}

// The bytes the tables after the header take, or nullopt past u64.
std::optional<std::uint64_t> table_bytes(const program_tables& t) {
  using detail::program_bucket_bytes;
  using detail::program_domain_bytes;
  using detail::program_projection_bytes;
  auto mul = checked_mul;
  auto add = checked_add;
  // 4 N + 8 R + 4 U + B (56 + 24 D + 16 R)
  const auto nodes = mul(t.node_count, 4);
  const auto resources = mul(t.resource_count, 8);
  const auto uses = mul(t.use_count, 4);
  const auto domains = mul(t.domain_count, program_domain_bytes);
  const auto projections = mul(t.resource_count, program_projection_bytes);
  if (!nodes || !resources || !uses || !domains || !projections) return std::nullopt;
  const auto per_bucket_tail = add(*domains, *projections);
  const auto per_bucket = per_bucket_tail ? add(*per_bucket_tail, program_bucket_bytes) : std::nullopt;
  const auto buckets = per_bucket ? mul(*per_bucket, t.bucket_count) : std::nullopt;
  const auto a = add(*nodes, *resources);
  const auto b = a ? add(*a, *uses) : std::nullopt;
  return b && buckets ? add(*b, *buckets) : std::nullopt;
}

// The envelope: magic, version, declared size, SHA-256. Returns the bytes
// the digest covers.
result<std::span<const std::byte>> check_envelope(std::span<const std::byte> bytes) {
  const std::size_t magic_seen = std::min(bytes.size(), sizeof detail::program_magic);
  if (magic_seen != 0 && std::memcmp(bytes.data(), detail::program_magic, magic_seen) != 0)
    return make_error(errc::program_bad_magic, "the first 8 bytes are not \"FERRUMCP\"");
  if (bytes.size() < 12)
    return make_error(errc::program_truncated, std::to_string(bytes.size()) +
                                                   " bytes: the file ends inside the header (" +
                                                   std::to_string(detail::program_header_bytes) + " bytes)");
  detail::byte_reader header(bytes);
  std::byte magic[8];
  header.bytes(magic, sizeof magic);
  const std::uint32_t version = header.u32();
  if (version != compiled_program_file_version)
    return make_error(errc::program_version_unsupported, "version " + std::to_string(version) +
                                                             " at byte 8; this ferrum reads version " +
                                                             std::to_string(compiled_program_file_version));
  if (bytes.size() < detail::program_header_bytes)
    return make_error(errc::program_truncated, std::to_string(bytes.size()) +
                                                   " bytes: the file ends inside the header (" +
                                                   std::to_string(detail::program_header_bytes) + " bytes)");
  const std::uint32_t flags = header.u32();
  const std::uint64_t declared = header.u64();
  if (declared > bytes.size())
    return make_error(errc::program_truncated, std::to_string(bytes.size()) + " bytes; the header (byte 16) declares " +
                                                   std::to_string(declared));
  if (declared < detail::program_header_bytes + detail::program_digest_bytes)
    return make_error(errc::program_malformed, "the declared size " + std::to_string(declared) +
                                                   " (byte 16) is smaller than a header and a digest");
  if (declared < bytes.size())
    return make_error(errc::program_malformed, std::to_string(bytes.size() - declared) +
                                                   " bytes after the declared end (byte 16 declares " +
                                                   std::to_string(declared) + ")");
  const std::span<const std::byte> covered = bytes.first(bytes.size() - detail::program_digest_bytes);
  auto digest = sha256(covered);
  if (!digest) return digest.error();
  if (std::memcmp(digest->bytes.data(), bytes.data() + covered.size(), detail::program_digest_bytes) != 0)
    return make_error(errc::program_checksum_mismatch, "the SHA-256 of bytes 0.." + std::to_string(covered.size()) +
                                                           " is " + digest->str() + ", the file records another " +
                                                           at_byte(covered.size()));
  if (flags != 0)
    return make_error(errc::program_malformed, "flags " + std::to_string(flags) + " at byte 12; must be 0");
  return covered;
}

// Decodes the header's counts and the tables; checks every size before it
// allocates, against what the file holds.
result<program_tables> decode(std::span<const std::byte> covered) {
  detail::byte_reader in(covered);
  std::byte skip[24];
  in.bytes(skip, sizeof skip);  // magic, version, flags, size: checked
  program_tables t;
  in.bytes(t.hash.bytes.data(), t.hash.bytes.size());
  t.node_count = in.u64();
  t.resource_count = in.u64();
  t.use_count = in.u64();
  t.bucket_count = in.u32();
  t.domain_count = in.u32();
  t.lanes = in.u32();
  const std::uint32_t reserved = in.u32();
  t.budget_bytes = in.u64();
  t.admitted_bytes = in.u64();
  if (!in.ok() || in.offset() != detail::program_header_bytes)
    return make_error(errc::program_malformed, "the header " + at_byte(in.offset()));
  if (reserved != 0) return make_error(errc::program_malformed, "reserved field " + at_byte(92) + " is not 0");
  constexpr std::uint64_t max_count = std::numeric_limits<std::uint32_t>::max();
  if (t.node_count > max_count || t.resource_count > max_count || t.use_count > max_count)
    return make_error(errc::program_malformed, "a count at bytes 56..80 exceeds 2^32 - 1");
  const auto needed = table_bytes(t);
  if (!needed || *needed != in.left())
    return make_error(errc::program_malformed,
                      "the header's counts (" + std::to_string(t.node_count) + " nodes, " +
                          std::to_string(t.resource_count) + " resources, " + std::to_string(t.use_count) + " uses, " +
                          std::to_string(t.bucket_count) + " buckets, " + std::to_string(t.domain_count) +
                          " domains) need " + (needed ? std::to_string(*needed) : std::string("over 2^64")) +
                          " bytes of tables; the file has " + std::to_string(in.left()));
  // Sizes match the file, so every read below stays inside it.
  in.u32s(t.node_order, t.node_count);
  in.u32s(t.resource_order, t.resource_count);
  in.u32s(t.resource_domain, t.resource_count);
  in.u32s(t.use_resource, t.use_count);
  t.buckets.resize(t.bucket_count);
  for (program_tables::bucket_record& b : t.buckets) {
    b.plan_bucket = in.u32();
    b.has_binding = in.u32();
    b.lane_bytes = in.u64();
    b.unaliased_lane_bytes = in.u64();
    in.bytes(b.fingerprint.bytes.data(), b.fingerprint.bytes.size());
    b.domains.resize(t.domain_count);
    for (auto& d : b.domains) {
      d.lane_offset = in.u64();
      d.physical_size_bytes = in.u64();
      d.unaliased_size_bytes = in.u64();
    }
    b.projections.resize(t.resource_count);
    for (auto& p : b.projections) {
      p.offset = in.u64();
      p.capacity = in.u64();
    }
  }
  if (!in.ok() || in.left() != 0) return make_error(errc::program_malformed, "the tables " + at_byte(in.offset()));
  return t;
}

}  // namespace

result<std::vector<std::byte>> save_compiled_program(const compiled_program& program, const plan& p) {
  const detail::plan_index index(p);
  const auto hash = detail::hash_plan(p, index);
  if (!hash) return hash.error();
  if (*hash != program.hash || p.nodes.size() != program.node_count)
    return make_error(errc::program_plan_mismatch,
                      "program compiled from plan " + program.hash.str() + ", given plan " + hash->str());
  constexpr std::size_t max_count = std::numeric_limits<std::uint32_t>::max();
  std::size_t uses = 0;
  for (const plan_node& n : p.nodes) uses += n.resources.size();
  if (p.nodes.size() > max_count || p.resources.size() > max_count || uses > max_count ||
      program.buckets.size() > max_count || program.domains.size() > max_count)
    return make_error(errc::size_overflow, "a program file holds at most 2^32 - 1 nodes, resources and uses");

  std::vector<std::string_view> node_ids;
  node_ids.reserve(p.nodes.size());
  for (const plan_node& n : p.nodes) node_ids.push_back(n.id.view());
  const std::vector<std::size_t> node_order = detail::order_by_key(node_ids);

  std::vector<std::uint32_t> resource_domain(p.resources.size(), 0);
  for (std::size_t d = 0; d < program.domains.size(); ++d)
    for (std::size_t r : program.domains[d].members) resource_domain[r] = static_cast<std::uint32_t>(d);

  std::vector<std::byte> out;
  out.reserve(detail::program_header_bytes + 4 * p.nodes.size() + 8 * p.resources.size() + 4 * uses +
              program.buckets.size() *
                  (detail::program_bucket_bytes + 24 * program.domains.size() + 16 * p.resources.size()) +
              detail::program_digest_bytes);
  detail::byte_writer w(out);
  w.bytes(detail::program_magic, sizeof detail::program_magic);
  w.u32(compiled_program_file_version);
  w.u32(0);  // flags
  w.u64(0);  // the file's size, filled in below
  w.bytes(program.hash.bytes.data(), program.hash.bytes.size());
  w.u64(p.nodes.size());
  w.u64(p.resources.size());
  w.u64(uses);
  w.u32(static_cast<std::uint32_t>(program.buckets.size()));
  w.u32(static_cast<std::uint32_t>(program.domains.size()));
  w.u32(program.lanes);
  w.u32(0);  // reserved
  w.u64(program.budget_bytes);
  w.u64(program.admitted_bytes);
  for (std::size_t n : node_order) w.u32(static_cast<std::uint32_t>(n));
  for (std::size_t r : index.resources_by_id()) w.u32(static_cast<std::uint32_t>(r));
  for (std::uint32_t d : resource_domain) w.u32(d);
  for (std::size_t n = 0; n < p.nodes.size(); ++n)
    for (std::size_t r : index.uses(n)) w.u32(static_cast<std::uint32_t>(r));

  for (const compiled_bucket& bucket : program.buckets) {
    std::size_t plan_bucket = 0;
    while (plan_bucket < p.buckets.size()) {
      const auto id = p.buckets[plan_bucket].id();
      if (id && *id == bucket.id) break;
      ++plan_bucket;
    }
    w.u32(static_cast<std::uint32_t>(plan_bucket));
    w.u32(bucket.binding ? 1 : 0);
    w.u64(bucket.lane_size_bytes);
    w.u64(bucket.unaliased_lane_size_bytes);
    const sha256_digest fingerprint = bucket.binding ? bucket.binding->fingerprint() : sha256_digest{};
    w.bytes(fingerprint.bytes.data(), fingerprint.bytes.size());
    for (std::size_t d = 0; d < program.domains.size(); ++d) {
      w.u64(bucket.pool_offsets[d]);
      w.u64(bucket.capacity_layouts[d].physical_size_bytes);
      w.u64(bucket.capacity_layouts[d].unaliased_size_bytes);
    }
    for (const capacity_layout& layout : bucket.capacity_layouts)
      for (const projection& proj : layout.projections) {
        w.u64(proj.offset);
        w.u64(proj.capacity);
      }
  }
  const std::uint64_t size = out.size() + detail::program_digest_bytes;
  for (int i = 0; i < 8; ++i) out[16 + static_cast<std::size_t>(i)] = static_cast<std::byte>(size >> (8 * i));
  auto digest = sha256(out);
  if (!digest) return digest.error();
  w.bytes(digest->bytes.data(), digest->bytes.size());
  return out;
}

result<compiled_program> load_compiled_program(std::span<const std::byte> bytes, const plan& p) {
  const detail::sha256_scope sha256;  // every digest of this load on this thread
  auto covered = check_envelope(bytes);
  if (!covered) return covered.error();
  auto tables = decode(*covered);
  if (!tables) return tables.error();
  auto program = detail::rebuild_program(*tables, p);
  // A file of another plan breaks the checks long before its hash is
  // compared: say so, rather than naming the first check it broke.
  if (!program && program.error() != errc::program_stale) {
    const auto actual = hash_plan(p);
    if (actual && *actual != tables->hash) return detail::stale_program(tables->hash, *actual);
  }
  if (program)
    if (auto recipes = detail::make_lane_recipes(*program, p, detail::plan_index(p)); !recipes) return recipes.error();
  return program;
}

}  // namespace ferrum
