// The test kit's declared events (SCHEDPLUG_EVENT_*): which cluster events a
// change of a node is, and whether the events a plugin declared requeue a
// pod that such a change lets through. Members of Plugin
// (schedplug/testing/plugin.hpp), defined here. Part of the test kit;
// include schedplug/testing.hpp.
//
// kube-scheduler moves a pod a plugin rejected back to the active queue only
// on a cluster event the plugin registered (the shim registers the declared
// SCHEDPLUG_EVENT_* bits, every event for 0, with no queueing hint). A
// plugin that declares too few leaves such pods Pending until an unrelated
// event or the 5-minute flush of unschedulable pods; the kit finds it by
// filtering a pod on a node before and after a change.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <span>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "schedplug/plugin.h"
#include "schedplug/testing/plugin.hpp"

namespace schedplug::testing {

namespace detail {

inline constexpr std::pair<uint64_t, const char*> kEventNames[] = {
    {SCHEDPLUG_EVENT_NODE_ADD, "SCHEDPLUG_EVENT_NODE_ADD"},
    {SCHEDPLUG_EVENT_NODE_DELETE, "SCHEDPLUG_EVENT_NODE_DELETE"},
    {SCHEDPLUG_EVENT_NODE_UPDATE_LABEL, "SCHEDPLUG_EVENT_NODE_UPDATE_LABEL"},
    {SCHEDPLUG_EVENT_NODE_UPDATE_TAINT, "SCHEDPLUG_EVENT_NODE_UPDATE_TAINT"},
    {SCHEDPLUG_EVENT_NODE_UPDATE_ALLOCATABLE,
     "SCHEDPLUG_EVENT_NODE_UPDATE_ALLOCATABLE"},
    {SCHEDPLUG_EVENT_NODE_UPDATE_ANNOTATION,
     "SCHEDPLUG_EVENT_NODE_UPDATE_ANNOTATION"},
    {SCHEDPLUG_EVENT_NODE_UPDATE_CONDITION,
     "SCHEDPLUG_EVENT_NODE_UPDATE_CONDITION"},
    {SCHEDPLUG_EVENT_POD_ADD, "SCHEDPLUG_EVENT_POD_ADD"},
    {SCHEDPLUG_EVENT_POD_DELETE, "SCHEDPLUG_EVENT_POD_DELETE"},
    {SCHEDPLUG_EVENT_POD_UPDATE_LABEL, "SCHEDPLUG_EVENT_POD_UPDATE_LABEL"},
};

using Labels = std::map<std::string, std::string>;

inline Labels labels_of(schedplug_kv_list list, uint64_t kv_size) {
  Labels out;
  for (uint64_t i = 0; i < list.count; ++i) {
    const auto* kv = static_cast<const schedplug_kv*>(
        schedplug_element_at(list.items, kv_size, i));
    out[runtime::str_of(kv->key)] = runtime::str_of(kv->value);
  }
  return out;
}

inline std::map<std::string, int64_t> resources_of(schedplug_resource_list list,
                                                   uint64_t size) {
  std::map<std::string, int64_t> out;
  for (uint64_t i = 0; i < list.count; ++i) {
    const auto* r = static_cast<const schedplug_resource*>(
        schedplug_element_at(list.items, size, i));
    out[runtime::str_of(r->name)] = r->value;
  }
  return out;
}

// What of a node the cluster events report, read from its view: the fields
// kube-scheduler compares for a node update (NodeSchedulingPropertiesChange:
// labels, taints, spec.unschedulable, allocatable, annotations, condition
// statuses), and the node's pods.
struct EventFacts {
  explicit EventFacts(const schedplug_node& n) {
    const uint64_t kv_size = schedplug_node_kv_size(&n);
    const uint64_t resource_size = schedplug_node_resource_size(&n);
    labels = labels_of(n.labels, kv_size);
    annotations = labels_of(n.annotations, kv_size);
    for (uint64_t i = 0; i < n.taint_count; ++i) {
      const schedplug_taint* t = schedplug_node_taint(&n, i);
      taints.push_back({runtime::str_of(t->key), runtime::str_of(t->value),
                        runtime::str_of(t->effect)});
    }
    unschedulable = schedplug_node_unschedulable(&n) != 0;
    allocatable = resources_of(n.allocatable, resource_size);
    requested = resources_of(n.requested, resource_size);
    pod_count = n.pod_count;
    for (uint64_t i = 0; i < schedplug_node_condition_count(&n); ++i) {
      const schedplug_node_condition* c = schedplug_node_condition_at(&n, i);
      conditions[runtime::str_of(c->type)] = runtime::str_of(c->status);
    }
    for (uint64_t i = 0; i < schedplug_node_pod_list_count(&n); ++i) {
      const schedplug_node_pod* p = schedplug_node_pod_at(&n, i);
      pods[{runtime::str_of(p->namespace_name), runtime::str_of(p->name)}] =
          labels_of(p->labels, kv_size);
    }
  }

  Labels labels, annotations, conditions;  // conditions: type -> status
  std::vector<std::array<std::string, 3>> taints;
  bool unschedulable = false;
  std::map<std::string, int64_t> allocatable, requested;
  uint32_t pod_count = 0;
  std::map<std::pair<std::string, std::string>, Labels> pods;  // their labels
};

// The pod events of a node going from `b` to `a`. The pod lists, when the
// node lists its pods: a pod only after is POD_ADD, only before POD_DELETE,
// with other labels POD_UPDATE_LABEL (other changes of a listed pod, such as
// its requests, are no event a plugin can register). Without lists, the
// counts: fewer pods or less requested is POD_DELETE, more is POD_ADD.
inline uint64_t pod_events(const EventFacts& b, const EventFacts& a) {
  uint64_t out = 0;
  if (!b.pods.empty() || !a.pods.empty()) {
    for (const auto& [key, labels] : a.pods) {
      const auto was = b.pods.find(key);
      if (was == b.pods.end()) {
        out |= SCHEDPLUG_EVENT_POD_ADD;
      } else if (was->second != labels) {
        out |= SCHEDPLUG_EVENT_POD_UPDATE_LABEL;
      }
    }
    for (const auto& [key, labels] : b.pods) {
      if (a.pods.count(key) == 0) out |= SCHEDPLUG_EVENT_POD_DELETE;
    }
    return out;
  }
  const auto compare = [&out](int64_t before, int64_t after) {
    if (after < before) out |= SCHEDPLUG_EVENT_POD_DELETE;
    if (after > before) out |= SCHEDPLUG_EVENT_POD_ADD;
  };
  compare(b.pod_count, a.pod_count);
  std::map<std::string, std::pair<int64_t, int64_t>> requested;
  for (const auto& [r, v] : b.requested) requested[r].first = v;
  for (const auto& [r, v] : a.requested) requested[r].second = v;
  for (const auto& [r, values] : requested) {
    compare(values.first, values.second);
  }
  return out;
}

}  // namespace detail

// The names of SCHEDPLUG_EVENT_* bits, as "SCHEDPLUG_EVENT_NODE_ADD |
// SCHEDPLUG_EVENT_POD_DELETE"; "none" for 0.
inline std::string event_names(uint64_t events) {
  std::string out;
  for (const auto& [bit, name] : detail::kEventNames) {
    if ((events & bit) != 0)
      out += (out.empty() ? "" : " | ") + std::string(name);
  }
  if ((events & ~SCHEDPLUG_EVENT_ALL) != 0) {
    std::ostringstream unknown;
    unknown << "0x" << std::hex << (events & ~SCHEDPLUG_EVENT_ALL);
    out += (out.empty() ? "" : " | ") + unknown.str();
  }
  return out.empty() ? "none" : out;
}

// The SCHEDPLUG_EVENT_* kinds kube-scheduler sees when node `before` becomes
// `after` (two states of one node, as the host would send them): a changed
// label, taint, allocatable, annotation or condition status is
// NODE_UPDATE_LABEL, _TAINT (also spec.unschedulable turning false),
// _ALLOCATABLE, _ANNOTATION, _CONDITION; the node's pods as pod_events says.
// Capacity, images and spec.unschedulable turning true are no event.
inline uint64_t change_events(const schedplug_node& before,
                              const schedplug_node& after) {
  const detail::EventFacts b(before), a(after);
  uint64_t out = detail::pod_events(b, a);
  if (a.labels != b.labels) out |= SCHEDPLUG_EVENT_NODE_UPDATE_LABEL;
  if (a.taints != b.taints || (b.unschedulable && !a.unschedulable)) {
    out |= SCHEDPLUG_EVENT_NODE_UPDATE_TAINT;
  }
  if (a.allocatable != b.allocatable) {
    out |= SCHEDPLUG_EVENT_NODE_UPDATE_ALLOCATABLE;
  }
  if (a.annotations != b.annotations) {
    out |= SCHEDPLUG_EVENT_NODE_UPDATE_ANNOTATION;
  }
  if (a.conditions != b.conditions) {
    out |= SCHEDPLUG_EVENT_NODE_UPDATE_CONDITION;
  }
  return out;
}
inline uint64_t change_events(const Node& before, const Node& after) {
  return change_events(before.view(), after.view());
}

inline uint64_t Plugin::requeue_events() const {
  // As the shim registers them (integration/scheduler/shim/events.go).
  const uint64_t declared = settings_.events;
  if (declared == 0 || (declared & ~SCHEDPLUG_EVENT_ALL) != 0) {
    return SCHEDPLUG_EVENT_ALL;
  }
  return declared;
}

inline std::string Plugin::requeue_problem(const Pod& pod, const Node& before,
                                           const Node& after) const {
  return requeue_check(pod, &before, after);
}

inline std::string Plugin::requeue_problem(const Pod& pod,
                                           const Node& added) const {
  return requeue_check(pod, nullptr, added);
}

inline std::string Plugin::requeue_check(const Pod& pod, const Node* before,
                                         const Node& after) const {
  if (before != nullptr && before->name() != after.name()) {
    return "before is node \"" + before->name() + "\" and after is node \"" +
           after.name() +
           "\"; give two states of one node (the same name), or check a "
           "node added on its own";
  }
  const std::string node =
      (before == nullptr ? "the added node \"" : "node \"") + after.name() +
      "\"";
  const std::string where = "pod \"" + pod.name() + "\" on " + node;
  Verdict rejected;
  if (before != nullptr) {
    const Cycle was = run(pod, {*before});
    if (!was.error.empty()) {
      return "on " + node + " before the change the cycle failed: " + was.error;
    }
    rejected = was.nodes.front().filter;
    if (!rejects(rejected)) {
      return name_ + "'s filter does not reject " + where +
             " before the change (" + said(rejected) +
             "), so no event is needed to requeue it; give as before a node "
             "the plugin rejects the pod on";
    }
  }
  const std::string then = before == nullptr ? "" : " after the change";
  const Cycle now = run(pod, {after});
  if (!now.error.empty()) {
    return "on " + node + then + " the cycle failed: " + now.error;
  }
  const Verdict& passed = now.nodes.front().filter;
  if (rejects(passed)) {
    return name_ + "'s filter " +
           (before == nullptr ? "rejects " : "still rejects ") + where + then +
           " (" + said(passed) + "); give " +
           (before == nullptr ? "a node the plugin passes the pod on"
                              : "as after the node changed so that the "
                                "plugin passes the pod");
  }
  if (before == nullptr) {
    return events_problem(pod.name(), after.name(), nullptr, passed,
                          SCHEDPLUG_EVENT_NODE_ADD);
  }
  return events_problem(pod.name(), after.name(), &rejected, passed,
                        change_events(*before, after));
}

inline Cycle Plugin::run_after(const Pod& pod, std::span<const Node> before,
                               std::span<const Node> nodes) const {
  Cycle cycle = run(pod, nodes);
  if (!cycle.error.empty()) return cycle;
  const Cycle was = run(pod, before);
  if (!was.error.empty()) {
    cycle.error = "before the change: " + was.error;
    return cycle;
  }
  const bool rejected_somewhere =
      std::any_of(was.nodes.begin(), was.nodes.end(),
                  [](const NodeResult& n) { return rejects(n.filter); });
  for (size_t i = 0; i < nodes.size() && cycle.error.empty(); ++i) {
    const NodeResult& now = cycle.nodes[i];
    if (rejects(now.filter)) continue;
    const auto earlier =
        std::find_if(before.begin(), before.end(),
                     [&](const Node& n) { return n.name() == now.node; });
    if (earlier == before.end()) {
      if (rejected_somewhere) {
        cycle.error = events_problem(pod.name(), now.node, nullptr, now.filter,
                                     SCHEDPLUG_EVENT_NODE_ADD);
      }
      continue;
    }
    const Verdict& then = was.nodes[earlier - before.begin()].filter;
    if (rejects(then)) {
      cycle.error = events_problem(pod.name(), now.node, &then, now.filter,
                                   change_events(*earlier, nodes[i]));
    }
  }
  return cycle;
}

inline std::string Plugin::events_problem(const std::string& pod,
                                          const std::string& node,
                                          const Verdict* before,
                                          const Verdict& after,
                                          uint64_t change) const {
  const std::string turned =
      before == nullptr ? "passes pod \"" + pod + "\" on the added node \"" +
                              node + "\" (" + said(after) + ")"
                        : "rejected pod \"" + pod + "\" on node \"" + node +
                              "\" before the change (" + said(*before) +
                              ") and passes it after (" + said(after) + ")";
  const std::string stays =
      "the pod would stay Pending until an unrelated event or the 5-minute "
      "flush of unschedulable pods";
  if (change == 0) {
    return name_ + "'s filter " + turned +
           ", but the change is none of the cluster events kube-scheduler "
           "requeues a pod on (SCHEDPLUG_EVENT_*: a node's labels, taints, "
           "allocatable, annotations or condition statuses changing, "
           "spec.unschedulable turning false, a pod added to, deleted from "
           "or relabelled on the node), so whatever " +
           name_ + " declares " + stays +
           "; base the filter's verdict on what those events report (e.g. "
           "allocatable, not capacity)";
  }
  if ((change & requeue_events()) != 0) return {};
  const bool one = (change & (change - 1)) == 0;
  return name_ + " declares the events " + event_names(settings_.events) +
         " (kEvents), but its filter " + turned +
         (before == nullptr ? ", and a node added is "
                            : ", and the change is ") +
         event_names(change) +
         (one ? ", which it does not declare" : ", none of which it declares") +
         ": kube-scheduler requeues a pod " + name_ +
         " rejected only on the events it declared, so " + stays + "; add " +
         (one ? "it" : "the one that let the pod pass") +
         " to kEvents, or declare 0 (every event)";
}

}  // namespace schedplug::testing
