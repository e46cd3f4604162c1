// program_binding_checks — the pieces of compile_program_binding_layouts that
// load_compiled_program re-runs on a program file: the binding domain's
// member requirements and the layout fingerprint.
#pragma once

#include "ferrum/binding/program_binding.hpp"

#include <vector>

namespace ferrum::detail {

// Why a binding domain member breaks the domain's requirements (kind, usage,
// element, view, lifetime), or nullptr.
[[nodiscard]] const char* binding_domain_violation(const resource_descriptor& r) noexcept;

// The layout's fingerprint: SHA-256 of its canonical encoding
// (docs/canonical-encoding.md). Error: digest_failed.
[[nodiscard]] result<sha256_digest> binding_fingerprint(const bucket_id& bucket, const claim_identity& claim,
                                                        std::uint64_t physical_size,
                                                        const std::vector<binding_slot>& slots);

}  // namespace ferrum::detail
