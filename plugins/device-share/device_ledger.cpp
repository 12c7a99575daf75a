#include "device_ledger.hpp"

#include <charconv>
#include <mutex>
#include <system_error>
#include <utility>

namespace device_share {

std::optional<int> ParseNumber(std::string_view text, int min, int max) {
  if (text.empty()) return std::nullopt;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
  }
  int value = 0;
  const auto [end, ec] =
      std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) {
    return std::nullopt;  // too large for an int
  }
  if (value < min || value > max) return std::nullopt;
  return value;
}

std::optional<DeviceSet> ParseAssigned(std::string_view label) {
  DeviceSet out;
  size_t start = 0;
  while (true) {
    const size_t dash = label.find('-', start);
    const std::string_view token = label.substr(
        start,
        dash == std::string_view::npos ? std::string_view::npos : dash - start);
    const auto index = ParseNumber(token, 0, kMaxDevices - 1);
    if (!index.has_value()) return std::nullopt;
    out.set(static_cast<size_t>(*index));
    if (dash == std::string_view::npos) return out;
    start = dash + 1;
  }
}

namespace {

std::string Join(const std::vector<int>& indices, char separator) {
  std::string out;
  for (size_t i = 0; i < indices.size(); ++i) {
    if (i > 0) out.push_back(separator);
    out += std::to_string(indices[i]);
  }
  return out;
}

std::vector<int> Indices(const DeviceSet& set) {
  std::vector<int> out;
  for (size_t i = 0; i < set.size(); ++i) {
    if (set.test(i)) out.push_back(static_cast<int>(i));
  }
  return out;
}

}  // namespace

std::string AssignedLabel(const std::vector<int>& indices) {
  return Join(indices, '-');
}

std::string AssignedAnnotation(const std::vector<int>& indices) {
  return Join(indices, ',');
}

DeviceSet NodeDevices::present() const {
  DeviceSet all;
  for (int i = 0; i < count_; ++i) all.set(static_cast<size_t>(i));
  return all;
}

void NodeDevices::AddPod(std::string_view namespace_name, std::string_view name,
                         std::optional<std::string_view> assigned_label) {
  std::optional<DeviceSet> devices;
  if (assigned_label.has_value()) devices = ParseAssigned(*assigned_label);
  if (devices.has_value()) labelled_ |= *devices & present();
  pods_.push_back({namespace_name, name, devices});
}

const NodeDevices::Pod* NodeDevices::Find(std::string_view namespace_name,
                                          std::string_view name) const {
  for (const Pod& p : pods_) {
    if (p.name == name && p.namespace_name == namespace_name) return &p;
  }
  return nullptr;
}

bool NodeDevices::Shows(std::string_view namespace_name, std::string_view name,
                        const DeviceSet& devices) const {
  const Pod* p = Find(namespace_name, name);
  return p != nullptr && p->devices == devices;
}

bool NodeDevices::Has(std::string_view namespace_name,
                      std::string_view name) const {
  return Find(namespace_name, name) != nullptr;
}

Ledger::Ledger(std::function<Clock::time_point()> now)
    : now_(std::move(now)), start_(now_()) {}

void Ledger::CollectLocked(std::string_view node, const NodeDevices& devices,
                           Clock::time_point now, DeviceSet& used,
                           std::vector<std::string>* seen) const {
  for (const auto& [uid, r] : reservations_) {
    if (r.node != node || r.expires <= now) continue;
    if (devices.Shows(r.namespace_name, r.name, r.devices)) {
      // Its label counts already; the reservation has done its job.
      if (seen != nullptr) seen->push_back(uid);
      continue;
    }
    if (r.prebound && !devices.Has(r.namespace_name, r.name)) continue;
    used |= r.devices;
  }
}

void Ledger::DropSeenAndExpiredLocked(std::string_view node,
                                      const NodeDevices& devices,
                                      const std::vector<std::string>& seen,
                                      Clock::time_point now) {
  for (const std::string& uid : seen) {
    // Checked again: the lock was let go since the pod was seen.
    auto it = reservations_.find(uid);
    if (it != reservations_.end() && it->second.node == node &&
        devices.Shows(it->second.namespace_name, it->second.name,
                      it->second.devices)) {
      reservations_.erase(it);
    }
  }
  std::erase_if(reservations_, [now](const auto& entry) {
    return entry.second.expires <= now;
  });
}

DeviceSet Ledger::Used(std::string_view node, const NodeDevices& devices) {
  const Clock::time_point now = now_();
  DeviceSet used = devices.labelled();
  std::vector<std::string> seen;
  {
    std::shared_lock lock(mu_);
    CollectLocked(node, devices, now, used, &seen);
  }
  if (!seen.empty()) {
    // Rare (once per pod): the node shows a reserved pod bound.
    std::unique_lock lock(mu_);
    DropSeenAndExpiredLocked(node, devices, seen, now);
  }
  return used & devices.present();
}

std::optional<std::vector<int>> Ledger::Reserve(const PodKey& pod,
                                                std::string_view node,
                                                const NodeDevices& devices,
                                                int k) {
  const Clock::time_point now = now_();
  std::unique_lock lock(mu_);
  if (auto it = reservations_.find(pod.uid); it != reservations_.end()) {
    reservations_.erase(it);
  }
  DeviceSet used = devices.labelled();
  std::vector<std::string> seen;
  CollectLocked(node, devices, now, used, &seen);
  DropSeenAndExpiredLocked(node, devices, seen, now);
  const DeviceSet free = devices.present() & ~used;
  if (k <= 0 || static_cast<int>(free.count()) < k) return std::nullopt;
  DeviceSet picked;
  std::vector<int> indices;
  for (size_t i = 0; i < free.size() && static_cast<int>(indices.size()) < k;
       ++i) {
    if (free.test(i)) {
      picked.set(i);
      indices.push_back(static_cast<int>(i));
    }
  }
  reservations_.emplace(
      std::string(pod.uid),
      Reservation{std::string(pod.namespace_name), std::string(pod.name),
                  std::string(node), picked, now + kPermitMax + kTtl});
  return indices;
}

void Ledger::Unreserve(std::string_view uid) {
  std::unique_lock lock(mu_);
  if (auto it = reservations_.find(uid); it != reservations_.end()) {
    reservations_.erase(it);
  }
}

std::optional<std::vector<int>> Ledger::PreBind(std::string_view uid) {
  const Clock::time_point now = now_();
  std::unique_lock lock(mu_);
  auto it = reservations_.find(uid);
  if (it == reservations_.end() || it->second.expires <= now) {
    return std::nullopt;
  }
  it->second.expires = now + kTtl;
  it->second.prebound = true;
  return Indices(it->second.devices);
}

size_t Ledger::InFlight() const {
  const Clock::time_point now = now_();
  std::shared_lock lock(mu_);
  size_t n = 0;
  for (const auto& [uid, r] : reservations_) {
    if (r.expires > now) ++n;
  }
  return n;
}

}  // namespace device_share
