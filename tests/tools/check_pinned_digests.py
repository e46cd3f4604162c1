#!/usr/bin/env python3
"""Recomputes every digest pinned in tests/support/pinned_digests.hpp.

Each pin names an example plan file and what of it is pinned (its plan hash,
or one bucket's program binding fingerprint); tools/canonical_digest.py
recomputes that from the plan file alone, following docs/canonical-encoding.md.
A mismatch, a pin that names no plan or bucket, or a header with no pins
fails, naming the pin.

    tests/tools/check_pinned_digests.py <source dir>
"""
import json
import os
import re
import sys

PIN = re.compile(r'pinned_digest (\w+)\{"([^"]+)", "([^"]+)", "(sha256/[0-9a-f]{64})"\};')


def main():
    source = sys.argv[1]
    sys.path.insert(0, os.path.join(source, "tools"))
    import canonical_digest  # noqa: E402 (found through the source dir)

    header = open(os.path.join(source, "tests/support/pinned_digests.hpp")).read()
    pins = PIN.findall(header)
    if not pins:
        print("no pinned digests found in tests/support/pinned_digests.hpp")
        return 1
    failures = 0
    for name, plan_file, what, pinned in pins:
        plan = json.load(open(os.path.join(source, plan_file)))
        if what == "plan_hash":
            computed = "sha256/" + canonical_digest.plan_hash(plan).hex()
        elif what.startswith("fingerprint "):
            bucket = what[len("fingerprint "):]
            digests = canonical_digest.fingerprints(plan)
            if bucket not in digests:
                print("%s: %s has no bucket %r (buckets: %s)" % (name, plan_file, bucket, ", ".join(sorted(digests))))
                failures += 1
                continue
            computed = "sha256/" + digests[bucket].hex()
        else:
            print("%s: unknown pin kind %r" % (name, what))
            failures += 1
            continue
        verdict = "ok" if computed == pinned else "MISMATCH"
        print("%s %s: %s %s pinned %s, recomputed %s" % (verdict, name, plan_file, what, pinned, computed))
        failures += computed != pinned
    print("%d pinned digests, %d wrong" % (len(pins), failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
