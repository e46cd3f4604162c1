// That the validation layers' synchronization validation is on and sees
// hazards between command buffers and between submissions — between a
// wave's nodes, each recorded in its own list — and not only within one
// command buffer: a deliberate hazard of each kind is reported, and the same
// commands ordered are not. Every Vulkan test relies on it
// (vulkan_test_support.hpp); the tests that drop each derived barrier of a
// plan (native, raster, image) rely on it to fail.
#include "vulkan_test_support.hpp"

#include "ferrum/gpu/builtin_kernels.hpp"
#include "ferrum/gpu/vulkan_device.hpp"

#include <array>
#include <span>
#include <string>

namespace {

using ferrum::gpu::command_list;
using ferrum::gpu::list_opening;
using vulkan_test::require;

constexpr std::uint32_t indirect_dispatch_spirv[] = {
#include "indirect_dispatch.spv.inc"
};

// An engine's compute pipeline of indirect_dispatch.comp (no bindings).
struct indirect_pipeline {
  VkDevice device = VK_NULL_HANDLE;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  VkPipeline pipeline = VK_NULL_HANDLE;

  explicit indirect_pipeline(VkDevice d) : device(d) {
    VkPipelineLayoutCreateInfo layout_info{};
    layout_info.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO;
    REQUIRE(vkCreatePipelineLayout(device, &layout_info, nullptr, &layout) == VK_SUCCESS);
    VkShaderModuleCreateInfo module_info{};
    module_info.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO;
    module_info.codeSize = sizeof indirect_dispatch_spirv;
    module_info.pCode = indirect_dispatch_spirv;
    VkShaderModule module = VK_NULL_HANDLE;
    REQUIRE(vkCreateShaderModule(device, &module_info, nullptr, &module) == VK_SUCCESS);
    VkComputePipelineCreateInfo info{};
    info.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO;
    info.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
    info.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    info.stage.module = module;
    info.stage.pName = "main";
    info.layout = layout;
    const VkResult made = vkCreateComputePipelines(device, VK_NULL_HANDLE, 1, &info, nullptr, &pipeline);
    vkDestroyShaderModule(device, module, nullptr);
    REQUIRE(made == VK_SUCCESS);
  }
  indirect_pipeline(const indirect_pipeline&) = delete;
  indirect_pipeline& operator=(const indirect_pipeline&) = delete;
  ~indirect_pipeline() {
    vkDestroyPipeline(device, pipeline, nullptr);
    vkDestroyPipelineLayout(device, layout, nullptr);
  }
};

// Records a fill of `target` into `fill` and a copy of it into `copy`,
// the copy's list opened as `opening` (by_hazards: no barrier before it).
// `ranges`: both, granted to both lists, as a lane grants a node's (a
// command reaching outside its list's grants gets a barrier before it).
void record_fill_then_copy(command_list& fill, command_list& copy, std::span<const ferrum::gpu::arena_range, 2> ranges,
                           list_opening opening) {
  const ferrum::gpu::arena_range target = ranges[0];
  const ferrum::gpu::arena_range destination = ranges[1];
  fill.grant(ranges);
  copy.grant(ranges);
  require(fill.begin(list_opening::by_hazards));
  require(fill.fill(target, 7u));
  require(fill.end());
  require(copy.begin(opening));
  require(copy.copy(target, destination));
  require(copy.end());
}

// Destroys `s`'s device (the test's objects went first) and checks that
// validation reported a hazard of `kind` when `reported`, nothing otherwise.
void check_report(vulkan_test::session& s, std::string_view kind, bool reported) {
  const std::string log = s.finish_reported();
  INFO(log);
  CHECK((log.find(std::string("SYNC-HAZARD-") + std::string(kind)) != std::string::npos) == reported);
  if (!reported) CHECK(log.empty());
}

}  // namespace

TEST_CASE("vulkan validation: a hazard between two lists of one submission is reported, not once a barrier orders it",
          "[vulkan][validation]") {
  for (const list_opening opening : {list_opening::by_hazards, list_opening::barrier}) {
    const bool ordered = opening == list_opening::barrier;
    INFO((ordered ? "a barrier before the copy" : "no barrier before the copy"));
    vulkan_test::session s;
    if (!s.open()) return;
    {
      auto a = require(s.device->create_arena(4096));
      auto b = require(s.device->create_arena(4096));
      auto fill = require(s.device->create_command_list());
      auto copy = require(s.device->create_command_list());
      const std::array ranges{a->range(0, 1024), b->range(0, 1024)};
      record_fill_then_copy(*fill, *copy, ranges, opening);
      command_list* const lists[] = {fill.get(), copy.get()};
      const std::uint64_t value = require(s.device->queue().submit_next(lists));
      vulkan_test::require_reached(s.device->queue().timeline(), value);
      CHECK(vulkan_test::word_at(*b, 0) == 7u);
    }
    check_report(s, "READ-AFTER-WRITE", !ordered);
  }
}

TEST_CASE("vulkan validation: a hazard between two submissions is reported, not once the host waited in between",
          "[vulkan][validation]") {
  for (const bool host_waits : {false, true}) {
    INFO((host_waits ? "the host waits for the fill" : "no wait between them"));
    vulkan_test::session s;
    if (!s.open()) return;
    {
      auto a = require(s.device->create_arena(4096));
      auto b = require(s.device->create_arena(4096));
      auto fill = require(s.device->create_command_list());
      auto copy = require(s.device->create_command_list());
      const std::array ranges{a->range(0, 1024), b->range(0, 1024)};
      record_fill_then_copy(*fill, *copy, ranges, list_opening::by_hazards);
      command_list* const filled[] = {fill.get()};
      command_list* const copied[] = {copy.get()};
      // Without the host's wait, the fill waits for a gate the host opens only
      // once the copy is submitted: its completion cannot be seen before (the
      // device shows every completion it sees to the layers as a host wait).
      auto gate = require(s.device->create_semaphore(ferrum::gpu::semaphore_kind::timeline));
      const std::array gate_op{ferrum::gpu::semaphore_op{gate.get(), 1, ferrum::gpu::sync_stage::all}};
      ferrum::gpu::external_sync fill_sync;
      if (!host_waits) fill_sync.waits = gate_op;
      const std::uint64_t first = require(s.device->queue().submit_next(filled, {}, fill_sync));
      // The host's wait orders the fill before the copy's submission (as a
      // lane's last wave before its next); the device shows it to the layers.
      if (host_waits) vulkan_test::require_reached(s.device->queue().timeline(), first);
      const std::uint64_t second = require(s.device->queue().submit_next(copied));
      if (!host_waits) require(gate->signal_from_host(1));
      vulkan_test::require_reached(s.device->queue().timeline(), second);
    }
    check_report(s, "READ-AFTER-WRITE", !host_waits);
  }
}

TEST_CASE(
    "vulkan validation: kernels in two lists that write overlapping ranges of one arena are reported, "
    "disjoint ranges not",
    "[vulkan][validation][kernel]") {
  // The layers see the range a dispatch's operand binds: under this check
  // the device binds exactly the operand's range, not its arena's whole
  // buffer, so that disjoint ranges (two nodes' resources) are no hazard.
  for (const bool overlap : {true, false}) {
    INFO((overlap ? "overlapping ranges" : "disjoint ranges"));
    vulkan_test::session s;
    if (!s.open()) return;
    {
      auto a = require(s.device->create_arena(8192));
      auto kernel = require(s.device->create_kernel(ferrum::gpu::builtin::write_pattern()));
      auto first = require(s.device->create_command_list());
      auto second = require(s.device->create_command_list());
      const std::array<std::uint32_t, 1> seed{3};
      const std::array ranges{a->range(0, 8192)};
      first->grant(ranges);
      second->grant(ranges);
      require(first->begin(list_opening::by_hazards));
      require(first->dispatch(*kernel, a->range(0, 4096), {}, seed));
      require(first->end());
      require(second->begin(list_opening::by_hazards));
      require(second->dispatch(*kernel, a->range(overlap ? 2048 : 4096, 4096), {}, seed));
      require(second->end());
      command_list* const lists[] = {first.get(), second.get()};
      const std::uint64_t value = require(s.device->queue().submit_next(lists));
      vulkan_test::require_reached(s.device->queue().timeline(), value);
    }
    check_report(s, "WRITE-AFTER-WRITE", overlap);
  }
}

TEST_CASE("vulkan validation: a compute list's barrier covers an indirect dispatch's read of arguments a fill wrote",
          "[vulkan][validation]") {
  // A ferrum fill writes the arguments (1, 1, 1); the engine's native
  // dispatch reads them indirectly, after the barrier the native recording
  // opens with: its scopes name the draw-indirect stage and the indirect
  // command reads, or validation reports the read after the fill's write.
  vulkan_test::session s;
  if (!s.open()) return;
  {
    const auto handles = ferrum::gpu::native_handles(*s.device);
    REQUIRE(handles.has_value());
    const indirect_pipeline pipeline(handles->device);
    auto arguments = require(s.device->create_arena(256));
    auto list = require(s.device->create_command_list());
    require(list->begin());
    require(list->fill(arguments->range(0, 12), 1u));
    const VkCommandBuffer commands = ferrum::gpu::vulkan_command_buffer(require(list->record_native()));
    vkCmdBindPipeline(commands, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline.pipeline);
    vkCmdDispatchIndirect(commands, ferrum::gpu::vulkan_buffer(arguments->native_handle()), 0);
    require(list->end());
    command_list* const lists[] = {list.get()};
    vulkan_test::require_reached(s.device->queue().timeline(), require(s.device->queue().submit_next(lists)));
  }
  check_report(s, "READ-AFTER-WRITE", false);
}
