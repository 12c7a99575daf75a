// `schedplug inspect` and `check` open plugins with dlopen, which runs the
// library's constructors: untrusted code. They do it in a forked child
// process, so a plugin that crashes or hangs while loading (or in create())
// gives a clear error and exit status 1 instead of taking the CLI down.
#pragma once

#include <chrono>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

namespace schedplug::tools {

// Runs `body` in a child process (it writes to the same stdout/stderr) and
// returns its exit status. When the child dies of a signal or runs longer
// than `timeout` (then it is killed), prints an error to `err` naming the
// last plugin file it began to load and returns 1.
// `activity` names what the child does, for the timeout message.
int run_in_child(const std::function<int()>& body, std::chrono::seconds timeout,
                 std::ostream& err,
                 const std::string& activity = "loading the plugins");

// What a program run by run_program did.
struct ProgramRun {
  // Its exit status; 128 + the signal when one killed it; -1 when it did
  // not start (start_error says why).
  int status = -1;
  std::string out;  // its stdout
  std::string err;  // its stderr
  std::string start_error;
};

// Runs `argv` (argv[0] a path) with `env` ("NAME=value") added to this
// process's environment, collecting its stdout and stderr. The program is
// killed when this process dies, so a stopped simulation leaves nothing
// behind.
ProgramRun run_program(const std::vector<std::string>& argv,
                       const std::vector<std::string>& env);

}  // namespace schedplug::tools
