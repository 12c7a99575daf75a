// Creating every plugin instance the profiles ask for, the way
// schedplug-host does at start-up, so bad args show up in `schedplug check`
// instead of at roll-out.
#pragma once

#include <vector>

#include "host/check/name_check.hpp"
#include "host/config/resolve.hpp"
#include "host/plugin/created_plugins.hpp"

namespace schedplug::host {

// Calls create() (and destroy()) once per plugin per profile with the
// profile's args. Every failure is an error naming the config file, the
// profile, the plugin, its .so file and the plugin's own message. A
// created instance's SCHEDPLUG_HINT_* bits that buy nothing (a hint about
// a hook the plugin lacks, or one the scheduler uses only with another)
// are warnings (docs/check.md).
// With `keep`, the instances created are appended to it (one per profile
// and plugin, and per shadow candidate) instead of destroyed.
std::vector<Diagnostic> check_create(
    const SchedulerConfig& config, const std::vector<ResolvedProfile>& profiles,
    std::vector<CreatedPlugins::Created>* keep = nullptr);

}  // namespace schedplug::host
