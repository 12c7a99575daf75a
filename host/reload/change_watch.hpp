// Watches directories with inotify and calls back once changes settle:
// the plugin directory and the configuration file's directory, so that a
// plain file replaced, a file renamed into place and a ConfigMap volume's
// atomic `..data` symlink swap all count.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace schedplug::host {

// A directory to watch, and the names in it that matter (empty: all).
struct WatchedDir {
  std::filesystem::path dir;
  std::vector<std::string> names;
};

class ChangeWatch {
 public:
  // Calls `changed` on its own thread once no event arrived for `settle`
  // after one did (at most 10 × settle after the first), and no file that
  // was written to is still open for writing (waiting at most 30 s for
  // its close). Throws std::runtime_error naming the directory it cannot
  // watch.
  ChangeWatch(std::vector<WatchedDir> dirs, std::chrono::milliseconds settle,
              std::function<void()> changed);
  // Stops watching; waits for a `changed` call in progress.
  ~ChangeWatch();
  ChangeWatch(const ChangeWatch&) = delete;
  ChangeWatch& operator=(const ChangeWatch&) = delete;

 private:
  void run();
  // Watches every directory not watched yet; false when one is missing.
  bool watch_all();

  const std::vector<WatchedDir> dirs_;
  const std::chrono::milliseconds settle_;
  const std::function<void()> changed_;
  int inotify_ = -1;
  int stop_ = -1;             // an eventfd
  std::vector<int> watches_;  // per dir; -1: not watched (yet)
  std::thread thread_;
};

}  // namespace schedplug::host
