// From schedplug.v1 messages to the host's pod and node models, with the bounds
// every pod and node must keep (docs/security.md, "Limits"), checked once,
// here, while converting.
#pragma once

#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>

#include "host/model/models.hpp"
#include "host/table/node_table.hpp"
#include "schedplug/v1/schedplug.pb.h"

namespace schedplug::host {

// Bounds on the strings and lists of one pod or node. Kubernetes' own
// limits (in comments) with headroom, so a request from a real cluster
// never comes near them; Kubernetes has no count limits on lists, so those
// bounds are far above what real objects carry.
struct FieldLimits {
  // Names: pod, namespace, node, uid, owner, container, priority class,
  // node_name, nominated node. Kubernetes: 253 (DNS subdomain), 63 for
  // namespaces and container names.
  static constexpr size_t kNameBytes = 512;
  // Keys: labels, annotations, node selector, taints, tolerations, resource
  // names, condition types. Kubernetes: 317 (253 prefix + "/" + 63).
  static constexpr size_t kKeyBytes = 512;
  // Values: labels, node selector, taints, tolerations. Kubernetes: 63.
  static constexpr size_t kValueBytes = 256;
  // Container images and the names of a node's images. Kubernetes: none;
  // references are a few hundred bytes.
  static constexpr size_t kImageBytes = 4096;
  // Every other string (operators, effects, protocols, host IPs, condition
  // statuses, owner kinds).
  static constexpr size_t kOtherBytes = 1024;
  // One object's annotations, keys and values together. Kubernetes: 256 KiB.
  static constexpr size_t kAnnotationsTotalBytes = 512 * 1024;
  // Labels, annotations and node selector entries of one object.
  static constexpr size_t kMapEntries = 4096;
  // Taints, tolerations, resources (requests, limits, allocatable,
  // requested, capacity), conditions, owners, containers, volumes, node
  // images and the names of one image.
  static constexpr size_t kListEntries = 1024;
  // Ports of one container (port numbers are 16-bit).
  static constexpr size_t kPorts = 65536;
  // Pods in one node's pod list (kubelet's max-pods; 110 by default).
  static constexpr size_t kPodsOnNode = 65536;
};

// A pod or node over one of the FieldLimits; what() names the object, the
// field, its length and the limit.
class FieldLimitError : public std::invalid_argument {
 public:
  enum class Kind { kString, kList };
  FieldLimitError(Kind kind, const std::string& message)
      : std::invalid_argument(message), kind_(kind) {}
  Kind kind() const { return kind_; }

 private:
  Kind kind_;
};

// Each throws FieldLimitError for a pod or node over FieldLimits.
PodData pod_from_proto(const v1::Pod& pod);
NodeData node_from_proto(const v1::Node& node);
// Builds the nodes of every upsert (outside any lock); the table
// validates the rest when the delta is applied.
TableDelta delta_from_proto(const v1::NodeTableDelta& delta);

// The memory a PodModel of `pod` holds, estimated from its strings and
// lists (what a session keeps for its current pod cycle).
size_t estimated_bytes(const PodData& pod);

}  // namespace schedplug::host
