// sha256_writer — streams a canonical binary encoding into OpenSSL's SHA-256.
//
// The encoding (docs/canonical-encoding.md): unsigned integers as 8 bytes
// little-endian, enums and flags as 1 byte, strings as their length (u64)
// followed by their bytes. Length prefixes make the encoding injective, so two
// different materials never hash the same bytes.
#pragma once

#include "ferrum/binding/plan.hpp"

#include <cstdint>
#include <memory>
#include <string_view>

struct evp_md_ctx_st;

namespace ferrum::detail {

class sha256_writer {
 public:
  sha256_writer();
  ~sha256_writer();
  sha256_writer(const sha256_writer&) = delete;
  sha256_writer& operator=(const sha256_writer&) = delete;

  void u8(std::uint8_t v);
  void u64(std::uint64_t v);
  void str(std::string_view s);
  template <class Enum>
  void enumeration(Enum v) {
    u8(static_cast<std::uint8_t>(v));
  }

  // The digest of everything written; errc::digest_failed if OpenSSL failed
  // at any step.
  [[nodiscard]] result<sha256_digest> finish();

 private:
  void flush();
  void put(const void* data, std::size_t size);

  struct ctx_deleter {
    void operator()(evp_md_ctx_st* ctx) const noexcept;
  };
  std::unique_ptr<evp_md_ctx_st, ctx_deleter> ctx_;
  bool ok_ = true;
  std::size_t used_ = 0;
  unsigned char buffer_[4096];
};

}  // namespace ferrum::detail
