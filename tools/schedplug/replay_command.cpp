#include "tools/schedplug/replay_command.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <vector>

namespace schedplug::tools {
namespace {

nlohmann::ordered_json report_json(const host::ReplayReport& r) {
  nlohmann::ordered_json j;
  j["files"] = r.files;
  j["cycles"] = r.cycles;
  j["pods"] = r.pods;
  j["calls"] = r.calls;
  j["skipped"] = {{"recorded_failures", r.skipped_failed},
                  {"unknown_session", r.skipped_unknown_session},
                  {"recording_gaps", r.recording_gaps}};
  j["changed"] = {{"feasible_set_pods", r.feasible_changed},
                  {"best_node_pods", r.best_node_changed},
                  {"new_error_pods", r.new_errors},
                  {"reason_pods", r.reasons_changed},
                  {"hook_pods", r.hooks_changed}};
  j["differs"] = r.differs();
  j["differing_pods"] = r.differing_pods;
  j["example_pods"] = r.example_pods;
  auto& examples = j["examples"] = nlohmann::ordered_json::array();
  for (const host::ReplayDifference& d : r.examples) {
    examples.push_back({{"kind", d.kind},
                        {"pod", d.pod},
                        {"uid", d.uid},
                        {"detail", d.detail}});
  }
  auto& timing = j["timing"] = nlohmann::ordered_json::array();
  for (const host::ReplayTiming& t : r.timing) {
    timing.push_back({{"max_nodes", t.max_nodes},
                      {"calls", t.calls},
                      {"recorded_median_ms", t.recorded_median_ms},
                      {"replay_median_ms", t.replay_median_ms}});
  }
  j["notes"] = r.notes;
  return j;
}

}  // namespace

void print_replay_text(const host::ReplayReport& r,
                       const ReplayCommandOptions& o, std::ostream& out) {
  out << fmt::format(
      "replayed {} cycles of {} pods ({} calls) from {} file{} of {} with "
      "the plugins in {}\n",
      r.cycles, r.pods, r.calls, r.files, r.files == 1 ? "" : "s",
      o.replay.record.string(), o.replay.plugins.string());
  const std::pair<const char*, uint64_t> counts[] = {
      {"pods whose feasible set changed:", r.feasible_changed},
      {"pods whose top native-scored node changed:", r.best_node_changed},
      {"pods with new errors:", r.new_errors},
      {"pods whose rejection reasons changed:", r.reasons_changed},
      {"pods whose hooks answered otherwise:", r.hooks_changed}};
  for (const auto& [label, n] : counts)
    out << fmt::format("  {:<43}{}\n", label, n);
  if (r.skipped_failed + r.skipped_unknown_session + r.recording_gaps > 0) {
    const auto calls = [](uint64_t n) {
      return fmt::format("{} call{}", n, n == 1 ? "" : "s");
    };
    out << fmt::format(
        "  not compared: {} that failed when recorded, {} of sessions whose "
        "opening is in no file (removed for room), {} the recorder left out\n",
        calls(r.skipped_failed), calls(r.skipped_unknown_session),
        calls(r.recording_gaps));
  }
  if (!r.examples.empty()) {
    const uint64_t differing = r.differing_pods;
    out << fmt::format(
        "differences of {} pod{}{} (each pod's first of each kind):\n",
        r.example_pods, r.example_pods == 1 ? "" : "s",
        differing > r.example_pods
            ? fmt::format(" of the {} that differ; --examples shows more",
                          differing)
            : std::string());
    // Grouped by pod, in the order the pods were found.
    std::vector<std::string> order;
    std::map<std::string, std::vector<const host::ReplayDifference*>> by_pod;
    for (const host::ReplayDifference& d : r.examples) {
      const std::string key = d.uid.empty() ? d.pod : d.uid;
      if (!by_pod.contains(key)) order.push_back(key);
      by_pod[key].push_back(&d);
    }
    for (const std::string& key : order) {
      out << "  " << by_pod[key].front()->pod << "\n";
      for (const host::ReplayDifference* d : by_pod[key])
        out << fmt::format("    [{}] {}\n", d->kind, d->detail);
    }
  }
  if (!r.timing.empty()) {
    out << "time per call by node count (medians):\n";
    out << fmt::format("  {:>8} {:>8} {:>12} {:>12}\n", "nodes", "calls",
                       "recorded", "replay");
    for (const host::ReplayTiming& t : r.timing) {
      out << fmt::format("  {:>8} {:>8} {:>9.3f} ms {:>9.3f} ms\n",
                         t.max_nodes == 0 ? std::string("more")
                                          : fmt::format("<={}", t.max_nodes),
                         t.calls, t.recorded_median_ms, t.replay_median_ms);
    }
  }
  for (const std::string& n : r.notes) out << "note: " << n << "\n";
  out << (r.differs() ? "the replay differs from the recording (exit 1)\n"
                      : "the replay gives the recorded verdicts, top-ranked "
                        "nodes and errors (exit 0)\n");
}

int run_replay(const ReplayCommandOptions& options, std::ostream& out,
               std::ostream& err) {
  host::ReplayReport report;
  try {
    report = host::replay_recording(options.replay, err);
  } catch (const host::ReplayError& e) {
    err << "error: " << e.what() << "\n";
    return kReplayFailed;
  }
  if (options.json) {
    out << report_json(report).dump(2) << "\n";
  } else {
    print_replay_text(report, options, out);
  }
  return report.differs() ? kReplayDiffers : kReplaySame;
}

}  // namespace schedplug::tools
