// Owned pod and node data with a ready-made C ABI view.
//
// A record owns every string and array its view points into, so the view
// stays valid for the record's lifetime. Records are immutable after
// construction and neither copyable nor movable (the view holds pointers
// into the record itself); keep them in std::unique_ptr or
// std::shared_ptr<const ...>.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "schedplug/plugin.h"

namespace schedplug::host {

// Fills a view's v1.1 element sizes with this host's element sizes (the
// v1.0 sizes: plugin.h rule 5 lets a host grow an element only for plugins
// that index by element size).
inline void set_element_sizes(schedplug_pod& pod) {
  pod.kv_size = sizeof(schedplug_kv);
  pod.resource_size = sizeof(schedplug_resource);
  pod.toleration_size = sizeof(schedplug_toleration);
  pod.node_score_size = sizeof(schedplug_node_score);
}
inline void set_element_sizes(schedplug_node& node) {
  node.kv_size = sizeof(schedplug_kv);
  node.resource_size = sizeof(schedplug_resource);
  node.taint_size = sizeof(schedplug_taint);
}

using KeyValues = std::vector<std::pair<std::string, std::string>>;
using Resources = std::vector<std::pair<std::string, int64_t>>;

struct TaintData {
  std::string key;
  std::string value;
  std::string effect;
};

struct TolerationData {
  std::string key;
  std::string op;
  std::string value;
  std::string effect;
  std::optional<int64_t> toleration_seconds;
};

// Plain data of a pod, as it arrives (lists in any order).
struct PodData {
  std::string namespace_name;
  std::string name;
  std::string uid;
  KeyValues labels;
  KeyValues annotations;
  int32_t priority = 0;
  Resources requests;
  KeyValues node_selector;
  std::vector<TolerationData> tolerations;
};

// Plain data of a node, as it arrives (lists in any order).
struct NodeData {
  std::string name;
  KeyValues labels;
  KeyValues annotations;
  std::vector<TaintData> taints;
  Resources allocatable;
  Resources requested;
  uint32_t pod_count = 0;
};

// A pod with its view. Sorts labels, annotations, node selector and
// requests by key; a duplicate key keeps the last value.
class PodRecord {
 public:
  explicit PodRecord(PodData data);
  PodRecord(const PodRecord&) = delete;
  PodRecord& operator=(const PodRecord&) = delete;

  const schedplug_pod& view() const { return view_; }
  const PodData& data() const { return data_; }

 private:
  PodData data_;
  std::vector<schedplug_kv> labels_, annotations_, node_selector_;
  std::vector<schedplug_resource> requests_;
  std::vector<schedplug_toleration> tolerations_;
  schedplug_pod view_{};
};

// A node with its view. Same sorting rules as PodRecord.
class NodeRecord {
 public:
  explicit NodeRecord(NodeData data);
  NodeRecord(const NodeRecord&) = delete;
  NodeRecord& operator=(const NodeRecord&) = delete;

  const schedplug_node& view() const { return view_; }
  const NodeData& data() const { return data_; }
  const std::string& name() const { return data_.name; }

 private:
  NodeData data_;
  std::vector<schedplug_kv> labels_, annotations_;
  std::vector<schedplug_taint> taints_;
  std::vector<schedplug_resource> allocatable_, requested_;
  schedplug_node view_{};
};

}  // namespace schedplug::host
