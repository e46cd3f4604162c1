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

// The engine's word `i` of an inbox region in frame `frame`.
std::uint32_t engine_word(std::uint64_t frame, std::size_t i) noexcept {
  return ferrum::gpu::builtin::pattern_word(0xe0000000u ^ static_cast<std::uint32_t>(frame),
                                            static_cast<std::uint32_t>(i));
}

std::uint32_t word_at(std::span<const std::byte> bytes, std::size_t offset) noexcept {
  std::uint32_t word = 0;
  std::memcpy(&word, bytes.data() + offset, 4);
  return word;
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
  auto inbox = device.create_arena(frames_in_flight * work->region_bytes_);
  if (!inbox) return inbox.error();
  work->inbox_ = std::move(*inbox);
  auto outbox = device.create_arena(frames_in_flight * 2 * work->region_bytes_);
  if (!outbox) return outbox.error();
  work->outbox_ = std::move(*outbox);
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

std::vector<std::uint32_t> frame_work::engine_words(std::uint64_t frame) const {
  std::vector<std::uint32_t> words(region_bytes_ / 4);
  for (std::size_t i = 0; i < words.size(); ++i) words[i] = engine_word(frame, i);
  return words;
}

std::span<const std::byte> frame_work::outbox(std::size_t ring_index) const noexcept {
  return outbox_->bytes().subspan(ring_index * 2 * region_bytes_, 2 * region_bytes_);
}

std::size_t frame_work::wrong_echo(std::span<const std::byte> region, std::size_t ring_index) const noexcept {
  const std::uint64_t frame = encoders_[ring_index].frame_;
  std::size_t wrong = 0;
  for (const ferrum::binding_slot& slot : layout_->slots()) {
    const auto first = static_cast<std::size_t>(slot.offset) / 4;
    for (std::size_t i = 0; i < slot.capacity / 4; ++i)
      wrong += word_at(region, static_cast<std::size_t>(slot.offset) + i * 4) != engine_word(frame, first + i) ? 1 : 0;
  }
  return wrong;
}

std::size_t frame_work::wrong_words(std::span<const std::byte> region, std::size_t ring_index) const noexcept {
  const std::uint64_t frame = encoders_[ring_index].frame_;
  std::size_t wrong = wrong_echo(region, ring_index);
  for (const ferrum::binding_slot& slot : layout_->slots()) {
    for (std::size_t i = 0; i < slot.capacity / 4; ++i) {
      const std::uint32_t word = word_at(region, region_bytes_ + static_cast<std::size_t>(slot.offset) + i * 4);
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
  const std::size_t offset = static_cast<std::size_t>(c.binding->slot().offset);
  const std::size_t in = ring_index_ * work_->region_bytes_ + offset;
  const std::size_t out = ring_index_ * 2 * work_->region_bytes_ + offset;
  // Commands of one list run in order: each sees what the one before wrote.
  // The engine's words, which its own GPU work put into the inbox (the
  // wave's first submission waits on the engine's semaphore for them),
  // into the lane slot, and from there back out.
  require(c.commands.copy(work_->inbox_->range(in, c.slot.size), c.slot), "copy from the inbox");
  require(c.commands.copy(c.slot, work_->outbox_->range(out, c.slot.size)), "copy of the echo to the outbox");
  // The wave's own words.
  const std::array<std::uint32_t, 1> seed{seed_of(frame_, c.node_index)};
  require(c.commands.dispatch(*work_->writer_, c.slot, {}, seed), "write_pattern");
  require(c.commands.copy(c.slot, work_->outbox_->range(out + work_->region_bytes_, c.slot.size)),
          "copy of the pattern to the outbox");
}
