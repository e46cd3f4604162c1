#include "sha256_writer.hpp"

#include <openssl/evp.h>

namespace ferrum::detail {

namespace {
thread_local const evp_md_st* scoped_md = nullptr;
}  // namespace

sha256_scope::sha256_scope() noexcept : fetched_(EVP_MD_fetch(nullptr, "SHA256", nullptr)), outer_(scoped_md) {
  if (fetched_ != nullptr) scoped_md = fetched_;
}

sha256_scope::~sha256_scope() {
  scoped_md = outer_;
  EVP_MD_free(fetched_);
}

const evp_md_st* sha256_md() noexcept { return scoped_md != nullptr ? scoped_md : EVP_sha256(); }

void sha256_writer::ctx_deleter::operator()(evp_md_ctx_st* ctx) const noexcept { EVP_MD_CTX_free(ctx); }

sha256_writer::sha256_writer() : ctx_(EVP_MD_CTX_new()) {
  ok_ = ctx_ != nullptr && EVP_DigestInit_ex(ctx_.get(), sha256_md(), nullptr) == 1;
}

sha256_writer::~sha256_writer() = default;

void sha256_writer::restart() {
  used_ = 0;
  ok_ = ctx_ != nullptr && EVP_DigestInit_ex(ctx_.get(), sha256_md(), nullptr) == 1;
}

void sha256_writer::flush() {
  if (used_ != 0 && ok_) ok_ = EVP_DigestUpdate(ctx_.get(), buffer_, used_) == 1;
  used_ = 0;
}

void sha256_writer::put_long(const void* data, std::size_t size) {
  flush();
  if (size > sizeof buffer_) {
    if (ok_) ok_ = EVP_DigestUpdate(ctx_.get(), data, size) == 1;
    return;
  }
  std::memcpy(buffer_, data, size);
  used_ = size;
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
