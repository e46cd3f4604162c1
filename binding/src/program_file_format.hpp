// program_file_format — the ferrum.program.v1 byte layout (docs/interfaces.md,
// "ferrum.program.v1"): the header's fields, the decoded tables, and
// bounds-checked little-endian reads and writes.
#pragma once

#include "ferrum/binding/compiled_program.hpp"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

namespace ferrum::detail {

inline constexpr char program_magic[8] = {'F', 'E', 'R', 'R', 'U', 'M', 'C', 'P'};
inline constexpr std::size_t program_header_bytes = 112;
inline constexpr std::size_t program_digest_bytes = 32;
// Per bucket before its per-domain records: plan bucket index (u32), binding
// flag (u32), lane bytes, unaliased lane bytes (u64 each), fingerprint (32).
inline constexpr std::size_t program_bucket_bytes = 56;
inline constexpr std::size_t program_domain_bytes = 24;      // lane offset, physical, unaliased
inline constexpr std::size_t program_projection_bytes = 16;  // offset, capacity

// A program file's content, decoded but not yet checked against a plan.
struct program_tables {
  plan_hash hash;
  std::uint64_t node_count = 0;
  std::uint64_t resource_count = 0;
  std::uint64_t use_count = 0;
  std::uint32_t bucket_count = 0;
  std::uint32_t domain_count = 0;
  std::uint32_t lanes = 0;
  std::uint64_t budget_bytes = 0;
  std::uint64_t admitted_bytes = 0;
  // Node and resource indices in id order; each resource's domain; every
  // node's resources (plan order, nodes in plan order) as resource indices.
  std::vector<std::uint32_t> node_order;
  std::vector<std::uint32_t> resource_order;
  std::vector<std::uint32_t> resource_domain;
  std::vector<std::uint32_t> use_resource;

  struct domain_record {
    std::uint64_t lane_offset = 0;
    std::uint64_t physical_size_bytes = 0;
    std::uint64_t unaliased_size_bytes = 0;
  };
  struct projection_record {
    std::uint64_t offset = 0;
    std::uint64_t capacity = 0;
  };
  struct bucket_record {
    std::uint32_t plan_bucket = 0;
    std::uint32_t has_binding = 0;
    std::uint64_t lane_bytes = 0;
    std::uint64_t unaliased_lane_bytes = 0;
    sha256_digest fingerprint;
    std::vector<domain_record> domains;
    // Every resource's projection: domains in program order, each domain's
    // members in id order.
    std::vector<projection_record> projections;
  };
  std::vector<bucket_record> buckets;  // id order
};

// Little-endian appends to a byte vector.
class byte_writer {
 public:
  explicit byte_writer(std::vector<std::byte>& out) : out_(out) {}
  void bytes(const void* data, std::size_t size) {
    const auto* p = static_cast<const std::byte*>(data);
    out_.insert(out_.end(), p, p + size);
  }
  void u32(std::uint32_t v) { put(v, 4); }
  void u64(std::uint64_t v) { put(v, 8); }

 private:
  void put(std::uint64_t v, int size) {
    for (int i = 0; i < size; ++i) out_.push_back(static_cast<std::byte>(v >> (8 * i)));
  }
  std::vector<std::byte>& out_;
};

// Little-endian reads from a span, each checked against its end; the caller
// checks sizes before reading tables (so a failed read is a bug, reported as
// program_malformed with the byte offset, never a crash).
class byte_reader {
 public:
  explicit byte_reader(std::span<const std::byte> bytes) : bytes_(bytes) {}

  [[nodiscard]] std::size_t offset() const noexcept { return at_; }
  [[nodiscard]] std::size_t left() const noexcept { return bytes_.size() - at_; }
  [[nodiscard]] bool ok() const noexcept { return ok_; }

  std::uint32_t u32() { return static_cast<std::uint32_t>(get(4)); }
  std::uint64_t u64() { return get(8); }
  void bytes(void* out, std::size_t size) {
    if (!take(size)) return std::memset(out, 0, size), void();
    std::memcpy(out, bytes_.data() + at_ - size, size);
  }
  // `count` u32 values into `out`.
  void u32s(std::vector<std::uint32_t>& out, std::size_t count) {
    if (!take(count * 4)) return;
    out.resize(count);
    const std::byte* p = bytes_.data() + at_ - count * 4;
    for (std::size_t i = 0; i < count; ++i, p += 4)
      out[i] = static_cast<std::uint32_t>(
          std::to_integer<std::uint32_t>(p[0]) | std::to_integer<std::uint32_t>(p[1]) << 8 |
          std::to_integer<std::uint32_t>(p[2]) << 16 | std::to_integer<std::uint32_t>(p[3]) << 24);
  }

 private:
  bool take(std::size_t size) {
    if (!ok_ || size > left()) {
      ok_ = false;
      return false;
    }
    at_ += size;
    return true;
  }
  std::uint64_t get(int size) {
    const auto bytes = static_cast<std::size_t>(size);
    if (!take(bytes)) return 0;
    // Little-endian: the last byte is the most significant.
    std::uint64_t v = 0;
    for (std::size_t i = bytes; i-- > 0;) v = (v << 8) | std::to_integer<std::uint64_t>(bytes_[at_ - bytes + i]);
    return v;
  }

  std::span<const std::byte> bytes_;
  std::size_t at_ = 0;
  bool ok_ = true;
};

// The program_stale error of a file compiled from plan `file`, given a plan
// that hashes to `given`.
[[nodiscard]] error stale_program(const plan_hash& file, const plan_hash& given);

// Checks `tables` against plan `p` and builds the program compile(p) would
// have made (program_file_check.cpp). Errors: program_stale,
// program_inconsistent, and compile's check codes.
[[nodiscard]] result<compiled_program> rebuild_program(const program_tables& tables, const plan& p);

}  // namespace ferrum::detail
