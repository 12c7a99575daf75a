// DeviceShare's bookkeeping, without the plugin API: which device indices of
// a node are in use, and the reservations the plugin made that the
// scheduler's view of the node does not show yet.
//
// A node has `count` devices, indices 0..count-1 (node label
// devices.schedplug.dev/count). A pod that asks for k of them (annotation
// devices.schedplug.dev/request) gets the k lowest free indices at Reserve;
// PreBind writes them on the pod as the label
// devices.schedplug.dev/assigned: "0-3-5" (and the same annotation with
// commas). So the indices in use on a node are
//
//   the assigned labels of the node's pods  UNION  the live reservations
//
// and a restarted plugin, which has no reservations, rebuilds the first
// part from the pods alone. A reservation lives until Unreserve, until the
// node's pods show the pod (namespace/name) with exactly its indices, or
// until it expires: kTtl after PreBind (a pod deleted before the
// scheduler's view showed it bound), or kPermitMax + kTtl after Reserve (a
// scheduler that went away between Reserve and PreBind).
//
// A reservation past PreBind counts only while the node shows its pod:
// kube-scheduler keeps a pod on its node from Reserve on (assumed, then
// bound), so a node without it is one the pod was deleted from, or a copy
// of the node without the pod (a preemption dry run asking "would the pod
// fit if these were evicted?"); its devices are free in both. Such a
// reservation is kept (the copy is not the node) until it expires. Before
// PreBind a reservation always counts: the pods of one pod-group cycle are
// reserved on one snapshot, which does not show the members reserved
// before.
//
// Thread safety: every member of Ledger may be called from any thread; one
// lock guards the reservations (shared for reading, exclusive to change).
#pragma once

#include <bitset>
#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <vector>

namespace device_share {

inline constexpr std::string_view kCountLabel = "devices.schedplug.dev/count";
inline constexpr std::string_view kRequestAnnotation =
    "devices.schedplug.dev/request";
// The label ("0-3-5") and the annotation ("0,3,5") PreBind writes.
inline constexpr std::string_view kAssignedKey =
    "devices.schedplug.dev/assigned";

// The most devices a node may declare, and the most a pod may ask for. With
// indices below 100 and at most 16 of them, the assigned label stays within
// the 63 bytes Kubernetes allows a label value (16 * 3 - 1 = 47).
inline constexpr int kMaxDevices = 64;
inline constexpr int kMaxRequest = 16;

using DeviceSet = std::bitset<kMaxDevices>;

// A whole number written in ASCII digits only (no sign, no spaces), in
// [min, max]; nullopt for anything else, including numbers too large for
// an int.
std::optional<int> ParseNumber(std::string_view text, int min, int max);

// The node's device count (0..kMaxDevices), nullopt when malformed.
inline std::optional<int> ParseCount(std::string_view label) {
  return ParseNumber(label, 0, kMaxDevices);
}
// A pod's request (1..kMaxRequest), nullopt when malformed.
inline std::optional<int> ParseRequest(std::string_view annotation) {
  return ParseNumber(annotation, 1, kMaxRequest);
}

// The indices of an assigned label ("0-3-5"), nullopt when the label is not
// a '-'-separated list of numbers below kMaxDevices. A repeated index counts
// once.
std::optional<DeviceSet> ParseAssigned(std::string_view label);

// The label value ("0-3-5") and the annotation value ("0,3,5") for indices.
std::string AssignedLabel(const std::vector<int>& indices);
std::string AssignedAnnotation(const std::vector<int>& indices);

// What a node's pods say about its devices, built from the node view once
// per call (Filter, Score, Reserve).
class NodeDevices {
 public:
  explicit NodeDevices(int count) : count_(count) {}

  // A pod on the node and its assigned label, if it has one. A label that
  // does not parse marks nothing: the plugin cannot know which devices such
  // a pod holds (it did not write the label). Indices at or above the
  // node's count are left out: the node does not have them (its count
  // label was lowered).
  void AddPod(std::string_view namespace_name, std::string_view name,
              std::optional<std::string_view> assigned_label);

  int count() const { return count_; }
  // The devices that exist on the node.
  DeviceSet present() const;
  // The union of the node's pods' assigned labels.
  const DeviceSet& labelled() const { return labelled_; }
  // True when the node shows pod namespace/name with exactly `devices`.
  bool Shows(std::string_view namespace_name, std::string_view name,
             const DeviceSet& devices) const;
  // True when the node shows pod namespace/name, labelled or not.
  bool Has(std::string_view namespace_name, std::string_view name) const;

 private:
  struct Pod {
    std::string_view namespace_name, name;
    std::optional<DeviceSet> devices;  // its readable label
  };
  const Pod* Find(std::string_view namespace_name, std::string_view name) const;
  int count_;
  DeviceSet labelled_;
  std::vector<Pod> pods_;
};

// The pod a reservation is for.
struct PodKey {
  std::string_view uid;
  std::string_view namespace_name;
  std::string_view name;
};

class Ledger {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr Clock::duration kTtl = std::chrono::minutes(10);
  // kube-scheduler's longest Permit wait, between Reserve and PreBind.
  static constexpr Clock::duration kPermitMax = std::chrono::minutes(15);

  explicit Ledger(std::function<Clock::time_point()> now = &Clock::now);

  // The devices in use on `node`: its pods' labels and the live
  // reservations on it. Drops the reservations the node shows.
  DeviceSet Used(std::string_view node, const NodeDevices& devices);

  // Reserves the `k` lowest free devices of `node` for `pod` and returns
  // them, or nullopt when fewer than k are free (nothing is reserved then).
  // A reservation the pod held already (on any node) is released first.
  std::optional<std::vector<int>> Reserve(const PodKey& pod,
                                          std::string_view node,
                                          const NodeDevices& devices, int k);

  // Releases the pod's reservation; nothing when it has none.
  void Unreserve(std::string_view uid);

  // The pod's reserved indices, starting the reservation's kTtl; nullopt
  // when the pod holds none.
  std::optional<std::vector<int>> PreBind(std::string_view uid);

  // Live reservations (for tests and logs).
  size_t InFlight() const;

  // How long ago the ledger was made. A new ledger (a restarted host, a
  // reloaded plugin) does not know the pods whose PreBind an earlier one
  // answered and whose binding the scheduler's view does not show yet:
  // they sit on their node without the label. The plugin hands out no
  // devices until such bindings have had time to arrive.
  Clock::duration Age() const { return now_() - start_; }

 private:
  struct Reservation {
    std::string namespace_name, name, node;
    DeviceSet devices;
    Clock::time_point expires;
    bool prebound = false;
  };
  // Reservations on `node` that are live at `now`, ORed into `used`; the
  // uids of those the node shows are appended to `seen`.
  void CollectLocked(std::string_view node, const NodeDevices& devices,
                     Clock::time_point now, DeviceSet& used,
                     std::vector<std::string>* seen) const;
  // Drops the reservations of `seen` that `node` still shows, and the
  // expired ones.
  void DropSeenAndExpiredLocked(std::string_view node,
                                const NodeDevices& devices,
                                const std::vector<std::string>& seen,
                                Clock::time_point now);

  std::function<Clock::time_point()> now_;
  Clock::time_point start_;
  mutable std::shared_mutex mu_;
  // By pod uid. Few entries: only the pods between Reserve and the node
  // showing them bound.
  std::map<std::string, Reservation, std::less<>> reservations_;
};

}  // namespace device_share
