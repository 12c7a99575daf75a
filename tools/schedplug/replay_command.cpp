#include "tools/schedplug/replay_command.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

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
                  {"reason_pods", r.reasons_changed}};
  j["differs"] = r.differs();
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

void print_text(const host::ReplayReport& r, const ReplayCommandOptions& o,
                std::ostream& out) {
  out << fmt::format(
      "replayed {} cycles of {} pods ({} calls) from {} file{} of {} with "
      "the plugins in {}\n",
      r.cycles, r.pods, r.calls, r.files, r.files == 1 ? "" : "s",
      o.replay.record.string(), o.replay.plugins.string());
  out << fmt::format("  pods whose feasible set changed:           {}\n",
                     r.feasible_changed);
  out << fmt::format("  pods whose best native-scored node changed: {}\n",
                     r.best_node_changed);
  out << fmt::format("  pods with new errors:                       {}\n",
                     r.new_errors);
  out << fmt::format("  pods whose rejection reasons changed:       {}\n",
                     r.reasons_changed);
  if (r.skipped_failed + r.skipped_unknown_session + r.recording_gaps > 0) {
    out << fmt::format(
        "  not compared: {} calls that failed when recorded, {} of sessions "
        "no file opens, {} the recorder left out\n",
        r.skipped_failed, r.skipped_unknown_session, r.recording_gaps);
  }
  if (!r.examples.empty()) {
    out << "differences (the first of each pod and kind):\n";
    for (const host::ReplayDifference& d : r.examples)
      out << fmt::format("  {} [{}]: {}\n", d.pod, d.kind, d.detail);
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
                      : "the replay gives the recorded verdicts, best nodes "
                        "and errors (exit 0)\n");
}

}  // namespace

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
    print_text(report, options, out);
  }
  return report.differs() ? kReplayDiffers : kReplaySame;
}

}  // namespace schedplug::tools
