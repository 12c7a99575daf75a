// `schedplug replay`'s text report (docs/record-replay.md): the counts
// aligned, the calls not compared in one readable sentence, and the
// examples grouped by pod.
#include <gtest/gtest.h>

#include <sstream>

#include "tools/schedplug/replay_command.hpp"

namespace {

using schedplug::host::ReplayReport;
using schedplug::tools::print_replay_text;
using schedplug::tools::ReplayCommandOptions;

TEST(ReplayReportText, SaysWhatWasNotComparedAndGroupsExamplesByPod) {
  ReplayReport r;
  r.files = 2;
  r.cycles = r.pods = r.calls = 40;
  r.skipped_failed = 3;
  r.skipped_unknown_session = 1;
  r.recording_gaps = 2;
  r.feasible_changed = 2;
  r.best_node_changed = 2;
  r.hooks_changed = 1;
  r.differing_pods = 7;
  r.example_pods = 2;
  r.examples = {{"feasible", "ns/a", "uid-a", "a feasible"},
                {"feasible", "ns/b", "uid-b", "b feasible"},
                {"best_node", "ns/a", "uid-a", "a ranked"}};
  ReplayCommandOptions o;
  o.replay.record = "rec";
  o.replay.plugins = "new.d";
  std::ostringstream out;
  print_replay_text(r, o, out);
  EXPECT_EQ(out.str(),
            "replayed 40 cycles of 40 pods (40 calls) from 2 files of rec "
            "with the plugins in new.d\n"
            "  pods whose feasible set changed:           2\n"
            "  pods whose top native-scored node changed: 2\n"
            "  pods with new errors:                      0\n"
            "  pods whose rejection reasons changed:      0\n"
            "  pods whose hooks answered otherwise:       1\n"
            "  not compared: 3 calls that failed when recorded, 1 call of "
            "sessions whose opening is in no file (removed for room), 2 calls "
            "the recorder left out\n"
            "differences of 2 pods of the 7 that differ; --examples shows "
            "more (each pod's first of each kind):\n"
            "  ns/a\n"
            "    [feasible] a feasible\n"
            "    [best_node] a ranked\n"
            "  ns/b\n"
            "    [feasible] b feasible\n"
            "the replay differs from the recording (exit 1)\n");
}

}  // namespace
