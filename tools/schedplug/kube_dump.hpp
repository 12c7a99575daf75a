// Reading `kubectl get nodes -o yaml` and `kubectl get pods -o yaml` dumps
// for `schedplug simulate`: a List (kind List, NodeList or PodList), single
// objects, or several YAML documents in one file.
//
// Nodes and pods become the host's own NodeData / PodData the way the shim
// converts kube-scheduler's objects
// (integration/scheduler/shim/wire/convert.go): cpu in millicores, memory,
// ephemeral-storage and extended resources as integers rounded up, a pod's
// requests as kube-scheduler's NodeResourcesFit computes them (the larger of
// its init containers and the sum of its containers and sidecars, pod-level
// requests where set, plus overhead).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "host/model/models.hpp"

namespace schedplug::tools {

// A dump that cannot be used. Each problem is a sentence naming the file,
// the document (1-based), the item of a List, the field and the line.
class DumpError : public std::runtime_error {
 public:
  explicit DumpError(std::vector<std::string> problems);
  const std::vector<std::string>& problems() const { return problems_; }

 private:
  std::vector<std::string> problems_;
};

// Wide enough for any quantity in billionths of a unit (GCC and Clang).
__extension__ typedef __int128 nano_t;

// A Kubernetes quantity ("500m", "2", "1.5Gi", "1e3") in billionths of a
// unit, exactly (a value finer than 1n is rounded up). nullopt when `text`
// is not a quantity.
std::optional<nano_t> parse_quantity(std::string_view text);
// Quantity.Value() and Quantity.MilliValue(): rounded up to an integer.
int64_t quantity_value(nano_t nano);
int64_t quantity_milli_value(nano_t nano);

// kube-scheduler's "scalar" resources (extended resources, hugepages-*,
// attachable-volumes-*, *kubernetes.io/*): the ones NodeInfo tracks besides
// cpu, memory, ephemeral-storage and pods.
bool is_scalar_resource(std::string_view name);

// `data` holds everything the shim could send about the object, the
// fields beyond the v1.1 views (plugin.h's SCHEDPLUG_DATA_*) included; what
// a plugin declared is the caller's to keep. A node's pods
// (SCHEDPLUG_DATA_NODE_PODS) are the bound pods of the pod dump, so
// NodeData::pods stays empty here.
struct KubeNode {
  host::NodeData data;
  std::string where;  // "nodes.yaml: document 1, items[3]"
};

struct KubePod {
  host::PodData data;          // requests include pods=1 as the shim sends
  std::string owner_kind;      // the controller's kind ("" without one)
  std::string node_name;       // spec.nodeName ("" while pending)
  std::string scheduler_name;  // spec.schedulerName or default-scheduler
  std::string phase;           // status.phase
  std::string created;         // metadata.creationTimestamp (RFC 3339)
  // The pod's requests as NodeInfo adds them to its node's `requested`
  // (cpu in millicores; no pods entry).
  std::map<std::string, int64_t> node_requests;
  std::string where;
  size_t order = 0;  // position in the dump

  // Succeeded or Failed: kube-scheduler does not see it at all.
  bool terminal() const { return phase == "Succeeded" || phase == "Failed"; }
  std::string key() const { return data.namespace_name + "/" + data.name; }
};

// Throw DumpError listing every problem found (unreadable file, not YAML,
// wrong kind, a field of the wrong type, a bad quantity, duplicate names).
std::vector<KubeNode> read_node_dump(const std::filesystem::path& file);
std::vector<KubePod> read_pod_dump(const std::filesystem::path& file);

// The same from text (`file` only names it in messages).
std::vector<KubeNode> parse_node_dump(const std::string& yaml,
                                      const std::filesystem::path& file);
std::vector<KubePod> parse_pod_dump(const std::string& yaml,
                                    const std::filesystem::path& file);

}  // namespace schedplug::tools
