// DeviceShare: pods ask for k of a node's devices; the plugin picks which
// ones and writes them on the pod.
//
//   node label       devices.schedplug.dev/count: "4"       devices 0..3
//   pod annotation   devices.schedplug.dev/request: "2"     needs 2 of them
//   written by PreBind, for the node's device plugin:
//   pod label        devices.schedplug.dev/assigned: "0-3"
//   pod annotation   devices.schedplug.dev/assigned: "0,3"
//
// Filter counts the free devices (the node's pods' assigned labels and the
// plugin's reservations in flight), Score packs, Reserve picks the lowest
// free indices, Unreserve gives them back, PreBind writes them. The
// bookkeeping is device_ledger.hpp's; this file adapts it to the hooks.
#include <schedplug/plugin.hpp>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "device_ledger.hpp"

namespace {

using device_share::kAssignedKey;
using device_share::kCountLabel;
using device_share::kRequestAnnotation;

// What a node's pods say about its devices (their assigned labels).
device_share::NodeDevices DevicesOf(const schedplug::Node& node, int count) {
  device_share::NodeDevices devices(count);
  for (size_t i = 0; i < node.pod_list_count(); ++i) {
    const schedplug::NodePod p = node.pod_list(i);
    devices.AddPod(p.namespace_name(), p.name(), p.label(kAssignedKey));
  }
  return devices;
}

std::string PodName(const schedplug::Pod& pod) {
  return std::string(pod.namespace_name()) + "/" + std::string(pod.name());
}

class DeviceShare {
 public:
  // Filter reads the node's pods (their assigned labels).
  static constexpr uint64_t kData = SCHEDPLUG_DATA_NODE_PODS;
  // After which a pod rejected for too few devices may fit: a pod deleted
  // (its devices freed; kube-scheduler sends the same event when a binding
  // fails and its reservation is undone), a node added, a node's count
  // label changed.
  static constexpr uint64_t kEvents = SCHEDPLUG_EVENT_POD_DELETE |
                                      SCHEDPLUG_EVENT_NODE_ADD |
                                      SCHEDPLUG_EVENT_NODE_UPDATE_LABEL;
  static constexpr schedplug_normalize_policy kNormalize =
      SCHEDPLUG_NORMALIZE_LINEAR;

  explicit DeviceShare(const schedplug::Args& args)
      : ledger_(std::make_unique<device_share::Ledger>()) {
    args.allow_only({"startupSettle"});
    settle_ = args.duration("startupSettle", std::chrono::seconds(10));
  }

  // The pod's request, parsed once per cycle.
  struct PodState {
    int request = 0;  // 0: the annotation is malformed
  };

  schedplug::Status BeginPod(const schedplug::Pod& pod, PodState& state,
                             schedplug::Gates&) const {
    const auto value = pod.annotation(kRequestAnnotation);
    if (!value.has_value()) return schedplug::Status::Skip();
    state.request = device_share::ParseRequest(*value).value_or(0);
    return schedplug::Status::Success();
  }

  schedplug::Status Filter(const schedplug::Pod&, const schedplug::Node& node,
                           const PodState& state) const {
    if (state.request == 0) {
      return schedplug::Status::UnschedulableAndUnresolvable(bad_request_);
    }
    const auto label = node.label(kCountLabel);
    if (!label.has_value()) {
      return schedplug::Status::UnschedulableAndUnresolvable(no_devices_);
    }
    const auto count = device_share::ParseCount(*label);
    if (!count.has_value()) {
      return schedplug::Status::UnschedulableAndUnresolvable(bad_count_);
    }
    if (*count < state.request) {
      // Evicting pods cannot help.
      return schedplug::Status::UnschedulableAndUnresolvable(too_small_);
    }
    const auto used = ledger_->Used(node.name(), DevicesOf(node, *count));
    if (*count - static_cast<int>(used.count()) < state.request) {
      return schedplug::Status::Unschedulable(too_few_free_);
    }
    return schedplug::Status::Success();
  }

  // Packs: the more devices in use once the pod is placed, the better.
  schedplug::Status Score(const schedplug::Pod&, const schedplug::Node& node,
                          const PodState& state, int64_t& score) const {
    const auto count =
        device_share::ParseCount(node.label(kCountLabel).value_or(""));
    if (!count.has_value()) {
      score = 0;
      return schedplug::Status::Success();
    }
    const auto used = ledger_->Used(node.name(), DevicesOf(node, *count));
    score = static_cast<int64_t>(used.count()) + state.request;
    return schedplug::Status::Success();
  }

  schedplug::Status Reserve(const schedplug::Pod& pod,
                            const schedplug::Node& node) {
    const auto value = pod.annotation(kRequestAnnotation);
    // Not a device pod: nothing to take (plugin.h allows no Skip here).
    if (!value.has_value()) return schedplug::Status::Success();
    const auto request = device_share::ParseRequest(*value);
    if (!request.has_value()) {
      return schedplug::Status::Error(std::string(bad_request_.view()));
    }
    if (ledger_->Age() < settle_) {
      // Errors go to kube-scheduler's backoff queue: retried in seconds.
      return schedplug::Status::Error(settling_);
    }
    const auto count =
        device_share::ParseCount(node.label(kCountLabel).value_or(""));
    if (!count.has_value()) {
      return schedplug::Status::Unschedulable(no_devices_);
    }
    const auto picked =
        ledger_->Reserve({pod.uid(), pod.namespace_name(), pod.name()},
                         node.name(), DevicesOf(node, *count), *request);
    if (!picked.has_value()) {
      // Another pod took them since Filter.
      return schedplug::Status::Unschedulable(too_few_free_);
    }
    return schedplug::Status::Success();
  }

  void Unreserve(const schedplug::Pod& pod, const schedplug::Node&) {
    ledger_->Unreserve(pod.uid());
  }

  schedplug::Status PreBind(const schedplug::Pod& pod,
                            const schedplug::Node& node,
                            schedplug::PodPatch& patch) {
    if (!pod.annotation(kRequestAnnotation).has_value()) {
      return schedplug::Status::Success();  // nothing to write
    }
    const auto indices = ledger_->PreBind(pod.uid());
    if (!indices.has_value()) {
      return schedplug::Status::Error(
          "DeviceShare holds no devices for pod " + PodName(pod) + " on " +
          std::string(node.name()) +
          " (was schedplug-host restarted since its Reserve?); "
          "kube-scheduler will schedule the pod again");
    }
    schedplug::Status s =
        patch.SetLabel(kAssignedKey, device_share::AssignedLabel(*indices));
    if (!s.ok()) return s;
    return patch.SetAnnotation(kAssignedKey,
                               device_share::AssignedAnnotation(*indices));
  }

 private:
  std::unique_ptr<device_share::Ledger> ledger_;
  // How long after start Reserve waits for the bindings in flight of an
  // earlier instance to show on their nodes (Ledger::Age).
  std::chrono::nanoseconds settle_;
  schedplug::Reason too_few_free_{"node(s) had too few free devices"};
  schedplug::Reason too_small_{
      "node(s) had fewer devices than the pod requests"};
  schedplug::Reason no_devices_{"node(s) had no devices (label " +
                                std::string(kCountLabel) + ")"};
  schedplug::Reason bad_count_{"node(s) had an invalid " +
                               std::string(kCountLabel) +
                               " label (want a whole number from 0 to " +
                               std::to_string(device_share::kMaxDevices) + ")"};
  std::string settling_{
      "DeviceShare hands out no devices in its first seconds (arg "
      "startupSettle), until the bindings in flight before it started show "
      "on their nodes; kube-scheduler retries the pod"};
  schedplug::Reason bad_request_{"pod's annotation " +
                                 std::string(kRequestAnnotation) +
                                 " must be a whole number from 1 to " +
                                 std::to_string(device_share::kMaxRequest)};
};

}  // namespace

SCHEDPLUG_PLUGIN(DeviceShare, "DeviceShare", "1.0.0")
