#include "host/service/convert.hpp"

namespace schedplug::host {
namespace {

template <typename Repeated>
KeyValues key_values(const Repeated& list) {
  KeyValues out;
  out.reserve(static_cast<size_t>(list.size()));
  for (const v1::KeyValue& kv : list) out.emplace_back(kv.key(), kv.value());
  return out;
}

template <typename Repeated>
Resources resources(const Repeated& list) {
  Resources out;
  out.reserve(static_cast<size_t>(list.size()));
  for (const v1::Resource& r : list) out.emplace_back(r.name(), r.value());
  return out;
}

}  // namespace

PodData pod_from_proto(const v1::Pod& pod) {
  PodData out;
  out.namespace_name = pod.namespace_();
  out.name = pod.name();
  out.uid = pod.uid();
  out.labels = key_values(pod.labels());
  out.annotations = key_values(pod.annotations());
  out.priority = pod.priority();
  out.requests = resources(pod.requests());
  out.node_selector = key_values(pod.node_selector());
  out.tolerations.reserve(static_cast<size_t>(pod.tolerations_size()));
  for (const v1::Toleration& t : pod.tolerations()) {
    TolerationData d{t.key(), t.operator_(), t.value(), t.effect(), {}};
    if (t.has_toleration_seconds())
      d.toleration_seconds = t.toleration_seconds();
    out.tolerations.push_back(std::move(d));
  }
  out.node_name = pod.node_name();
  out.nominated_node_name = pod.nominated_node_name();
  out.priority_class_name = pod.priority_class_name();
  out.owners.reserve(static_cast<size_t>(pod.owners_size()));
  for (const v1::OwnerRef& o : pod.owners()) {
    out.owners.push_back({o.kind(), o.name(), o.controller()});
  }
  out.containers.reserve(static_cast<size_t>(pod.containers_size()));
  for (const v1::Container& c : pod.containers()) {
    ContainerData d{c.name(),
                    c.image(),
                    resources(c.requests()),
                    resources(c.limits()),
                    {}};
    d.ports.reserve(static_cast<size_t>(c.ports_size()));
    for (const v1::ContainerPort& p : c.ports()) {
      d.ports.push_back(
          {p.container_port(), p.host_port(), p.protocol(), p.host_ip()});
    }
    out.containers.push_back(std::move(d));
  }
  return out;
}

NodeData node_from_proto(const v1::Node& node) {
  NodeData out;
  out.name = node.name();
  out.labels = key_values(node.labels());
  out.annotations = key_values(node.annotations());
  out.taints.reserve(static_cast<size_t>(node.taints_size()));
  for (const v1::Taint& t : node.taints()) {
    out.taints.push_back({t.key(), t.value(), t.effect()});
  }
  out.allocatable = resources(node.allocatable());
  out.requested = resources(node.requested());
  out.pod_count = node.pod_count();
  out.unschedulable = node.unschedulable();
  out.conditions.reserve(static_cast<size_t>(node.conditions_size()));
  for (const v1::NodeCondition& c : node.conditions()) {
    out.conditions.emplace_back(c.type(), c.status());
  }
  out.capacity = resources(node.capacity());
  out.pods.reserve(static_cast<size_t>(node.pods_size()));
  for (const v1::NodePod& p : node.pods()) {
    out.pods.push_back({p.namespace_(), p.name(), key_values(p.labels()),
                        p.priority(), resources(p.requests()), p.owner_kind()});
  }
  return out;
}

TableDelta delta_from_proto(const v1::NodeTableDelta& delta) {
  TableDelta out;
  out.base_version = delta.base_version();
  out.new_version = delta.new_version();
  out.full = delta.full();
  out.upserts.reserve(static_cast<size_t>(delta.upserts_size()));
  for (const v1::Node& node : delta.upserts()) {
    // NodeRecord sorts and deduplicates; the table keeps a compact copy.
    const NodeRecord record(node_from_proto(node));
    out.upserts.push_back(
        {node.index(), node.generation(), CompactNode::copy_of(record.view())});
  }
  out.removed.assign(delta.removed().begin(), delta.removed().end());
  return out;
}

}  // namespace schedplug::host
