#include "host/reload/change_watch.hpp"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>

#include <spdlog/spdlog.h>

namespace schedplug::host {
namespace {

using Clock = std::chrono::steady_clock;

// Every change that can replace a file's content or what a name points to.
// IN_MODIFY marks a file as being written until its IN_CLOSE_WRITE.
constexpr uint32_t kEvents = IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM |
                             IN_CREATE | IN_DELETE | IN_ATTRIB | IN_MODIFY |
                             IN_DELETE_SELF | IN_MOVE_SELF;
// Events after which a file is no longer being written under its name.
constexpr uint32_t kWriteEnds = IN_CLOSE_WRITE | IN_DELETE | IN_MOVED_FROM;

// How often a directory that could not be watched (gone) is tried again.
constexpr std::chrono::seconds kRetry{1};

// The longest a change waits for a file that is being written to be
// closed: a writer that keeps a file open without writing must not stop
// reloads for good (the loader still refuses an incomplete plugin file).
constexpr std::chrono::seconds kWriteWait{30};

}  // namespace

ChangeWatch::ChangeWatch(std::vector<WatchedDir> dirs,
                         std::chrono::milliseconds settle,
                         std::function<void()> changed)
    : dirs_(std::move(dirs)),
      settle_(settle),
      changed_(std::move(changed)),
      watches_(dirs_.size(), -1) {
  inotify_ = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (inotify_ < 0) {
    throw std::runtime_error(std::string("cannot watch for plugin changes: "
                                         "inotify_init1 failed (") +
                             std::strerror(errno) +
                             "); raise fs.inotify.max_user_instances, or "
                             "run with --no-watch");
  }
  stop_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  for (size_t i = 0; i < dirs_.size(); ++i) {
    watches_[i] = ::inotify_add_watch(inotify_, dirs_[i].dir.c_str(), kEvents);
    if (watches_[i] < 0) {
      const int error = errno;
      ::close(inotify_);
      ::close(stop_);
      throw std::runtime_error("cannot watch " + dirs_[i].dir.string() +
                               " for changes (" + std::strerror(error) +
                               "); check the path, or run with --no-watch");
    }
  }
  thread_ = std::thread([this] { run(); });
}

ChangeWatch::~ChangeWatch() {
  const uint64_t one = 1;
  if (::write(stop_, &one, sizeof one) < 0) {
    spdlog::error("cannot stop the plugin watch: {}", std::strerror(errno));
  }
  thread_.join();
  ::close(inotify_);
  ::close(stop_);
}

bool ChangeWatch::watch_all() {
  bool all = true;
  for (size_t i = 0; i < dirs_.size(); ++i) {
    if (watches_[i] >= 0) continue;
    watches_[i] = ::inotify_add_watch(inotify_, dirs_[i].dir.c_str(), kEvents);
    all = all && watches_[i] >= 0;
  }
  return all;
}

void ChangeWatch::run() {
  bool pending = false;
  bool missing = false;
  Clock::time_point first{}, last{};
  // Files written to and not closed yet (dir index, name): a plugin copied
  // in pieces is loaded once whole, not at the first pause.
  std::set<std::pair<size_t, std::string>> writing;
  const auto due = [&] {
    if (!writing.empty()) return first + kWriteWait;
    return std::min(last + settle_, first + 10 * settle_);
  };
  alignas(inotify_event) std::array<char, 16 * 1024> buffer;
  for (;;) {
    int timeout_ms = -1;
    const auto now = Clock::now();
    if (pending) {
      timeout_ms = static_cast<int>(std::max<int64_t>(
          0, std::chrono::duration_cast<std::chrono::milliseconds>(due() - now)
                 .count()));
    }
    if (missing) {
      const int retry =
          static_cast<int>(std::chrono::milliseconds(kRetry).count());
      timeout_ms = timeout_ms < 0 ? retry : std::min(timeout_ms, retry);
    }
    pollfd fds[2] = {{inotify_, POLLIN, 0}, {stop_, POLLIN, 0}};
    const int ready = ::poll(fds, 2, timeout_ms);
    if (ready < 0 && errno != EINTR) {
      spdlog::error(
          "the plugin watch stopped: poll failed ({}); changes are "
          "no longer picked up until the host restarts",
          std::strerror(errno));
      return;
    }
    if (fds[1].revents != 0) return;
    if (missing && watch_all()) {
      missing = false;
      pending = true;  // it came back: whatever it holds now counts
      first = last = Clock::now();
    }
    if (fds[0].revents & POLLIN) {
      bool relevant = false;
      for (;;) {
        const ssize_t n = ::read(inotify_, buffer.data(), buffer.size());
        if (n <= 0) break;
        for (ssize_t at = 0; at < n;) {
          const auto* event =
              reinterpret_cast<const inotify_event*>(buffer.data() + at);
          at += static_cast<ssize_t>(sizeof(inotify_event) + event->len);
          if (event->mask & IN_Q_OVERFLOW) {
            relevant = true;
            writing.clear();  // events were lost: no close is certain
          }
          for (size_t i = 0; i < watches_.size(); ++i) {
            if (watches_[i] != event->wd) continue;
            if (event->mask & (IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF)) {
              ::inotify_rm_watch(inotify_, watches_[i]);
              watches_[i] = -1;
              missing = true;
              relevant = true;
              std::erase_if(writing,
                            [i](const auto& w) { return w.first == i; });
              continue;
            }
            const std::string name = event->len > 0 ? event->name : "";
            const auto& names = dirs_[i].names;
            if (!names.empty() &&
                std::find(names.begin(), names.end(), name) == names.end()) {
              continue;
            }
            relevant = true;
            if (event->mask & kWriteEnds) {
              writing.erase({i, name});
            } else if (event->mask & IN_MODIFY) {
              writing.insert({i, name});
            }
          }
        }
      }
      if (relevant) {
        if (!pending) first = Clock::now();
        pending = true;
        last = Clock::now();
      }
      continue;
    }
    if (pending && Clock::now() >= due()) {
      if (!writing.empty()) {
        spdlog::warn(
            "{} has been open for writing for {} s; reloading anyway (a "
            "plugin file that is still incomplete is refused and the loaded "
            "version keeps serving)",
            (dirs_[writing.begin()->first].dir / writing.begin()->second)
                .string(),
            kWriteWait.count());
        writing.clear();
      }
      pending = false;
      try {
        changed_();
      } catch (const std::exception& e) {
        spdlog::error("reload after a change failed: {}", e.what());
      }
    }
  }
}

}  // namespace schedplug::host
