// ferrum/binding/culling.hpp — which nodes of a compiled program run
// (docs/design.md, "Culling").
//
// A v2 plan's node is live when something outside the wave, or a live node
// after it, can see what it writes: it writes (any access but a read) a
// resource of an imported pool, of a pool the host reads or writes
// (readback, upload: ferrum/memory_class.hpp's host_touches), one of
// lifetime persistent or history, one marked `kept`, or one that a live node
// later in plan order reads; a node with a `present` access is live, and so
// is one that declares no write (its effects are not ferrum's to see) or no
// access at all (read-write throughout, as in a v1 plan). Its
// own binding resource, which the host writes, keeps no node live. Every
// other node is culled: compile keeps it (node indices stay the plan's) but
// gives it no uses in the lane recipe — no barrier, no image transition,
// no image its lane makes for it alone — and the scheduler never calls its
// encoder nor submits its list. A v1 plan, and a v2 plan with `"cull":
// false`, cull nothing.
//
//   const ferrum::compiled_program& program = ...;
//   for (std::size_t n = 0; n < program.node_count; ++n)
//     if (program.culling[n].culled) report(program.culling[n].text());
#pragma once

#include "ferrum/binding/ids.hpp"

#include <string>
#include <vector>

namespace ferrum {

// Why node n is culled, or that it is not.
struct cull_reason {
  bool culled = false;
  // Culled: the resources it writes (plan ids, in its listing order, each
  // once), none of which anything live reads. Its binding resource is not
  // among them.
  std::vector<resource_id> writes;

  // "live", or "writes resource/x, which nothing live reads" ("writes
  // resource/x and resource/y, which nothing live reads").
  [[nodiscard]] std::string text() const;
  friend bool operator==(const cull_reason&, const cull_reason&) = default;
};

}  // namespace ferrum
