// Strings many nodes share (label keys and values such as zones, taint
// keys, resource names), stored once for the whole host.
//
// A PreFilter walks every node of a table that does not stay in cache
// between cycles (about 1.8 KB a node). Plugins binary-search a node's
// labels and resources by string comparison, so each step of the search
// used to touch a different cache line of that node's block. With the
// shared strings in one pool, the strings they compare stay in cache and
// a node costs only the lines of its own arrays.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <string_view>
#include <unordered_map>

namespace schedplug::host {

class StringPool {
 public:
  // Longer strings (annotation values and the like) are rarely shared.
  static constexpr size_t kMaxLength = 128;
  // A bound on the pool whatever the input: past it, callers keep their
  // own copies, which is only slower.
  static constexpr size_t kMaxBytes = 16u << 20;

  // The pool every node table of the process uses. Never destroyed, so
  // nodes that outlive static destruction can still release into it.
  static StringPool& shared();

  StringPool() = default;
  StringPool(const StringPool&) = delete;
  StringPool& operator=(const StringPool&) = delete;

  // A pooled copy of `s` holding one more reference, or nullptr when `s`
  // is empty, longer than kMaxLength or the pool is full.
  const char* acquire(std::string_view s);
  // Drops one reference to a string acquire() returned; the last one
  // frees it.
  void release(const char* pooled, size_t len);

  size_t strings() const;
  // Text plus the map's per-entry overhead, roughly.
  size_t bytes() const;

 private:
  struct Entry {
    std::unique_ptr<char[]> text;  // the map's key views it
    uint64_t references = 0;
  };
  mutable std::mutex mutex_;
  std::unordered_map<std::string_view, Entry> entries_;
  size_t bytes_ = 0;
};

}  // namespace schedplug::host
