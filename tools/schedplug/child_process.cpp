#include "tools/schedplug/child_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>

#include "host/loader/plugin_file_check.hpp"

namespace schedplug::tools {
namespace {

int64_t ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now() - start)
      .count();
}

}  // namespace

int run_in_child(const std::function<int()>& body, std::chrono::seconds timeout,
                 std::ostream& err, const std::string& activity) {
  std::cout.flush();
  std::cerr.flush();
  int progress[2];
  if (::pipe2(progress, O_CLOEXEC) != 0) {
    err << "error: cannot create a pipe for the plugin-loading process: "
        << std::strerror(errno) << "\n";
    return 2;
  }
  const pid_t pid = ::fork();
  if (pid < 0) {
    err << "error: cannot start the plugin-loading process (fork: "
        << std::strerror(errno) << ")\n";
    return 2;
  }
  if (pid == 0) {
    ::close(progress[0]);
    const int report = progress[1];
    host::plugin_file_policy().before_dlopen =
        [report](const std::filesystem::path& file) {
          const std::string line = file.string() + "\n";
          [[maybe_unused]] auto n = ::write(report, line.data(), line.size());
        };
    int code = 2;
    try {
      code = body();
    } catch (const std::exception& e) {
      std::cerr << "error: " << e.what() << "\n";
    }
    std::cout.flush();
    std::cerr.flush();
    // Skip static destructors: plugin code may run there too.
    ::_exit(code);
  }
  ::close(progress[1]);

  // Read the child's progress until it closes the pipe (exits) or the time
  // runs out.
  const auto start = std::chrono::steady_clock::now();
  const auto limit_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(timeout).count();
  std::string last_file;
  std::string pending;
  bool timed_out = false;
  for (;;) {
    const int64_t left = limit_ms - ms_since(start);
    if (left <= 0) {
      timed_out = true;
      break;
    }
    pollfd fd{progress[0], POLLIN, 0};
    const int ready = ::poll(&fd, 1, static_cast<int>(left));
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) {
      timed_out = true;
      break;
    }
    char buffer[4096];
    const ssize_t n = ::read(progress[0], buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // the child exited (or closed the pipe)
    pending.append(buffer, static_cast<size_t>(n));
    for (auto nl = pending.find('\n'); nl != std::string::npos;
         nl = pending.find('\n')) {
      last_file = pending.substr(0, nl);
      pending.erase(0, nl + 1);
    }
  }
  ::close(progress[0]);
  if (timed_out) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  const std::string which =
      last_file.empty()
          ? std::string(" before it opened any plugin file")
          : "; the last plugin file it began to load was " + last_file +
                " (its constructors, entry function or create() ran last)";
  if (timed_out) {
    err << "error: " << activity << " did not finish within " << timeout.count()
        << " s and was stopped" << which
        << "; a plugin that hangs while loading would hang schedplug-host "
           "the same way: fix or remove it\n";
    return 1;
  }
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    err << "error: the process loading the plugins was killed by signal " << sig
        << " (" << ::strsignal(sig) << ")" << which
        << "; that plugin would crash schedplug-host the same way: fix or "
           "remove it\n";
    return 1;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

}  // namespace schedplug::tools
