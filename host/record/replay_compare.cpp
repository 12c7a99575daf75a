#include "host/record/replay_compare.hpp"

#include <limits>

#include <fmt/format.h>

#include "schedplug/cpp/status.hpp"
#include "schedplug/runtime.hpp"

namespace schedplug::host::replay {
namespace {

// a + b and a * b, held at the int64 bounds instead of overflowing (a
// recording may hold any score; the host's own are in [0, 100]).
int64_t saturated_add(int64_t a, int64_t b) {
  int64_t out;
  if (!__builtin_add_overflow(a, b, &out)) return out;
  return b > 0 ? std::numeric_limits<int64_t>::max()
               : std::numeric_limits<int64_t>::min();
}
int64_t saturated_mul(int64_t a, int64_t b) {
  int64_t out;
  if (!__builtin_mul_overflow(a, b, &out)) return out;
  return (a < 0) != (b < 0) ? std::numeric_limits<int64_t>::min()
                            : std::numeric_limits<int64_t>::max();
}

}  // namespace

std::map<uint32_t, Verdict> rejections(const v1::PreFilterResponse& r) {
  std::map<uint32_t, Verdict> out;
  for (int i = 0; i < r.rejected_nodes_size(); ++i) {
    Verdict v;
    const uint32_t by = i < r.rejected_by_size() ? r.rejected_by(i) : 0;
    if (by < static_cast<uint32_t>(r.plugins_size())) v.plugin = r.plugins(by);
    v.code = i < r.codes_size() ? r.codes(i) : 0;
    const uint32_t reason = i < r.reason_size() ? r.reason(i) : 0;
    if (reason < static_cast<uint32_t>(r.reasons_size()))
      v.reason = r.reasons(reason);
    out[r.rejected_nodes(i)] = std::move(v);
  }
  return out;
}

std::string describe(const Verdict& v) {
  return fmt::format("rejected by {} ({})", v.plugin, v.reason);
}

namespace {

std::string hook_status(const v1::HookStatus& s) {
  return fmt::format("{}: {} ({})", s.plugin(), schedplug::code_name(s.code()),
                     s.reason());
}

std::string entries(
    std::string_view kind,
    const google::protobuf::RepeatedPtrField<v1::KeyValue>& kvs) {
  std::string out;
  for (const v1::KeyValue& kv : kvs)
    out += fmt::format("{}{} {}={}", out.empty() ? "" : ", ", kind, kv.key(),
                       kv.value());
  return out;
}

}  // namespace

std::string hook_answer(const v1::ReserveResponse& r) {
  return r.has_failed() ? hook_status(r.failed()) : "reserved";
}

std::string hook_answer(const v1::UnreserveResponse&) { return ""; }

std::string hook_answer(const v1::PermitResponse& r) {
  if (r.has_failed()) return hook_status(r.failed());
  if (r.waits().empty()) return "allowed";
  std::string out;
  for (const v1::PermitWait& w : r.waits())
    out += fmt::format("{}{} waits {} ms", out.empty() ? "" : ", ", w.plugin(),
                       w.timeout_ms());
  return out;
}

std::string hook_answer(const v1::PreBindResponse& r) {
  if (r.has_failed()) return hook_status(r.failed());
  const std::string annotations = entries("annotation", r.annotations());
  const std::string labels = entries("label", r.labels());
  if (annotations.empty() && labels.empty()) return "writes nothing";
  return "writes " + annotations +
         (annotations.empty() || labels.empty() ? "" : ", ") + labels;
}

std::string hook_answer(const v1::PreEnqueueResponse& r) {
  return r.has_gated() ? hook_status(r.gated()) : "admitted";
}

std::vector<int64_t> normalized(const v1::PluginScores& p) {
  if (p.scores_size() > 0 || p.normalization() == v1::NORMALIZATION_BY_PLUGIN)
    return {p.scores().begin(), p.scores().end()};
  std::vector<schedplug_node_score> scores;
  scores.reserve(static_cast<size_t>(p.raw_size()));
  for (int64_t raw : p.raw()) scores.push_back({schedplug_str_of(""), raw});
  runtime::apply_policy(p.normalization() == v1::NORMALIZATION_LINEAR
                            ? SCHEDPLUG_NORMALIZE_LINEAR
                        : p.normalization() == v1::NORMALIZATION_REVERSE
                            ? SCHEDPLUG_NORMALIZE_REVERSE
                            : SCHEDPLUG_NORMALIZE_NONE,
                        scores);
  std::vector<int64_t> out;
  out.reserve(scores.size());
  for (const auto& s : scores) out.push_back(s.score);
  return out;
}

Best best_nodes(
    const google::protobuf::RepeatedPtrField<v1::PluginScores>& plugins,
    const google::protobuf::RepeatedField<uint32_t>& nodes,
    const std::vector<int>& weights) {
  std::vector<int64_t> totals(static_cast<size_t>(nodes.size()), 0);
  for (int p = 0; p < plugins.size(); ++p) {
    const v1::PluginScores& scores = plugins[p];
    if (scores.skipped() || !scores.error().empty() ||
        !scores.unfinished().empty())
      continue;
    const int64_t weight =
        static_cast<size_t>(p) < weights.size() ? weights[p] : 1;
    const std::vector<int64_t> values = normalized(scores);
    // A plugin's scores beyond the answer's nodes belong to no node.
    for (size_t i = 0; i < values.size() && i < totals.size(); ++i)
      totals[i] = saturated_add(totals[i], saturated_mul(weight, values[i]));
  }
  Best best;
  for (size_t i = 0; i < totals.size(); ++i) {
    if (best.slots.empty() || totals[i] > best.score) {
      best.slots = {nodes[static_cast<int>(i)]};
      best.score = totals[i];
    } else if (totals[i] == best.score) {
      best.slots.insert(nodes[static_cast<int>(i)]);
    }
  }
  return best;
}

std::string score_failure(
    const google::protobuf::RepeatedPtrField<v1::PluginScores>& plugins) {
  for (const v1::PluginScores& p : plugins) {
    if (!p.error().empty()) return p.error();
    if (!p.unfinished().empty()) return p.unfinished();
  }
  return {};
}

std::string filter_failure(const v1::PreFilterResponse& r) {
  return r.unfinished().empty() ? std::string() : r.unfinished(0).reason();
}

}  // namespace schedplug::host::replay
