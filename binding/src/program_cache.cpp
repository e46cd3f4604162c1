// program_cache: compiled programs by plan hash, the least recently used
// evicted past the capacity (program_cache.hpp). A list in use order (the
// latest first) and a map from hash to its entry in the list: a hit moves
// the entry to the front (a splice, no allocation).
#include "ferrum/binding/program_cache.hpp"

#include <boost/unordered/unordered_flat_map.hpp>

#include <algorithm>
#include <cstring>
#include <list>
#include <mutex>
#include <utility>

namespace ferrum {
// Named, not anonymous: program_cache::state holds them.
namespace detail {

// A plan hash is SHA-256: any 8 of its bytes are as good a hash as any.
struct plan_hash_hash {
  std::size_t operator()(const plan_hash& h) const noexcept {
    std::size_t out = 0;
    std::memcpy(&out, h.bytes.data(), sizeof out);
    return out;
  }
};

using kept_program = std::pair<plan_hash, std::shared_ptr<const compiled_program>>;

}  // namespace detail

using detail::kept_program;
using detail::plan_hash_hash;

struct program_cache::state {
  std::size_t capacity = 1;
  mutable std::mutex mutex;
  std::list<kept_program> by_use;  // the most recently used first
  boost::unordered_flat_map<plan_hash, std::list<kept_program>::iterator, plan_hash_hash> by_hash;
  counters count;

  // The program kept for `hash`, made the most recently used; null if none.
  // Under `mutex`.
  std::shared_ptr<const compiled_program> touch(const plan_hash& hash) {
    const auto it = by_hash.find(hash);
    if (it == by_hash.end()) return nullptr;
    by_use.splice(by_use.begin(), by_use, it->second);
    return it->second->second;
  }
};

program_cache::program_cache(std::size_t capacity) : s_(std::make_unique<state>()) {
  s_->capacity = std::max<std::size_t>(capacity, 1);
}

program_cache::~program_cache() = default;

std::shared_ptr<const compiled_program> program_cache::find(const plan_hash& hash) {
  const std::scoped_lock lock(s_->mutex);
  return s_->touch(hash);
}

std::shared_ptr<const compiled_program> program_cache::insert(std::shared_ptr<const compiled_program> program) {
  state& s = *s_;
  const std::scoped_lock lock(s.mutex);
  if (auto kept = s.touch(program->hash)) return kept;
  s.by_use.emplace_front(program->hash, program);
  s.by_hash.emplace(program->hash, s.by_use.begin());
  while (s.by_use.size() > s.capacity) {
    s.by_hash.erase(s.by_use.back().first);
    s.by_use.pop_back();
    ++s.count.evictions;
  }
  return program;
}

result<std::shared_ptr<const compiled_program>> program_cache::get(frame_builder& frame) {
  const result<plan_hash> hash = frame.hash();
  if (!hash) return hash.error();
  {
    const std::scoped_lock lock(s_->mutex);
    if (auto kept = s_->touch(*hash)) {
      ++s_->count.hits;
      return kept;
    }
    ++s_->count.misses;
  }
  // Built and compiled without the lock: others find theirs meanwhile.
  result<plan> built = frame.build();
  if (!built) return built.error();
  result<compiled_program> compiled = compile(*built);
  if (!compiled) return compiled.error();
  return insert(std::make_shared<const compiled_program>(std::move(*compiled)));
}

program_cache::counters program_cache::stats() const {
  const std::scoped_lock lock(s_->mutex);
  return s_->count;
}

std::size_t program_cache::size() const {
  const std::scoped_lock lock(s_->mutex);
  return s_->by_use.size();
}

std::size_t program_cache::capacity() const noexcept { return s_->capacity; }

}  // namespace ferrum
