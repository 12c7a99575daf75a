#include "host/table/compact_node.hpp"

#include "host/model/records.hpp"

#include <algorithm>
#include <cstring>

namespace schedplug::host {
namespace {

size_t align8(size_t n) { return (n + 7) & ~size_t{7}; }

// Sizes the block in a first pass and fills it in a second, with the same
// code, so the two can never disagree.
class Packer {
 public:
  explicit Packer(std::byte* block) : block_(block) {}

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
  size_t used() const { return used_; }

 private:
  std::byte* take(size_t n) {
    std::byte* at = block_ == nullptr ? nullptr : block_ + used_;
    used_ += n;
    return at;
  }
  std::byte* block_;
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
  out.name = p.str(in.name);
  // Keys next to their values, labels first: what filters read most.
  for (size_t i = 0; i < in.labels.count; ++i) {
    const schedplug_kv kv{p.str(in.labels.items[i].key),
                          p.str(in.labels.items[i].value)};
    if (labels) labels[i] = kv;
  }
  for (size_t i = 0; i < in.allocatable.count; ++i) {
    const schedplug_str name = p.str(in.allocatable.items[i].name);
    if (allocatable) allocatable[i].name = name;
  }
  for (size_t i = 0; i < in.requested.count; ++i) {
    const schedplug_str name = p.str(in.requested.items[i].name);
    if (requested) requested[i].name = name;
  }
  for (size_t i = 0; i < in.taint_count; ++i) {
    const schedplug_taint t{p.str(in.taints[i].key), p.str(in.taints[i].value),
                            p.str(in.taints[i].effect)};
    if (taints) taints[i] = t;
  }
  for (size_t i = 0; i < in.annotations.count; ++i) {
    const schedplug_kv kv{p.str(in.annotations.items[i].key),
                          p.str(in.annotations.items[i].value)};
    if (annotations) annotations[i] = kv;
  }
  for (size_t i = 0; i < in.condition_count; ++i) {
    const schedplug_node_condition c{p.str(in.conditions[i].type),
                                     p.str(in.conditions[i].status)};
    if (conditions) conditions[i] = c;
  }
  for (size_t i = 0; i < in.capacity.count; ++i) {
    const schedplug_str name = p.str(in.capacity.items[i].name);
    if (capacity) capacity[i].name = name;
  }
  for (size_t i = 0; i < in.pod_list_count; ++i) {
    const schedplug_node_pod& src = in.pod_list[i];
    const schedplug_str ns = p.str(src.namespace_name);
    const schedplug_str name = p.str(src.name);
    const schedplug_str owner_kind = p.str(src.owner_kind);
    if (pods) {
      pods[i].namespace_name = ns;
      pods[i].name = name;
      pods[i].owner_kind = owner_kind;
    }
    for (size_t j = 0; j < src.labels.count; ++j) {
      const schedplug_kv kv{p.str(src.labels.items[j].key),
                            p.str(src.labels.items[j].value)};
      if (pods) const_cast<schedplug_kv*>(pods[i].labels.items)[j] = kv;
    }
    for (size_t j = 0; j < src.requests.count; ++j) {
      const schedplug_str r = p.str(src.requests.items[j].name);
      if (pods)
        const_cast<schedplug_resource*>(pods[i].requests.items)[j].name = r;
    }
  }
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

}  // namespace

std::shared_ptr<const CompactNode> CompactNode::copy_of(
    const schedplug_node& view) {
  Packer sizing(nullptr);
  pack(view, sizing);
  std::shared_ptr<CompactNode> node(new CompactNode());
  node->block_bytes_ = sizing.used();
  node->block_ = std::make_unique_for_overwrite<std::byte[]>(
      std::max<size_t>(1, sizing.used()));
  Packer filling(node->block_.get());
  node->view_ = pack(view, filling);
  return node;
}

}  // namespace schedplug::host
