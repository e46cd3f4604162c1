// examples/embed/frame_work.cpp — the frame's GPU commands and the engine's
// check of their results (frame_work.hpp).
#include "frame_work.hpp"

#include "ferrum/gpu/builtin_kernels.hpp"

#include <array>
#include <cstring>
#include <stdexcept>
#include <string>

namespace {

// The pattern seed of node `node` in frame `frame`.
std::uint32_t seed_of(std::uint64_t frame, std::size_t node) noexcept {
  return ferrum::gpu::builtin::pattern_word(static_cast<std::uint32_t>(frame), static_cast<std::uint32_t>(node));
}

void require(const ferrum::result<void>& recorded, const char* command) {
  if (!recorded) throw std::runtime_error(std::string(command) + " refused: " + recorded.error().what());
}

}  // namespace

ferrum::result<std::unique_ptr<frame_work>> frame_work::create(ferrum::gpu::device& device,
                                                               const ferrum::compiled_bucket& bucket,
                                                               std::size_t frames_in_flight) {
  if (!bucket.binding)
    return ferrum::make_error(ferrum::errc::no_binding_layout, "bucket " + bucket.id.str() + " has no slots");
  std::unique_ptr<frame_work> work(new frame_work());
  work->layout_ = bucket.binding.get();
  auto writer = device.create_kernel(ferrum::gpu::builtin::write_pattern());
  if (!writer) return writer.error();
  work->writer_ = std::move(*writer);
  work->region_bytes_ = static_cast<std::size_t>(bucket.binding->physical_size_bytes());
  auto readback = device.create_arena(frames_in_flight * work->region_bytes_);
  if (!readback) return readback.error();
  work->readback_ = std::move(*readback);
  work->encoders_.resize(frames_in_flight);
  for (std::size_t ring_index = 0; ring_index < frames_in_flight; ++ring_index) {
    work->encoders_[ring_index].work_ = work.get();
    work->encoders_[ring_index].ring_index_ = ring_index;
  }
  return work;
}

frame_encoder& frame_work::arm(std::size_t ring_index, std::uint64_t frame) noexcept {
  encoders_[ring_index].frame_ = frame;
  return encoders_[ring_index];
}

std::size_t frame_work::wrong_words(std::size_t ring_index) const noexcept {
  const std::uint64_t frame = encoders_[ring_index].frame_;
  const std::byte* region = readback_->bytes().data() + ring_index * region_bytes_;
  std::size_t wrong = 0;
  for (const ferrum::binding_slot& slot : layout_->slots()) {
    for (std::size_t i = 0; i < slot.capacity / 4; ++i) {
      std::uint32_t word = 0;
      std::memcpy(&word, region + slot.offset + i * 4, 4);
      wrong +=
          word != ferrum::gpu::builtin::pattern_word(seed_of(frame, slot.node_index), static_cast<std::uint32_t>(i))
              ? 1
              : 0;
    }
  }
  return wrong;
}

void frame_encoder::operator()(const ferrum::encode_context& c) const {
  if (c.binding == nullptr) return;  // a node without a slot has nothing to write
  const std::array<std::uint32_t, 1> seed{seed_of(frame_, c.node_index)};
  require(c.commands.dispatch(*work_->writer_, c.slot, {}, seed), "write_pattern");
  // Commands of one list run in order: the copy sees the pattern.
  const std::size_t region = ring_index_ * work_->region_bytes_ + static_cast<std::size_t>(c.binding->slot().offset);
  require(c.commands.copy(c.slot, work_->readback_->range(region, c.slot.size)), "copy to the readback arena");
}
