// sha256_writer — streams a canonical binary encoding into OpenSSL's SHA-256.
//
// The encoding (docs/canonical-encoding.md): unsigned integers as 8 bytes
// little-endian, enums and flags as 1 byte, strings as their length (u64)
// followed by their bytes. Length prefixes make the encoding injective, so two
// different materials never hash the same bytes.
#pragma once

#include "ferrum/binding/plan.hpp"

#include <bit>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string_view>

struct evp_md_ctx_st;
struct evp_md_st;

namespace ferrum::detail {

// While it lives, the digests made on its thread (sha256_writer, the program
// file's) use SHA-256 fetched once, at the scope's start (EVP_MD_fetch),
// instead of EVP_sha256(), a legacy handle that OpenSSL 3 looks up again (a
// locked fetch by name and properties) at every digest's init: most of a
// small digest's cost, and a compile makes one per layout and per domain
// ("Performance" in crypto(7)). Fetched per scope, not cached for the
// process, so that the properties in force (EVP_set_default_properties)
// hold for each compile; a failed fetch leaves the legacy handle, whose
// digest then fails as before (digest_failed). Scopes nest.
class sha256_scope {
 public:
  sha256_scope() noexcept;
  sha256_scope(const sha256_scope&) = delete;
  sha256_scope& operator=(const sha256_scope&) = delete;
  ~sha256_scope();

 private:
  evp_md_st* fetched_;
  const evp_md_st* outer_;
};

// The SHA-256 of this thread's innermost sha256_scope, else EVP_sha256().
[[nodiscard]] const evp_md_st* sha256_md() noexcept;

class sha256_writer {
 public:
  sha256_writer();
  ~sha256_writer();
  sha256_writer(const sha256_writer&) = delete;
  sha256_writer& operator=(const sha256_writer&) = delete;

  // The writers run once per resource and per slot: inline, each is a store
  // into the buffer, and OpenSSL sees whole 4 KiB blocks.
  void u8(std::uint8_t v) {
    if (used_ == sizeof buffer_) flush();
    buffer_[used_++] = v;
  }
  void u64(std::uint64_t v) {
    if (sizeof buffer_ - used_ < 8) flush();
    // Little-endian: on such a host the value's own bytes, one store (g++
    // 12 at -O2 does not merge the byte loop into one).
    unsigned char* out = buffer_ + used_;
    if constexpr (std::endian::native == std::endian::little) {
      std::memcpy(out, &v, sizeof v);
    } else {
      for (int i = 0; i < 8; ++i) out[i] = static_cast<unsigned char>(v >> (8 * i));
    }
    used_ += 8;
  }
  void str(std::string_view s) {
    u64(s.size());
    put(s.data(), s.size());
  }
  template <class Enum>
  void enumeration(Enum v) {
    u8(static_cast<std::uint8_t>(v));
  }

  // Bytes as they are, without a length: an encoding made elsewhere.
  void bytes(const void* data, std::size_t size) { put(data, size); }

  // The digest of everything written; errc::digest_failed if OpenSSL failed
  // at any step.
  [[nodiscard]] result<sha256_digest> finish();

  // Starts another digest in the same context and buffer: a writer kept and
  // restarted allocates nothing more.
  void restart();

 private:
  void flush();
  void put(const void* data, std::size_t size) {
    if (size > sizeof buffer_ - used_) {
      put_long(data, size);
      return;
    }
    std::memcpy(buffer_ + used_, data, size);
    used_ += size;
  }
  void put_long(const void* data, std::size_t size);

  struct ctx_deleter {
    void operator()(evp_md_ctx_st* ctx) const noexcept;
  };
  std::unique_ptr<evp_md_ctx_st, ctx_deleter> ctx_;
  bool ok_ = true;
  std::size_t used_ = 0;
  unsigned char buffer_[4096];
};

}  // namespace ferrum::detail
