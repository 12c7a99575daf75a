// What `schedplug replay` reads out of a recorded or replayed answer to
// compare the two (replayer.cpp): rejections by node, the failures, the
// best native-scored nodes. Every index an answer holds (a plugin, a
// reason, a node's position) comes from a recording file, so each is
// checked before use and an out-of-range one reads as nothing; score sums
// saturate instead of overflowing. Kept apart from the replay's host so
// that the record fuzz target (fuzz/record_fuzz.cpp) runs them.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "schedplug/v1/schedplug.pb.h"

namespace schedplug::host::replay {

// A filter answer for one node: the plugin that rejected it, the code and
// the reason ("" where the answer's index points nowhere).
struct Verdict {
  std::string plugin;
  int code = 0;
  std::string reason;
};
// The rejected nodes of a PreFilter or FilterNodes answer, by slot.
std::map<uint32_t, Verdict> rejections(const v1::PreFilterResponse& r);
// "rejected by P (reason)".
std::string describe(const Verdict& v);

// A plugin's normalized scores in an answer: its `scores`, or, when the
// host left them raw for the shim (scores ahead, PreScore's `raw`), its
// raw scores normalized by their declared policy over the answer's nodes.
std::vector<int64_t> normalized(const v1::PluginScores& p);

// The slots with the highest weighted native score (several on a tie),
// over `nodes` (the answer's nodes, in the order of each plugin's scores).
// A plugin without a weight in `weights` weighs 1.
struct Best {
  std::set<uint32_t> slots;
  int64_t score = 0;
};
Best best_nodes(
    const google::protobuf::RepeatedPtrField<v1::PluginScores>& plugins,
    const google::protobuf::RepeatedField<uint32_t>& nodes,
    const std::vector<int>& weights);

// A hook's answer as a short text, equal for answers that decide the same:
// "reserved", "HookB: Unschedulable (no devices left)", "allowed",
// "Gang waits 5000 ms", "writes annotation a=1, label b=2", "admitted".
// Unreserve answers nothing.
std::string hook_answer(const v1::ReserveResponse& r);
std::string hook_answer(const v1::UnreserveResponse& r);
std::string hook_answer(const v1::PermitResponse& r);
std::string hook_answer(const v1::PreBindResponse& r);
std::string hook_answer(const v1::PreEnqueueResponse& r);

// The first failure in a score answer, or in a filter answer ("" if none).
std::string score_failure(
    const google::protobuf::RepeatedPtrField<v1::PluginScores>& plugins);
std::string filter_failure(const v1::PreFilterResponse& r);

}  // namespace schedplug::host::replay
