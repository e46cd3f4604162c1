// ferrum/error.hpp — ferrum's error codes and the error type of the cold path.
//
// Every distinct check in ferrum has one `ferrum::errc` value; its message says
// what was wrong. Cold-path functions return `ferrum::result<T>`, whose error
// carries the code plus the context that names the offending element: a JSON
// pointer into the plan (`/resources/3/alignment`) where there is one, and a
// detail naming the ids involved.
//
//   ferrum::result<ferrum::compiled_program> program = ferrum::compile(plan);
//   if (!program) std::cerr << program.error().what() << '\n';
//   // "misaligned_slot: ... (at /resources/1)"
#pragma once

#include <boost/assert/source_location.hpp>
#include <boost/system/error_code.hpp>
#include <boost/system/result.hpp>

#include <string>
#include <string_view>
#include <system_error>

namespace ferrum {

// The X-macro keeps the enum, its stable snake_case names and its messages in
// one table; the names are the `<code>` printed by the `ferrum` command.
#define FERRUM_ERRC_TABLE(X)                                                                                         \
  /* plan file (ferrum.plan.v1) */                                                                                   \
  X(json_syntax, "the plan is not well-formed JSON")                                                                 \
  X(json_too_deep, "the plan nests JSON deeper than allowed")                                                        \
  X(duplicate_key, "a JSON object repeats a key")                                                                    \
  X(unsupported_format, "the document is not a ferrum.plan.v1 or ferrum.plan.v2 plan")                               \
  X(unknown_field, "the plan has a field that the format does not define")                                           \
  X(missing_field, "the plan lacks a required field")                                                                \
  X(wrong_type, "a plan value has the wrong JSON type")                                                              \
  X(number_out_of_range, "a number is negative, fractional or outside its allowed range")                            \
  X(unknown_value, "a string is not one of the values the format allows")                                            \
  /* plan structure */                                                                                               \
  X(invalid_id, "an id is empty, too long or uses a character outside a-z 0-9 / - . _ @")                            \
  X(duplicate_id, "an id appears more than once where it must be unique")                                            \
  X(dangling_reference, "a reference names an element that the plan does not define")                                \
  X(empty_plan, "the plan has no nodes or no buckets")                                                               \
  X(unused_resource, "a resource is used by no node")                                                                \
  X(invalid_contract, "a storage contract digest is not 64 lowercase hex digits")                                    \
  X(missing_budget, "a bucket has no workspace budget for a pool that resources use")                                \
  X(invalid_budget, "a workspace budget's minimum exceeds its maximum")                                              \
  /* demand */                                                                                                       \
  X(invalid_alignment, "an alignment is not a power of two")                                                         \
  X(size_overflow, "a size computation overflows 64 bits")                                                           \
  X(empty_demand, "a resource demands zero bytes in a bucket")                                                       \
  /* pools and admission */                                                                                          \
  X(incompatible_pool_member, "resources sharing a pool differ in usage, element, storage or contract")              \
  X(invalid_liveness, "interval liveness is only for invocation workspace resources")                                \
  X(workspace_budget_exceeded, "an arena's physical size lies outside its bucket's budget")                          \
  X(admission_exceeded, "lanes times the buckets' physical sizes exceeds the memory budget")                         \
  /* program binding layout (the original module's compile_program_binding_layouts) */                               \
  X(inconsistent_domain_layouts, "the program binding compiler received inconsistent domain layouts")                \
  X(multiple_binding_domains, "one compiled program cannot span multiple binding domains")                           \
  X(invalid_binding_domain, "program bindings require one contiguous conservative u8 binding domain")                \
  X(missing_domain_layout, "the program binding domain has no submission-wave layout")                               \
  X(incomplete_domain_layout, "the program binding domain layout does not cover every binding descriptor")           \
  X(missing_capacity_layout, "a program binding bucket has no physical capacity layout")                             \
  X(incomplete_capacity_layout, "a program binding capacity layout is incomplete")                                   \
  X(missing_binding_node, "a program binding descriptor references a missing plan node")                             \
  X(binding_not_owned, "a program binding node does not own its binding descriptor")                                 \
  X(empty_slot, "a program binding slot is empty")                                                                   \
  X(misaligned_slot, "a program binding slot's offset or capacity is not a multiple of its alignment")               \
  X(non_contiguous_slots, "program binding slots leave a gap or overlap")                                            \
  X(inexact_cover, "program binding slots do not cover their physical arena exactly")                                \
  X(duplicate_slot_owner, "program binding slots do not have unique plan-node owners")                               \
  X(digest_failed, "computing a SHA-256 digest failed")                                                              \
  /* execution binding (the original module's bind) */                                                               \
  X(binding_plan_mismatch, "a program binding layout differs from its plan")                                         \
  X(binding_lane_mismatch, "a program binding layout differs from its lane binding target")                          \
  X(missing_backing_slice, "a program binding slot has no claimed logical backing projection")                       \
  X(backing_slice_mismatch, "a program binding slot differs from its claimed physical projection")                   \
  /* gpu: devices, arenas, command lists, timelines */                                                               \
  X(invalid_device_option, "a device option is outside its allowed range")                                           \
  X(device_lost, "the device was lost; no more work can run on it")                                                  \
  X(device_shut_down, "the device shut down before the awaited work completed")                                      \
  X(invalid_arena_size, "an arena size is zero or above the device's limit")                                         \
  X(foreign_object, "an arena, kernel or command list belongs to another device")                                    \
  X(range_out_of_bounds, "a command's byte range lies outside its arena")                                            \
  X(misaligned_range, "a command's byte range does not start and end on a 4-byte boundary")                          \
  X(copy_size_mismatch, "a copy's source and destination ranges differ in size")                                     \
  X(overlapping_copy, "a copy's source and destination ranges overlap")                                              \
  X(push_constants_too_large, "a dispatch passes more push-constant words than its kernel takes")                    \
  X(invalid_kernel, "a kernel has no code this device runs, or bad code or sizes")                                   \
  X(unsupported_command, "the device cannot run this command")                                                       \
  X(native_unavailable, "the device has no native command buffer to record into (the null device)")                  \
  X(command_list_state, "a command list is used in the wrong state (recording before begin, submitting before end)") \
  X(command_list_in_flight, "a command list is reset or submitted while the GPU may still run it")                   \
  X(timeline_not_monotonic, "a submission's signal value is not above the last one submitted")                       \
  X(vulkan_unavailable, "no Vulkan driver, or no device with a compute queue, Vulkan 1.2 and timeline semaphores")   \
  X(vulkan_device_not_found, "no Vulkan device matches the requested name")                                          \
  X(vulkan_feature_missing, "the Vulkan device lacks a feature ferrum needs")                                        \
  X(out_of_device_memory, "the device ran out of memory")                                                            \
  X(out_of_host_memory, "the host ran out of memory")                                                                \
  X(vulkan_error, "a Vulkan call failed")                                                                            \
  /* scheduler: lanes and waves */                                                                                   \
  X(no_binding_layout, "a bucket has no program binding layout: the plan has no binding nodes")                      \
  X(no_bucket_fits, "no bucket of the request's class covers its extent")                                            \
  X(encoder_failed, "an encoder threw; the wave submitted nothing")                                                  \
  X(fence_timeout, "a wave's fence was not reached in time; its lane is quarantined")                                \
  X(fence_not_reached, "a lane is released before the fence of its last submission was reached")                     \
  X(all_lanes_quarantined, "every lane of the bucket is quarantined")                                                \
  X(scheduler_shut_down, "the scheduler is shutting down and accepts no more waves")                                 \
  /* added later; kept at the end so that earlier codes keep their values */                                         \
  X(unordered_binding_slots, "a program binding layout's slots are not in strictly ascending node order")            \
  X(slot_outside_arena, "a program binding slot reaches past its layout's physical arena")                           \
  X(program_plan_mismatch, "a compiled program was compiled from another plan")                                      \
  X(invalid_scheduler_option, "a scheduler option is outside its allowed range")                                     \
  X(invalid_wave_request, "a wave request's extent has a zero dimension")                                            \
  X(lane_not_held, "a lane is given back or submitted through a handle whose hand-out is over")                      \
  X(range_not_granted, "a command reaches a guarded arena (a scheduler lane's) outside its list's granted ranges")   \
  /* compiled program files (ferrum.program.v1) */                                                                   \
  X(program_bad_magic, "the file is not a ferrum compiled program: its magic bytes are wrong")                       \
  X(program_version_unsupported, "the compiled program file's format version is not one this ferrum reads")          \
  X(program_truncated, "the compiled program file ends before its declared size")                                    \
  X(program_checksum_mismatch, "the compiled program file's SHA-256 does not match its contents")                    \
  X(program_malformed, "the compiled program file's structure is invalid (a count, size or field out of range)")     \
  X(program_stale, "the compiled program file was compiled from another plan (its plan hash differs)")               \
  X(program_inconsistent, "the compiled program file's content disagrees with its plan or with itself")              \
  /* GPU timestamps */                                                                                               \
  X(timestamps_unsupported, "the device cannot write GPU timestamps on its queue")                                   \
  X(timestamp_unavailable, "a timestamp slot is read that no reached submission wrote")                              \
  /* plan dependencies and queues (ferrum.plan.v2) */                                                                \
  X(unknown_queue, "a node names a queue that is not 'compute', 'transfer' or 'async-compute'")                      \
  X(dangling_dependency, "a node depends on a node that the plan does not define")                                   \
  X(duplicate_dependency, "a node lists the same dependency twice")                                                  \
  X(dependency_cycle, "nodes depend on each other in a cycle")                                                       \
  X(dependency_not_earlier, "a node depends on a node listed after it; ferrum.plan.v2 lists dependencies first")     \
  /* queues */                                                                                                       \
  X(wait_not_submitted, "a submission waits for a queue's timeline value that was never submitted")                  \
  X(queue_mismatch, "a command list is submitted to a queue other than the one of the kind it was made for")         \
  /* timelines */                                                                                                    \
  X(wait_already_pending, "a timeline wait is started while it is still pending on a timeline")                      \
  /* external semaphores and presentation */                                                                         \
  X(invalid_semaphore_op,                                                                                            \
    "a semaphore wait or signal is malformed (no semaphore, a binary one with a value, a timeline one at 0)")        \
  X(too_many_semaphores, "a wave is given more semaphores to wait on or signal than it holds")                       \
  X(presentation_unsupported, "the device's compute queue family cannot present to the surface")                     \
  /* declared accesses (ferrum.plan.v2) */                                                                           \
  X(invalid_access, "a node's declared accesses do not match its resources")                                         \
  /* memory classes */                                                                                               \
  X(invalid_memory_class, "a pool's declared memory class does not fit how the host touches it")                     \
  X(no_host_bytes, "host bytes are asked of memory the host cannot touch (a device-class resource or arena)")        \
  X(not_staged, "a staging copy is recorded for an arena that has no staging buffer")                                \
  /* the engine's per-lane state */                                                                                  \
  X(lane_state_failed, "the engine's lane state factory threw while a lane was made")                                \
  /* imported buffers */                                                                                             \
  X(import_missing, "a wave names no buffer for an imported resource of its plan")                                   \
  X(import_too_small, "a buffer a wave imports is smaller than its resource in the wave's bucket")                   \
  /* images in the plan */                                                                                           \
  X(invalid_image, "an image resource's declaration is out of range or sets what an image does not have")            \
  X(invalid_image_access,                                                                                            \
    "an image access does not fit the image's format, the node's queue or its place among the image's uses")         \
  X(image_read_before_write, "a node reads an invocation image that no earlier node of the wave wrote")              \
  /* kernels over images */                                                                                          \
  X(kernel_operand_mismatch, "a dispatch's operand is not of the kind its kernel takes (a buffer or an image)")      \
  /* raster nodes */                                                                                                 \
  X(raster_unsupported, "a plan draws (attachment accesses) on a device whose compute queue family has no graphics") \
  /* order across queues */                                                                                          \
  X(unordered_hazard,                                                                                                \
    "two nodes on different queues use a resource, one writing it, with no path of 'after' between them")            \
  /* reading a wave's output */                                                                                      \
  X(unknown_resource, "a resource is asked for by an id that no node of the plan lists")                             \
  /* image formats a device lacks */                                                                                 \
  X(format_unsupported, "an image's format lacks, on this device, the feature an access or usage of it needs")       \
  /* buffers' usage */                                                                                               \
  X(buffer_usage_missing, "a buffer lacks the usage a command or its plan's accesses need")                          \
  /* history resources (ferrum.plan.v2) */                                                                           \
  X(invalid_history, "a history resource does not form a pair with its current or previous, or does not fit one")    \
  /* an engine's resources across queue families */                                                                  \
  X(import_not_shared, "an engine's buffer or image is not shared with the queue family of a node that uses it")

enum class errc : int {
// 0 is reserved for success, as error_code requires.
#define FERRUM_ERRC_ENUM(name, message) name,
  ok = 0,
  FERRUM_ERRC_TABLE(FERRUM_ERRC_ENUM)
#undef FERRUM_ERRC_ENUM
};

// The category of ferrum's error codes; name "ferrum".
[[nodiscard]] const boost::system::error_category& ferrum_category() noexcept;

[[nodiscard]] boost::system::error_code make_error_code(errc code) noexcept;

// The stable snake_case name of a code (`"misaligned_slot"`); "unknown" for a
// value outside the enum.
[[nodiscard]] std::string_view errc_name(errc code) noexcept;

// The name of any error code: ferrum's own by errc_name, a cancellation
// (asio::error::operation_aborted) as "operation_aborted", others as
// `<category>:<value>`.
[[nodiscard]] std::string error_code_name(const boost::system::error_code& code);

// The error of a cold-path operation: a code plus what it concerned.
struct error {
  boost::system::error_code code;
  // JSON pointer into the plan document of the offending element ("" where the
  // error concerns no single element).
  std::string path;
  // The ids or values involved, e.g. "resource 'resource/a' and 'resource/b'".
  std::string detail;

  // "<code name>: <message>[: <detail>][ (at <path>)]", one line.
  [[nodiscard]] std::string what() const;
};

// Error details are printed on terminals and written into JSON reports, so
// they are kept to printable ASCII: `text` cut after `limit` bytes (a cut may
// split a UTF-8 sequence), bytes outside printable ASCII and those in
// `escaped` written \xNN.
[[nodiscard]] std::string printable(std::string_view text, std::size_t limit, std::string_view escaped = "\\");

// `text` quoted for an error detail: 'text', printable, cut after 64 bytes.
[[nodiscard]] std::string quote_text(std::string_view text);

// Builds an error; `detail` and `path` are optional context.
[[nodiscard]] error make_error(errc code, std::string detail = {}, std::string path = {});

// The error's code, so that `result.error() == errc::x` style checks read well.
[[nodiscard]] inline bool operator==(const error& e, errc code) noexcept { return e.code == make_error_code(code); }

// Thrown by result<T>::value() on an error (boost::system::result's hook).
class error_exception : public std::runtime_error {
 public:
  explicit error_exception(ferrum::error e);
  [[nodiscard]] const ferrum::error& error() const noexcept { return error_; }

 private:
  ferrum::error error_;
};

[[noreturn]] void throw_exception_from_error(const error& e, const boost::source_location& loc);

template <class T>
using result = boost::system::result<T, error>;

}  // namespace ferrum

template <>
struct boost::system::is_error_code_enum<ferrum::errc> : std::true_type {};
