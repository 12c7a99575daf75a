// `schedplug simulate` by default: kube-scheduler itself decides. A
// schedplug-host started in this process on a private unix socket serves
// the native plugins, and kube-scheduler-simulate (the kube-scheduler this
// repository ships, run on the dumps against an in-memory API) schedules
// the pending pods with the profile's in-tree and native plugins
// (docs/simulate.md).
#pragma once

#include <filesystem>
#include <ostream>
#include <set>
#include <vector>

#include "tools/schedplug/kube_dump.hpp"
#include "tools/schedplug/simulate_command.hpp"
#include "tools/schedplug/simulate_report.hpp"

namespace schedplug::tools {

inline constexpr const char* kSimulatorName = "kube-scheduler-simulate";
inline constexpr const char* kSimulatorEnv = "SCHEDPLUG_SIMULATOR";

// Where kube-scheduler-simulate is: `flag` (--simulator) when given, else
// $SCHEDPLUG_SIMULATOR, else beside this program, else on PATH; empty when
// none of these is an executable file.
std::filesystem::path find_simulator(const std::filesystem::path& flag);

// Runs kube-scheduler on the dumps and fills `report` with `pending`'s
// outcomes (in that order). Returns 0, kSimulateBadInput (a problem with
// the configuration, the plugins or a missing kube-scheduler-simulate,
// on `err`) or kSimulateSomeNotPlaced (the simulation could not finish).
int simulate_with_kube_scheduler(const SimulateOptions& options,
                                 const std::vector<const KubePod*>& pending,
                                 const std::set<const KubePod*>& explain,
                                 SimulationReport& report, std::ostream& err);

}  // namespace schedplug::tools
