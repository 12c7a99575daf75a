// `schedplug replay`: re-evaluates a recording (cycle_recorder.hpp) with
// other plugin versions and reports what changed. The calls go to a real
// HostApp started in-process on the given plugins and configuration, so
// replay runs the host's own checks, node table and chains; it compares
// each answer with the recorded one (docs/record-replay.md).
#pragma once

#include <cstdint>
#include <filesystem>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

namespace schedplug::host {

struct ReplayOptions {
  // A directory --record wrote, or one file of it.
  std::filesystem::path record;
  std::filesystem::path plugins;
  // Empty: the configuration the recording's first file was answered with.
  std::filesystem::path config;
  // As schedplug-host's --plugin-sha256 (empty: none).
  std::filesystem::path plugin_sha256;
  unsigned workers = 0;  // 0: ThreadPool::default_workers()
  // Pods whose differences are kept as examples, each with its first
  // difference of each kind (every difference is counted).
  size_t max_examples = 20;
};

// One pod's difference between the recording and the replay.
struct ReplayDifference {
  // "feasible" (a node's Filter verdict), "best_node" (the node the
  // weighted native scores rank first: a ranking, not where the pod went),
  // "error" (the replay failed where the recording did not), "reason" (the
  // same verdict with another reason), "hook" (a Reserve, Permit, PreBind
  // or PreEnqueue answered otherwise: another failure, wait or patch).
  std::string kind;
  std::string pod;  // namespace/name
  std::string uid;
  std::string detail;  // a sentence naming the nodes and both answers
};

// Median time per call for tables of up to `max_nodes` nodes (0: more
// than the previous bucket's).
struct ReplayTiming {
  uint32_t max_nodes = 0;
  uint64_t calls = 0;
  double recorded_median_ms = 0;
  double replay_median_ms = 0;
};

struct ReplayReport {
  uint64_t files = 0;
  uint64_t calls = 0;   // replayed
  uint64_t cycles = 0;  // pod cycles begun (PreFilter, or a score-only call)
  uint64_t pods = 0;    // distinct pods
  // Recorded calls that failed and moved no table (not replayed), calls of
  // sessions the files do not open, and calls the recorder left out.
  uint64_t skipped_failed = 0;
  uint64_t skipped_unknown_session = 0;
  uint64_t recording_gaps = 0;
  // Distinct pods with at least one difference of each kind.
  uint64_t feasible_changed = 0;
  uint64_t best_node_changed = 0;
  uint64_t new_errors = 0;
  uint64_t reasons_changed = 0;
  uint64_t hooks_changed = 0;
  // In the order found; the pods of `example_pods` have all theirs here.
  std::vector<ReplayDifference> examples;
  uint64_t example_pods = 0;
  // Distinct pods with any difference (reasons included).
  uint64_t differing_pods = 0;
  std::vector<ReplayTiming> timing;
  // What the reader should know: files cut short, a configuration or
  // plugin builds the recorded host reloaded within the recording, ...
  std::vector<std::string> notes;

  // Verdicts, best nodes, errors or hooks' answers changed (reasons alone
  // do not count).
  bool differs() const {
    return feasible_changed + best_node_changed + new_errors + hooks_changed >
           0;
  }
};

// A recording that cannot be read, or plugins the host refuses; what()
// says which and what to do.
class ReplayError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Replays every file of `options.record`, oldest first. The host's
// start-up diagnostics go to `diagnostics`. Throws ReplayError.
ReplayReport replay_recording(const ReplayOptions& options,
                              std::ostream& diagnostics);

}  // namespace schedplug::host
