// examples/async_pipeline/request_encoder.cpp — the two GPU stages of a
// request's wave and the host's check of its result (request_encoder.hpp).
#include "request_encoder.hpp"

#include "ferrum/gpu/builtin_kernels.hpp"

#include <array>
#include <cstring>
#include <span>
#include <stdexcept>
#include <string>

namespace {

constexpr std::string_view generate_node = "stage/generate";
constexpr std::string_view transform_node = "stage/transform";
constexpr std::string_view input_payload = "payload/input";
constexpr std::string_view output_payload = "payload/output";

// The first `bytes` bytes of payload `id` on the wave's lane: the plan lists
// it for the node (stage/transform lists stage/generate's payload too), so the
// scheduler hands it to the node's encoder, and its list may write it.
ferrum::gpu::arena_range payload(const ferrum::encode_context& c, std::string_view id, std::size_t bytes) {
  const ferrum::node_resource* resource = c.resource(id);
  if (resource == nullptr)
    throw std::runtime_error("node " + std::to_string(c.node_index) + " does not list '" + std::string(id) + "'");
  if (bytes > resource->range.size)
    throw std::runtime_error("'" + std::string(id) + "' in bucket " + c.bucket.str() + " holds " +
                             std::to_string(resource->range.size) + " bytes, the request needs " +
                             std::to_string(bytes));
  return resource->range.arena->range(resource->range.offset, bytes);
}

void require(const ferrum::result<void>& recorded, const char* command) {
  if (!recorded) throw std::runtime_error(std::string(command) + " refused: " + recorded.error().what());
}

}  // namespace

request make_request(std::uint64_t number, std::mt19937& random) {
  const bool large = std::uniform_int_distribution<int>(0, 2)(random) == 0;
  std::uniform_int_distribution<std::uint32_t> words = large ? std::uniform_int_distribution<std::uint32_t>(257, 4096)
                                                             : std::uniform_int_distribution<std::uint32_t>(1, 256);
  std::uniform_int_distribution<std::uint32_t> any;
  request r;
  r.number = number;
  r.size_class = large ? "large" : "small";
  r.words = words(random);
  r.seed = any(random);
  r.scale = any(random) | 1u;  // odd: the transform loses no bits
  r.offset = any(random);
  return r;
}

ferrum::result<std::unique_ptr<pipeline_gpu>> pipeline_gpu::create(ferrum::gpu::device& device, std::size_t tickets,
                                                                   std::size_t max_words) {
  std::unique_ptr<pipeline_gpu> gpu(new pipeline_gpu());
  auto writer = device.create_kernel(ferrum::gpu::builtin::write_pattern());
  if (!writer) return writer.error();
  gpu->writer_ = std::move(*writer);
  auto affine = device.create_kernel(ferrum::gpu::builtin::affine());
  if (!affine) return affine.error();
  gpu->affine_ = std::move(*affine);
  gpu->region_bytes_ = max_words * 4;
  auto results = device.create_arena(tickets * gpu->region_bytes_);
  if (!results) return results.error();
  gpu->results_ = std::move(*results);
  return gpu;
}

ferrum::gpu::arena_range pipeline_gpu::result_region(std::size_t ticket, std::uint32_t words) const noexcept {
  return results_->range(ticket * region_bytes_, std::size_t{words} * 4);
}

std::size_t pipeline_gpu::mismatches(std::size_t ticket, const request& r) const noexcept {
  const std::span<const std::byte> region = results_->bytes().subspan(ticket * region_bytes_, std::size_t{r.words} * 4);
  std::size_t wrong = 0;
  for (std::uint32_t i = 0; i < r.words; ++i) {
    std::uint32_t word = 0;
    std::memcpy(&word, region.data() + std::size_t{i} * 4, 4);
    wrong += word != ferrum::gpu::builtin::pattern_word(r.seed, i) * r.scale + r.offset ? 1 : 0;
  }
  return wrong;
}

void request_encoder::operator()(const ferrum::encode_context& c) const {
  if (c.binding == nullptr)
    throw std::runtime_error("node " + std::to_string(c.node_index) + " owns no slot; this encoder runs pipeline.json");
  const std::size_t bytes = std::size_t{request_.words} * 4;
  const std::string& node = c.binding->slot().node.str();
  if (node == generate_node) {
    // Stage 1: payload word i = pattern_word(seed, i).
    require(c.commands.dispatch(gpu_->writer(), payload(c, input_payload, bytes), {}, std::array{request_.seed}),
            "write_pattern");
  } else if (node == transform_node) {
    // Stage 2. The wave's lists run in node order, each after the device
    // writes of the ones before, so stage 1's payload is there to read.
    const ferrum::gpu::arena_range input = payload(c, input_payload, bytes);
    const ferrum::gpu::arena_range output = payload(c, output_payload, bytes);
    require(c.commands.copy(input, output), "copy of the payload");
    require(c.commands.dispatch(gpu_->affine(), output, {}, std::array{request_.scale, request_.offset}), "affine");
    require(c.commands.copy(output, gpu_->result_region(ticket_, request_.words)), "copy of the result");
  } else {
    throw std::runtime_error("node '" + node + "' is not a stage of pipeline.json");
  }
}
