#include "sha256_writer.hpp"

#include <openssl/evp.h>

#include <cstring>

namespace ferrum::detail {

void sha256_writer::ctx_deleter::operator()(evp_md_ctx_st* ctx) const noexcept { EVP_MD_CTX_free(ctx); }

sha256_writer::sha256_writer() : ctx_(EVP_MD_CTX_new()) {
  ok_ = ctx_ != nullptr && EVP_DigestInit_ex(ctx_.get(), EVP_sha256(), nullptr) == 1;
}

sha256_writer::~sha256_writer() = default;

void sha256_writer::flush() {
  if (used_ != 0 && ok_) ok_ = EVP_DigestUpdate(ctx_.get(), buffer_, used_) == 1;
  used_ = 0;
}

void sha256_writer::put(const void* data, std::size_t size) {
  if (size > sizeof buffer_ - used_) flush();
  if (size > sizeof buffer_) {
    if (ok_) ok_ = EVP_DigestUpdate(ctx_.get(), data, size) == 1;
    return;
  }
  std::memcpy(buffer_ + used_, data, size);
  used_ += size;
}

void sha256_writer::u8(std::uint8_t v) { put(&v, 1); }

void sha256_writer::u64(std::uint64_t v) {
  unsigned char bytes[8];
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<unsigned char>(v >> (8 * i));
  put(bytes, sizeof bytes);
}

void sha256_writer::str(std::string_view s) {
  u64(s.size());
  put(s.data(), s.size());
}

result<sha256_digest> sha256_writer::finish() {
  flush();
  sha256_digest digest;
  unsigned int size = 0;
  if (ok_) ok_ = EVP_DigestFinal_ex(ctx_.get(), digest.bytes.data(), &size) == 1 && size == digest.bytes.size();
  if (!ok_) return make_error(errc::digest_failed, "OpenSSL EVP SHA-256");
  return digest;
}

}  // namespace ferrum::detail
