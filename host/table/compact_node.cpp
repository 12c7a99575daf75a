#include "host/table/compact_node.hpp"

#include "host/model/models.hpp"
#include "host/table/string_pool.hpp"

#include <algorithm>
#include <cstring>
#include <string_view>
#include <vector>

namespace schedplug::host {
namespace {

size_t align8(size_t n) { return (n + 7) & ~size_t{7}; }

// Sizes the block in a first pass and fills it in a second, with the same
// code, so the two can never disagree. Shared strings are taken from the
// pool in the sizing pass (which then knows how many bytes the block needs
// for those it must keep itself) and handed out again, in the same order,
// in the filling pass.
class Packer {
 public:
  Packer(std::byte* block, std::vector<std::string_view>& pooled)
      : block_(block), pooled_(pooled) {}

  template <typename T>
  T* array(const T* items, size_t count) {
    if (count == 0) return nullptr;
    T* out = reinterpret_cast<T*>(take(align8(sizeof(T) * count)));
    if (block_ != nullptr) std::memcpy(out, items, sizeof(T) * count);
    return out;
  }
  // Strings go after every array (see copy_of), unaligned.
  schedplug_str str(schedplug_str s) {
    if (s.len == 0) return {nullptr, 0};
    char* out = reinterpret_cast<char*>(take(s.len));
    if (block_ != nullptr) std::memcpy(out, s.data, s.len);
    return {out, s.len};
  }
  // A string many nodes are likely to share: from the pool when it has
  // room, else in the block like any other.
  schedplug_str shared(schedplug_str s) {
    if (s.len == 0) return {nullptr, 0};
    if (block_ == nullptr) {
      const char* p = StringPool::shared().acquire({s.data, s.len});
      pooled_.emplace_back(p, p == nullptr ? 0 : s.len);
      if (p == nullptr) take(s.len);
      return {};
    }
    const std::string_view p = pooled_.at(next_pooled_++);
    return p.data() != nullptr ? schedplug_str{p.data(), p.size()} : str(s);
  }
  size_t used() const { return used_; }

 private:
  std::byte* take(size_t n) {
    std::byte* at = block_ == nullptr ? nullptr : block_ + used_;
    used_ += n;
    return at;
  }
  std::byte* block_;
  std::vector<std::string_view>& pooled_;
  size_t next_pooled_ = 0;
  size_t used_ = 0;
};

// Lays `in` out through `p`; returns the view into the block (meaningless
// in the sizing pass).
schedplug_node pack(const schedplug_node& in, Packer& p) {
  schedplug_node out = in;
  schedplug_kv* labels = p.array(in.labels.items, in.labels.count);
  schedplug_kv* annotations =
      p.array(in.annotations.items, in.annotations.count);
  schedplug_taint* taints = p.array(in.taints, in.taint_count);
  schedplug_resource* allocatable =
      p.array(in.allocatable.items, in.allocatable.count);
  schedplug_resource* requested =
      p.array(in.requested.items, in.requested.count);
  // v1.2 data (empty unless a plugin declared it).
  schedplug_node_condition* conditions =
      p.array(in.conditions, in.condition_count);
  schedplug_resource* capacity = p.array(in.capacity.items, in.capacity.count);
  schedplug_node_pod* pods = p.array(in.pod_list, in.pod_list_count);
  for (size_t i = 0; i < in.pod_list_count; ++i) {
    const schedplug_node_pod& src = in.pod_list[i];
    schedplug_kv* l = p.array(src.labels.items, src.labels.count);
    schedplug_resource* r = p.array(src.requests.items, src.requests.count);
    if (pods) {
      pods[i].labels.items = l;
      pods[i].requests.items = r;
    }
  }
  // v1.3 data.
  schedplug_node_image* images = p.array(in.images, in.image_count);
  for (size_t i = 0; i < in.image_count; ++i) {
    schedplug_str* names = p.array(in.images[i].names, in.images[i].name_count);
    if (images) images[i].names = names;
  }
  out.name = p.str(in.name);
  // Keys next to their values, labels first: what filters read most.
  for (size_t i = 0; i < in.labels.count; ++i) {
    const schedplug_kv kv{p.shared(in.labels.items[i].key),
                          p.shared(in.labels.items[i].value)};
    if (labels) labels[i] = kv;
  }
  for (size_t i = 0; i < in.allocatable.count; ++i) {
    const schedplug_str name = p.shared(in.allocatable.items[i].name);
    if (allocatable) allocatable[i].name = name;
  }
  for (size_t i = 0; i < in.requested.count; ++i) {
    const schedplug_str name = p.shared(in.requested.items[i].name);
    if (requested) requested[i].name = name;
  }
  for (size_t i = 0; i < in.taint_count; ++i) {
    const schedplug_taint t{p.shared(in.taints[i].key),
                            p.shared(in.taints[i].value),
                            p.shared(in.taints[i].effect)};
    if (taints) taints[i] = t;
  }
  for (size_t i = 0; i < in.annotations.count; ++i) {
    const schedplug_kv kv{p.shared(in.annotations.items[i].key),
                          p.str(in.annotations.items[i].value)};
    if (annotations) annotations[i] = kv;
  }
  for (size_t i = 0; i < in.condition_count; ++i) {
    const schedplug_node_condition c{p.shared(in.conditions[i].type),
                                     p.shared(in.conditions[i].status)};
    if (conditions) conditions[i] = c;
  }
  for (size_t i = 0; i < in.capacity.count; ++i) {
    const schedplug_str name = p.shared(in.capacity.items[i].name);
    if (capacity) capacity[i].name = name;
  }
  for (size_t i = 0; i < in.pod_list_count; ++i) {
    const schedplug_node_pod& src = in.pod_list[i];
    const schedplug_str ns = p.shared(src.namespace_name);
    const schedplug_str name = p.str(src.name);
    const schedplug_str owner_kind = p.shared(src.owner_kind);
    if (pods) {
      pods[i].namespace_name = ns;
      pods[i].name = name;
      pods[i].owner_kind = owner_kind;
    }
    for (size_t j = 0; j < src.labels.count; ++j) {
      const schedplug_kv kv{p.shared(src.labels.items[j].key),
                            p.shared(src.labels.items[j].value)};
      if (pods) const_cast<schedplug_kv*>(pods[i].labels.items)[j] = kv;
    }
    for (size_t j = 0; j < src.requests.count; ++j) {
      const schedplug_str r = p.shared(src.requests.items[j].name);
      if (pods)
        const_cast<schedplug_resource*>(pods[i].requests.items)[j].name = r;
    }
  }
  // Image names: from the pool when short enough (most nodes of a cluster
  // hold the same images), else in the block.
  for (size_t i = 0; i < in.image_count; ++i) {
    const schedplug_node_image& src = in.images[i];
    for (size_t j = 0; j < src.name_count; ++j) {
      const schedplug_str name = p.shared(src.names[j]);
      if (images) const_cast<schedplug_str*>(images[i].names)[j] = name;
    }
  }
  out.images = images;
  out.conditions = conditions;
  out.capacity = {capacity, in.capacity.count};
  out.pod_list = pods;
  out.labels = {labels, in.labels.count};
  out.annotations = {annotations, in.annotations.count};
  out.taints = taints;
  out.allocatable = {allocatable, in.allocatable.count};
  out.requested = {requested, in.requested.count};
  out.struct_size = sizeof(schedplug_node);
  set_element_sizes(out);
  return out;
}

// Every string of a node view, shared or not.
template <typename F>
void for_each_string(const schedplug_node& n, F&& f) {
  f(n.name);
  for (size_t i = 0; i < n.labels.count; ++i) {
    f(n.labels.items[i].key);
    f(n.labels.items[i].value);
  }
  for (size_t i = 0; i < n.annotations.count; ++i) {
    f(n.annotations.items[i].key);
    f(n.annotations.items[i].value);
  }
  for (size_t i = 0; i < n.taint_count; ++i) {
    f(n.taints[i].key);
    f(n.taints[i].value);
    f(n.taints[i].effect);
  }
  for (size_t i = 0; i < n.allocatable.count; ++i)
    f(n.allocatable.items[i].name);
  for (size_t i = 0; i < n.requested.count; ++i) f(n.requested.items[i].name);
  for (size_t i = 0; i < n.condition_count; ++i) {
    f(n.conditions[i].type);
    f(n.conditions[i].status);
  }
  for (size_t i = 0; i < n.capacity.count; ++i) f(n.capacity.items[i].name);
  for (size_t i = 0; i < n.pod_list_count; ++i) {
    const schedplug_node_pod& pod = n.pod_list[i];
    f(pod.namespace_name);
    f(pod.name);
    f(pod.owner_kind);
    for (size_t j = 0; j < pod.labels.count; ++j) {
      f(pod.labels.items[j].key);
      f(pod.labels.items[j].value);
    }
    for (size_t j = 0; j < pod.requests.count; ++j) {
      f(pod.requests.items[j].name);
    }
  }
  for (size_t i = 0; i < n.image_count; ++i) {
    for (size_t j = 0; j < n.images[i].name_count; ++j) f(n.images[i].names[j]);
  }
}

// After a failed copy, whose view was never filled.
void release_pooled(const std::vector<std::string_view>& pooled) {
  for (const std::string_view p : pooled) {
    if (p.data() != nullptr) StringPool::shared().release(p.data(), p.size());
  }
}

}  // namespace

CompactNode::~CompactNode() {
  // Every non-empty string outside the block came from the pool.
  const std::byte* begin = block_.get();
  const std::byte* end = begin + block_bytes_;
  for_each_string(view_, [&](const schedplug_str& s) {
    if (s.len == 0) return;
    const auto* at = reinterpret_cast<const std::byte*>(s.data);
    if (at < begin || at >= end) StringPool::shared().release(s.data, s.len);
  });
}

std::shared_ptr<const CompactNode> CompactNode::copy_of(
    const schedplug_node& view) {
  std::vector<std::string_view> pooled;
  Packer sizing(nullptr, pooled);
  std::shared_ptr<CompactNode> node;
  try {
    pack(view, sizing);
    node.reset(new CompactNode());
    node->block_bytes_ = sizing.used();
    node->block_ = std::make_unique_for_overwrite<std::byte[]>(
        std::max<size_t>(1, sizing.used()));
  } catch (...) {
    release_pooled(pooled);
    throw;
  }
  Packer filling(node->block_.get(), pooled);
  node->view_ = pack(view, filling);
  return node;
}

}  // namespace schedplug::host
