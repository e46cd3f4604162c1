#!/usr/bin/env python3
"""Fails when any test of a build sets PASS_REGULAR_EXPRESSION.

CTest ignores the exit code of a test with PASS_REGULAR_EXPRESSION: a program
that prints its matched line and then fails a later check passes. ferrum's
tests that must print something use ferrum_output_test
(cmake/ferrum_output_tests.cmake), which checks both.

    check_pass_expressions.py CTEST BUILD_DIR
"""
import json
import subprocess
import sys


def main() -> int:
    ctest, build = sys.argv[1], sys.argv[2]
    listing = subprocess.run([ctest, "--show-only=json-v1"], cwd=build, check=True, capture_output=True, text=True)
    tests = json.loads(listing.stdout)["tests"]
    hiding = [t["name"] for t in tests
              if any(p["name"] == "PASS_REGULAR_EXPRESSION" for p in t.get("properties", []))]
    for name in hiding:
        print(f"test '{name}' sets PASS_REGULAR_EXPRESSION, which makes CTest ignore its exit code: "
              "use ferrum_output_test (cmake/ferrum_output_tests.cmake)")
    print(f"{len(tests)} tests listed, {len(hiding)} with PASS_REGULAR_EXPRESSION")
    return 1 if hiding or not tests else 0


if __name__ == "__main__":
    sys.exit(main())
