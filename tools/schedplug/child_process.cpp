#include "tools/schedplug/child_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
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

ProgramRun run_program(const std::vector<std::string>& argv,
                       const std::vector<std::string>& env) {
  ProgramRun run;
  // Everything the child needs is made before fork(): after it, a
  // multithreaded process may only make async-signal-safe calls.
  std::vector<std::string> environment = env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry(*e);
    const std::string name = entry.substr(0, entry.find('=') + 1);
    const bool replaced =
        std::any_of(env.begin(), env.end(), [&](const std::string& mine) {
          return mine.compare(0, name.size(), name) == 0;
        });
    if (!replaced) environment.push_back(entry);
  }
  std::vector<char*> args, envp;
  for (const std::string& a : argv)
    args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  for (const std::string& e : environment)
    envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  int out[2], err[2];
  if (::pipe2(out, O_CLOEXEC) != 0) {
    run.start_error = std::string("pipe: ") + std::strerror(errno);
    return run;
  }
  if (::pipe2(err, O_CLOEXEC) != 0) {
    run.start_error = std::string("pipe: ") + std::strerror(errno);
    ::close(out[0]);
    ::close(out[1]);
    return run;
  }
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    ::dup2(out[1], STDOUT_FILENO);
    ::dup2(err[1], STDERR_FILENO);
    ::execve(args[0], args.data(), envp.data());
    const char* why = "cannot execute the program\n";
    [[maybe_unused]] auto n = ::write(STDERR_FILENO, why, std::strlen(why));
    ::_exit(127);
  }
  ::close(out[1]);
  ::close(err[1]);
  if (pid < 0) {
    run.start_error = std::string("fork: ") + std::strerror(errno);
    ::close(out[0]);
    ::close(err[0]);
    return run;
  }
  pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
  std::string* into[2] = {&run.out, &run.err};
  int open = 2;
  while (open > 0) {
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      char buffer[65536];
      const ssize_t n = ::read(fds[i].fd, buffer, sizeof(buffer));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open;
        continue;
      }
      into[i]->append(buffer, static_cast<size_t>(n));
    }
  }
  for (const pollfd& f : fds) {
    if (f.fd >= 0) ::close(f.fd);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  run.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  if (run.status == 127 && run.err == "cannot execute the program\n") {
    run.status = -1;
    run.start_error = "cannot execute " + argv[0];
  }
  return run;
}

}  // namespace schedplug::tools
