// The tests' one helper namespace: ferrum::test (the plan builder's helpers,
// the device and timeline helpers), also reachable as ::test. One namespace,
// so that a unity build of several test files, some of which use namespace
// ferrum, finds `test::` unambiguous.
#pragma once

namespace ferrum::test {}
namespace test = ferrum::test;
