// `schedplug replay --record DIR --plugins DIR [--config FILE] [--json]`
//
// Re-evaluates the pod cycles schedplug-host --record wrote with other
// plugin builds (and optionally another configuration) through the host's
// own engine, and reports what would have changed: pods whose feasible
// set changed, pods whose top native-scored node changed, new errors,
// and time per call by node count (docs/record-replay.md).
#pragma once

#include <ostream>

#include "host/record/replayer.hpp"

namespace schedplug::tools {

struct ReplayCommandOptions {
  host::ReplayOptions replay;
  bool json = false;
};

inline constexpr int kReplaySame = 0;
inline constexpr int kReplayDiffers = 1;  // verdicts, top nodes or errors
inline constexpr int kReplayFailed = 2;   // unreadable recording, bad plugins

int run_replay(const ReplayCommandOptions& options, std::ostream& out,
               std::ostream& err);

// The report as run_replay prints it without --json.
void print_replay_text(const host::ReplayReport& report,
                       const ReplayCommandOptions& options, std::ostream& out);

}  // namespace schedplug::tools
