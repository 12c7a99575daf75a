// `schedplug simulate --native-only`: the pending pods scheduled by the
// profiles' native plugins alone, through the host's own plugin runtime,
// Filter and Score chains and normalization in this process, with
// kube-scheduler's weights. Fast, but blind to kube-scheduler's in-tree
// plugins (resources, taints, affinity, spreading) (docs/simulate.md).
#pragma once

#include <ostream>
#include <set>
#include <vector>

#include "tools/schedplug/kube_dump.hpp"
#include "tools/schedplug/simulate_command.hpp"
#include "tools/schedplug/simulate_report.hpp"

namespace schedplug::tools {

// Schedules `pending` (in queue order) onto `nodes`, the bound pods of
// `pods` being their load, and fills `report`. Returns kSimulateBadInput,
// with the problems on `err`, when schedplug-host would refuse the
// configuration or the plugins; 0 otherwise.
int simulate_native(const SimulateOptions& options,
                    const std::vector<KubeNode>& nodes,
                    const std::vector<KubePod>& pods,
                    const std::vector<const KubePod*>& pending,
                    const std::set<const KubePod*>& explain,
                    SimulationReport& report, std::ostream& err);

}  // namespace schedplug::tools
