#include "host/table/string_pool.hpp"

#include <cstring>

namespace schedplug::host {
namespace {
// What one entry costs besides its text: the map node, the bucket and the
// allocation header, roughly.
constexpr size_t kEntryOverhead = 64;
}  // namespace

StringPool& StringPool::shared() {
  static StringPool* pool = new StringPool();
  return *pool;
}

const char* StringPool::acquire(std::string_view s) {
  if (s.empty() || s.size() > kMaxLength) return nullptr;
  std::lock_guard lock(mutex_);
  if (auto it = entries_.find(s); it != entries_.end()) {
    ++it->second.references;
    return it->second.text.get();
  }
  const size_t cost = s.size() + kEntryOverhead;
  if (bytes_ + cost > kMaxBytes) return nullptr;
  auto text = std::make_unique_for_overwrite<char[]>(s.size());
  std::memcpy(text.get(), s.data(), s.size());
  const std::string_view key(text.get(), s.size());
  Entry& entry = entries_[key];
  entry.text = std::move(text);
  entry.references = 1;
  bytes_ += cost;
  return key.data();
}

void StringPool::release(const char* pooled, size_t len) {
  std::lock_guard lock(mutex_);
  auto it = entries_.find(std::string_view(pooled, len));
  // Only strings acquire() returned come here; a miss would be a bug in
  // the caller, and ignoring it is safer than freeing what someone uses.
  if (it == entries_.end() || it->second.text.get() != pooled) return;
  if (--it->second.references == 0) {
    entries_.erase(it);
    bytes_ -= len + kEntryOverhead;
  }
}

size_t StringPool::strings() const {
  std::lock_guard lock(mutex_);
  return entries_.size();
}

size_t StringPool::bytes() const {
  std::lock_guard lock(mutex_);
  return bytes_;
}

}  // namespace schedplug::host
