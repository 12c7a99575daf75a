// What the host's hot reload did, for the Status call
// (`schedplug-host probe --details`): how many reloads swapped something in,
// when the last one looked, and the refused changes that still stand. The
// reloader writes it after each reload; the service reads it. Thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace schedplug::host {

// A change a reload did not take: the file (a plugin file, the
// configuration or the --plugin-sha256 list), the reason as
// schedplug_reloads_refused_total labels it, and the sentence the log has.
struct ReloadRefusal {
  std::string file;
  std::string reason;
  std::string message;
  // When it was first refused (set by ReloadStatus).
  std::chrono::system_clock::time_point since{};
};

class ReloadStatus {
 public:
  struct Snapshot {
    bool watching = false;
    uint64_t reloads = 0;  // that swapped something in
    std::chrono::system_clock::time_point last_reload{};  // epoch: none
    std::vector<ReloadRefusal> standing;
  };

  void set_watching(bool watching);
  // After a reload: `standing` are the refusals it made (each reload looks
  // at every file again, so what it did not refuse is fixed or gone). A
  // refusal that stood before keeps its first time.
  void reloaded(bool swapped, std::vector<ReloadRefusal> standing);
  Snapshot snapshot() const;

 private:
  mutable std::mutex mutex_;
  Snapshot state_;
};

}  // namespace schedplug::host
