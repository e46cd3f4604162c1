// pinned_digests.hpp — the digests the tests pin, each of an example plan.
// They are part of the file formats' contract (docs/canonical-encoding.md):
// the C++ tests check that ferrum computes them, and the ctest "digests:
// tools/canonical_digest.py recomputes every pinned digest from its plan"
// (tests/tools/check_pinned_digests.py) recomputes each from its plan file
// with the document's independent implementation, reading this file: keep
// one `pinned_digest name{"<plan file>", "<plan_hash | fingerprint <bucket>>",
// "sha256/<hex>"};` per line.
#pragma once

#include <string_view>

namespace pinned {

struct pinned_digest {
  std::string_view plan_file;  // relative to the source tree
  std::string_view what;
  std::string_view digest;
};

// clang-format off
inline constexpr pinned_digest two_nodes_hash{"examples/plans/two_nodes.json", "plan_hash", "sha256/a89e54b9262f0137558a2c281fd0ce24fc14ada1e8c2842df084c9a1c8b454d0"};
inline constexpr pinned_digest two_nodes_fingerprint{"examples/plans/two_nodes.json", "fingerprint test.program-binding@1x1x1", "sha256/19c89ed6913c4c5786519be7b107db424f942b86218e3d3e8c6b10895bd29b53"};
inline constexpr pinned_digest two_queues_hash{"examples/plans/two_queues.json", "plan_hash", "sha256/f3e74c06f0f80dda199adc1b6bd4a0a7d20ba2d79ee63345de71bdc2c75a1075"};
inline constexpr pinned_digest two_queues_fingerprint_1{"examples/plans/two_queues.json", "fingerprint frame@1x1x1", "sha256/2f1961842b241b6a449226c46f14622a43f13307d14080f8f9a095d68a94b630"};
inline constexpr pinned_digest two_queues_fingerprint_4{"examples/plans/two_queues.json", "fingerprint frame@4x1x1", "sha256/601b3c509be899b3feaa9011adc806ba76be7685c76bae091814dcd68e5dc059"};
inline constexpr pinned_digest two_queues_access_hash{"examples/plans/two_queues_access.json", "plan_hash", "sha256/8d04222cccfba03e213dd3b148d43adb0c108d6f44daae35469bb1f7b0bb9851"};
inline constexpr pinned_digest async_compute_hash{"examples/plans/async_compute.json", "plan_hash", "sha256/970b374472b7a8d3ab43d9046637b1d783ba9d61dc718a361b27161a117cdef7"};
inline constexpr pinned_digest readback_hash{"examples/plans/readback.json", "plan_hash", "sha256/909acb798cff4086ccb43d54e2f92c9fc60fd3bab0903bb1afaeccd536969101"};
inline constexpr pinned_digest images_hash{"examples/plans/images.json", "plan_hash", "sha256/147327264ba68d5b1c26e89ac19c94b88c693136cfaa92900725c13dae8bddfe"};
inline constexpr pinned_digest imported_hash{"examples/plans/imported.json", "plan_hash", "sha256/d63851a21e823ee8b39784c9860ca1da4d4c8988abbc3b083c21d38d938daf4f"};
inline constexpr pinned_digest mip_chain_hash{"examples/plans/mip_chain.json", "plan_hash", "sha256/0c06e17e2eac3e57c433c87f63366d520b9b6180e9c075e40e543b770debe474"};
inline constexpr pinned_digest frame_chains_hash{"examples/plans/frame_chains.json", "plan_hash", "sha256/012a29f301a00095edb72f92d321209233284fe02ba0ac3cdd6c8d22f466920d"};
inline constexpr pinned_digest taa_history_hash{"examples/plans/taa_history.json", "plan_hash", "sha256/b9c5418535e584f659bd4cd69770c847031cfab46b1ccae62b5264ca0e1eda9d"};
inline constexpr pinned_digest deferred_frame_hash{"examples/plans/deferred_frame.json", "plan_hash", "sha256/4fdb4d30924e541a93603811c6bfa3b974db61763690a3904678b327d40c9368"};
// clang-format on

}  // namespace pinned
