// `schedplug inspect` and `check` open plugins with dlopen, which runs the
// library's constructors: untrusted code. They do it in a forked child
// process, so a plugin that crashes or hangs while loading (or in create())
// gives a clear error and exit status 1 instead of taking the CLI down.
#pragma once

#include <chrono>
#include <functional>
#include <ostream>
#include <string>

namespace schedplug::tools {

// Runs `body` in a child process (it writes to the same stdout/stderr) and
// returns its exit status. When the child dies of a signal or runs longer
// than `timeout` (then it is killed), prints an error to `err` naming the
// last plugin file it began to load and returns 1.
// `activity` names what the child does, for the timeout message.
int run_in_child(const std::function<int()>& body, std::chrono::seconds timeout,
                 std::ostream& err,
                 const std::string& activity = "loading the plugins");

}  // namespace schedplug::tools
