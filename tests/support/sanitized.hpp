// Whether the tests run under a sanitizer (the asan and tsan presets): a
// property test that tries every byte of an input tries every k-th there
// (`sanitized_stride`); the release tests try every one, and the fuzzers
// run the same parsers over random inputs under the sanitizers in CI.
#pragma once

#include <cstddef>

namespace test_support {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool sanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
inline constexpr bool sanitized = true;
#else
inline constexpr bool sanitized = false;
#endif
#else
inline constexpr bool sanitized = false;
#endif

// FERRUM_TEST_TSAN: 1 under ThreadSanitizer. A test that lets two null
// device queues touch the same bytes unordered on purpose (to see that a
// dropped wait shows as wrong data) is a data race by design; it is left
// out there, and runs in release and asan.
#if defined(__SANITIZE_THREAD__)
#define FERRUM_TEST_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define FERRUM_TEST_TSAN 1
#endif
#endif
#ifndef FERRUM_TEST_TSAN
#define FERRUM_TEST_TSAN 0
#endif

// The step between the bytes a property test tries.
inline constexpr std::size_t sanitized_stride = sanitized ? 11 : 1;

}  // namespace test_support
