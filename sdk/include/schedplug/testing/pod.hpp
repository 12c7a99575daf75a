// The test kit's pod builder (Pod) and the view it gives a plugin. Part of
// the test kit; include schedplug/testing.hpp.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "schedplug/plugin.h"
#include "schedplug/runtime.hpp"
#include "schedplug/testing/elements.hpp"

namespace schedplug::testing {

// A pod, built in a line: Pod("web").label("app", "web").request("cpu", 250).
// Resources are in canonical units (plugin.h): cpu in millicores, memory
// and ephemeral-storage in bytes, others as counts. view() is valid until
// the Pod changes or is destroyed, and safe to read from several threads.
class Pod {
 public:
  explicit Pod(std::string name = "pod",
               std::string namespace_name = "default") {
    d_.name = std::move(name);
    d_.namespace_name = std::move(namespace_name);
    rebuild();
  }
  Pod(const Pod& other) : d_(other.d_) { rebuild(); }
  Pod& operator=(const Pod& other) {
    d_ = other.d_;
    rebuild();
    return *this;
  }

  Pod& uid(std::string v) {
    return change([&] { d_.uid = std::move(v); });
  }
  Pod& label(std::string k, std::string v) {
    return change([&] { d_.labels[std::move(k)] = std::move(v); });
  }
  Pod& annotation(std::string k, std::string v) {
    return change([&] { d_.annotations[std::move(k)] = std::move(v); });
  }
  Pod& node_selector(std::string k, std::string v) {
    return change([&] { d_.selector[std::move(k)] = std::move(v); });
  }
  Pod& request(std::string resource, int64_t value) {
    return change([&] { d_.requests[std::move(resource)] = value; });
  }
  Pod& toleration(Toleration t) {
    return change([&] { d_.tolerations.push_back(std::move(t)); });
  }
  Pod& priority(int32_t p) {
    return change([&] { d_.priority = p; });
  }
  // Data a plugin declares (SCHEDPLUG_DATA_*, ABI v1.2). A Plugin shows
  // the plugin only the data it declared (the rest empty), as schedplug-host
  // does when no other plugin of the profile declared more.
  Pod& node_name(std::string v) {
    return change([&] { d_.node_name = std::move(v); });
  }
  Pod& nominated_node_name(std::string v) {
    return change([&] { d_.nominated_node_name = std::move(v); });
  }
  Pod& priority_class_name(std::string v) {
    return change([&] { d_.priority_class_name = std::move(v); });
  }
  // Owner references, in the order given.
  Pod& owner(std::string kind, std::string name, bool controller = true) {
    return change([&] {
      d_.owners.push_back({std::move(kind), std::move(name), controller});
    });
  }
  // App containers in spec order; a container with the name of one already
  // added replaces it (names are unique in a pod).
  Pod& container(Container c) {
    return change([&] {
      for (Container& have : d_.containers) {
        if (have.name_ == c.name_) {
          have = std::move(c);
          return;
        }
      }
      d_.containers.push_back(std::move(c));
    });
  }

  // ---- ABI v1.3 data (SCHEDPLUG_DATA_POD_VOLUMES, ...), as for v1.2 ----
  // A volume: `source` is its source's key in the pod spec
  // ("persistentVolumeClaim", "ephemeral", "configMap", ...), `claim_name`
  // its PVC ("<pod>-<volume>" for an ephemeral volume), else empty.
  Pod& volume(std::string name, std::string source, std::string claim_name = {},
              bool read_only = false) {
    return change([&] {
      d_.v13.volumes.push_back({std::move(name), std::move(source),
                                std::move(claim_name), read_only});
    });
  }

  Pod& node_affinity_required(NodeTerm t) {
    return change([&] {
      d_.v13.node_affinity[0].push_back({0, std::move(t)});
    });
  }
  Pod& node_affinity_preferred(int32_t weight, NodeTerm t) {
    return change([&] {
      d_.v13.node_affinity[1].push_back({weight, std::move(t)});
    });
  }
  Pod& topology_spread(SpreadConstraint c) {
    return change([&] { d_.v13.spread.push_back(std::move(c)); });
  }
  Pod& pod_affinity_required(AffinityTerm t) {
    return affinity(SCHEDPLUG_POD_AFFINITY_REQUIRED, 0, std::move(t));
  }
  Pod& pod_affinity_preferred(int32_t weight, AffinityTerm t) {
    return affinity(SCHEDPLUG_POD_AFFINITY_PREFERRED, weight, std::move(t));
  }
  Pod& pod_anti_affinity_required(AffinityTerm t) {
    return affinity(SCHEDPLUG_POD_ANTI_AFFINITY_REQUIRED, 0, std::move(t));
  }
  Pod& pod_anti_affinity_preferred(int32_t weight, AffinityTerm t) {
    return affinity(SCHEDPLUG_POD_ANTI_AFFINITY_PREFERRED, weight,
                    std::move(t));
  }

  const std::string& name() const { return d_.name; }
  const schedplug_pod& view() const { return view_; }

 private:
  struct Data {
    std::string name, namespace_name, uid = "uid-1";
    std::map<std::string, std::string> labels, annotations, selector;
    std::map<std::string, int64_t> requests;
    std::vector<Toleration> tolerations;
    int32_t priority = 0;
    std::string node_name, nominated_node_name, priority_class_name;
    std::vector<Owner> owners;
    std::vector<Container> containers;
    // ABI v1.3 data.
    struct V13 {
      struct Volume {
        std::string name, source, claim_name;
        bool read_only = false;
      };
      std::vector<Volume> volumes;
      std::vector<std::pair<int32_t, NodeTerm>> node_affinity[2];
      std::vector<SpreadConstraint> spread;
      std::vector<std::pair<int32_t, AffinityTerm>> pod_affinity[4];
    } v13;
  };
  template <class F>
  Pod& change(F&& f) {
    f();
    rebuild();
    return *this;
  }
  void rebuild() {
    view_ = schedplug_pod{};
    view_.struct_size = sizeof(schedplug_pod);
    runtime::set_element_sizes(view_);
    view_.namespace_name = detail::str(d_.namespace_name);
    view_.name = detail::str(d_.name);
    view_.uid = detail::str(d_.uid);
    view_.priority = d_.priority;
    view_.node_name = detail::str(d_.node_name);
    view_.nominated_node_name = detail::str(d_.nominated_node_name);
    view_.priority_class_name = detail::str(d_.priority_class_name);
    detail::fill(d_.labels, kv_[0], view_.labels);
    detail::fill(d_.annotations, kv_[1], view_.annotations);
    detail::fill(d_.selector, kv_[2], view_.node_selector);
    detail::fill(d_.requests, resources_, view_.requests);
    tolerations_.clear();
    for (const auto& t : d_.tolerations) {
      tolerations_.push_back({detail::str(t.key), detail::str(t.op),
                              detail::str(t.value), detail::str(t.effect),
                              t.seconds.has_value() ? 1 : 0,
                              t.seconds.value_or(0)});
    }
    view_.tolerations = tolerations_.data();
    view_.toleration_count = tolerations_.size();
    // v1.2 lists as the host builds them: NULL when empty, containers'
    // requests and limits sorted by name.
    owners_.clear();
    for (const Owner& o : d_.owners) {
      owners_.push_back(
          {detail::str(o.kind), detail::str(o.name), o.controller ? 1 : 0});
    }
    view_.owners = owners_.empty() ? nullptr : owners_.data();
    view_.owner_count = owners_.size();
    containers_.clear();
    container_resources_.assign(2 * d_.containers.size(), {});
    container_ports_.assign(d_.containers.size(), {});
    for (size_t i = 0; i < d_.containers.size(); ++i) {
      const Container& c = d_.containers[i];
      schedplug_container v{};
      v.name = detail::str(c.name_);
      v.image = detail::str(c.image_);
      detail::fill(c.requests_, container_resources_[2 * i], v.requests);
      detail::fill(c.limits_, container_resources_[2 * i + 1], v.limits);
      auto& ports = container_ports_[i];
      for (const ContainerPort& p : c.ports_) {
        ports.push_back({p.container_port, p.host_port, detail::str(p.protocol),
                         detail::str(p.host_ip)});
      }
      v.ports = ports.empty() ? nullptr : ports.data();
      v.port_count = ports.size();
      containers_.push_back(v);
    }
    view_.containers = containers_.empty() ? nullptr : containers_.data();
    view_.container_count = containers_.size();
    rebuild_v13();
  }
  void rebuild_v13() {
    volumes_.clear();
    for (const auto& v : d_.v13.volumes) {
      volumes_.push_back({detail::str(v.name), detail::str(v.source),
                          detail::str(v.claim_name), v.read_only ? 1 : 0});
    }
    view_.volumes = volumes_.empty() ? nullptr : volumes_.data();
    view_.volume_count = volumes_.size();
    terms_.clear();
    for (int k = 0; k < 2; ++k) {
      node_terms_[k].clear();
      for (const auto& [weight, t] : d_.v13.node_affinity[k]) {
        node_terms_[k].push_back(
            {weight, terms_.requirements(t.match_expressions),
             t.match_expressions.size(), terms_.requirements(t.match_fields),
             t.match_fields.size()});
      }
    }
    const auto or_null = [](const auto& v) {
      return v.empty() ? nullptr : v.data();
    };
    view_.node_affinity_required = or_null(node_terms_[0]);
    view_.node_affinity_required_count = node_terms_[0].size();
    view_.node_affinity_preferred = or_null(node_terms_[1]);
    view_.node_affinity_preferred_count = node_terms_[1].size();
    spread_.clear();
    for (const auto& c : d_.v13.spread) {
      spread_.push_back(
          {c.max_skew, c.min_domains, detail::str(c.topology_key),
           detail::str(c.when_unsatisfiable), terms_.selector(c.label_selector),
           detail::str(c.node_affinity_policy),
           detail::str(c.node_taints_policy),
           terms_.strings(c.match_label_keys), c.match_label_keys.size()});
    }
    view_.topology_spread = spread_.empty() ? nullptr : spread_.data();
    view_.topology_spread_count = spread_.size();
    for (int k = 0; k < 4; ++k) {
      affinity_[k].clear();
      for (const auto& [weight, t] : d_.v13.pod_affinity[k]) {
        affinity_[k].push_back(
            {weight, detail::str(t.topology_key),
             terms_.selector(t.label_selector), terms_.strings(t.namespaces),
             t.namespaces.size(), terms_.selector(t.namespace_selector),
             terms_.strings(t.match_label_keys), t.match_label_keys.size(),
             terms_.strings(t.mismatch_label_keys),
             t.mismatch_label_keys.size()});
      }
    }
    view_.pod_affinity_required = or_null(affinity_[0]);
    view_.pod_affinity_required_count = affinity_[0].size();
    view_.pod_affinity_preferred = or_null(affinity_[1]);
    view_.pod_affinity_preferred_count = affinity_[1].size();
    view_.pod_anti_affinity_required = or_null(affinity_[2]);
    view_.pod_anti_affinity_required_count = affinity_[2].size();
    view_.pod_anti_affinity_preferred = or_null(affinity_[3]);
    view_.pod_anti_affinity_preferred_count = affinity_[3].size();
  }
  Pod& affinity(int32_t which, int32_t weight, AffinityTerm t) {
    return change([&] {
      d_.v13.pod_affinity[which].push_back({weight, std::move(t)});
    });
  }

  Data d_;
  schedplug_pod view_{};
  // v1.3
  std::vector<schedplug_volume> volumes_;
  detail::TermViews terms_;
  std::vector<schedplug_node_selector_term> node_terms_[2];
  std::vector<schedplug_topology_spread_constraint> spread_;
  std::vector<schedplug_pod_affinity_term> affinity_[4];
  std::vector<schedplug_kv> kv_[3];
  std::vector<schedplug_resource> resources_;
  std::vector<schedplug_toleration> tolerations_;
  std::vector<schedplug_owner> owners_;
  std::vector<schedplug_container> containers_;
  std::vector<std::vector<schedplug_resource>> container_resources_;
  std::vector<std::vector<schedplug_container_port>> container_ports_;
};

}  // namespace schedplug::testing
