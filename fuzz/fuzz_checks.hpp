// Shared by the fuzz targets: input reading and the invariants every
// pod and node view must keep (plugin.h's promises to plugins). A broken
// invariant prints what broke and aborts, which libFuzzer reports as a
// crash and the replay test as a failure.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "schedplug/plugin.h"

#define SCHEDPLUG_FUZZ_CHECK(cond, what)                                  \
  do {                                                                    \
    if (!(cond)) {                                                        \
      std::fprintf(stderr, "%s:%d: fuzz invariant broken: %s (%s)\n",     \
                   __FILE__, __LINE__, std::string(what).c_str(), #cond); \
      std::abort();                                                       \
    }                                                                     \
  } while (0)

namespace schedplug::fuzz {

// Reads the fuzz input front to back; past the end every read is 0, so any
// input decodes to something.
class Bytes {
 public:
  Bytes(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  bool empty() const { return pos_ >= size_; }
  uint8_t u8() { return pos_ < size_ ? data_[pos_++] : 0; }
  uint32_t u32() {
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v = (v << 8) | u8();
    return v;
  }
  uint64_t u64() { return (static_cast<uint64_t>(u32()) << 32) | u32(); }
  // Up to `max` bytes, length first.
  std::string str(size_t max) {
    const size_t want = u8() % (max + 1);
    const size_t n = std::min(want, size_ - std::min(pos_, size_));
    std::string s(reinterpret_cast<const char*>(data_ + pos_), n);
    pos_ += n;
    return s;
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

inline std::string_view sv(schedplug_str s) {
  SCHEDPLUG_FUZZ_CHECK(s.len == 0 || s.data != nullptr, "string with no data");
  return s.len == 0 ? std::string_view{} : std::string_view{s.data, s.len};
}

inline int byte_compare(std::string_view a, std::string_view b) {
  const size_t n = std::min(a.size(), b.size());
  const int c = n == 0 ? 0 : std::memcmp(a.data(), b.data(), n);
  if (c != 0) return c;
  return a.size() < b.size() ? -1 : (a.size() > b.size() ? 1 : 0);
}

// Sorted by key in byte order, keys unique, and schedplug_kv_find finds
// every key with its value.
inline void check_kv_list(const schedplug_kv_list& list, const char* what) {
  SCHEDPLUG_FUZZ_CHECK(list.count == 0 || list.items != nullptr, what);
  for (size_t i = 0; i < list.count; ++i) {
    if (i > 0) {
      SCHEDPLUG_FUZZ_CHECK(
          byte_compare(sv(list.items[i - 1].key), sv(list.items[i].key)) < 0,
          std::string(what) + " not sorted or has a duplicate key");
    }
    (void)sv(list.items[i].value);
  }
}

inline void check_resources(const schedplug_resource_list& list,
                            const char* what) {
  SCHEDPLUG_FUZZ_CHECK(list.count == 0 || list.items != nullptr, what);
  for (size_t i = 1; i < list.count; ++i) {
    SCHEDPLUG_FUZZ_CHECK(
        byte_compare(sv(list.items[i - 1].name), sv(list.items[i].name)) < 0,
        std::string(what) + " not sorted or has a duplicate name");
  }
}

inline void check_node_view(const schedplug_node& n) {
  SCHEDPLUG_FUZZ_CHECK(n.struct_size == sizeof(schedplug_node), "struct_size");
  (void)sv(n.name);
  check_kv_list(n.labels, "node labels");
  check_kv_list(n.annotations, "node annotations");
  SCHEDPLUG_FUZZ_CHECK(n.taint_count == 0 || n.taints != nullptr, "taints");
  for (size_t i = 0; i < n.taint_count; ++i) {
    (void)sv(n.taints[i].key);
    (void)sv(n.taints[i].value);
    (void)sv(n.taints[i].effect);
  }
  check_resources(n.allocatable, "node allocatable");
  check_resources(n.requested, "node requested");
}

inline bool same_kvs(const schedplug_kv_list& a, const schedplug_kv_list& b) {
  if (a.count != b.count) return false;
  for (size_t i = 0; i < a.count; ++i) {
    if (sv(a.items[i].key) != sv(b.items[i].key) ||
        sv(a.items[i].value) != sv(b.items[i].value)) {
      return false;
    }
  }
  return true;
}

inline bool same_resources(const schedplug_resource_list& a,
                           const schedplug_resource_list& b) {
  if (a.count != b.count) return false;
  for (size_t i = 0; i < a.count; ++i) {
    if (sv(a.items[i].name) != sv(b.items[i].name) ||
        a.items[i].value != b.items[i].value) {
      return false;
    }
  }
  return true;
}

// Deep equality of two node views (a NodeModel's and its compact copy).
inline void check_same_node(const schedplug_node& a, const schedplug_node& b) {
  check_node_view(a);
  check_node_view(b);
  SCHEDPLUG_FUZZ_CHECK(sv(a.name) == sv(b.name), "node name differs");
  SCHEDPLUG_FUZZ_CHECK(same_kvs(a.labels, b.labels), "node labels differ");
  SCHEDPLUG_FUZZ_CHECK(same_kvs(a.annotations, b.annotations),
                       "node annotations differ");
  SCHEDPLUG_FUZZ_CHECK(a.taint_count == b.taint_count, "taint count differs");
  for (size_t i = 0; i < a.taint_count; ++i) {
    SCHEDPLUG_FUZZ_CHECK(sv(a.taints[i].key) == sv(b.taints[i].key) &&
                             sv(a.taints[i].value) == sv(b.taints[i].value) &&
                             sv(a.taints[i].effect) == sv(b.taints[i].effect),
                         "taint differs");
  }
  SCHEDPLUG_FUZZ_CHECK(same_resources(a.allocatable, b.allocatable),
                       "allocatable differs");
  SCHEDPLUG_FUZZ_CHECK(same_resources(a.requested, b.requested),
                       "requested differs");
  SCHEDPLUG_FUZZ_CHECK(a.pod_count == b.pod_count, "pod_count differs");
}

}  // namespace schedplug::fuzz
