// The test kit's checks of what a plugin promised: the filter and score
// hints (SCHEDPLUG_HINT_*: node pods, pod identity, declared pod keys) and
// the data it declared (SCHEDPLUG_DATA_*: a hook that answers differently
// with a bit it did not declare is named with the bit to declare). Members
// of Plugin (schedplug/testing/plugin.hpp), defined here; the declared
// events' checks are in schedplug/testing/events.hpp. Part of the test kit;
// include schedplug/testing.hpp.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "schedplug/plugin.h"
#include "schedplug/runtime.hpp"
#include "schedplug/testing/plugin.hpp"

namespace schedplug::testing {

inline std::string Plugin::filter_promise_problem(const schedplug_pod& given,
                                                  const schedplug_pod& pod,
                                                  const schedplug_node& node,
                                                  const Verdict& v) const {
  if ((settings_.hints & SCHEDPLUG_HINT_FILTER_IGNORES_NODE_PODS) != 0) {
    schedplug_node bare = node;
    bare.requested = {};
    bare.pod_count = 0;
    bare.pod_list = nullptr;
    bare.pod_list_count = 0;
    const Verdict without = filter_once(pod, bare);
    if (without.code != v.code || without.reason != v.reason) {
      return name_ + " promised SCHEDPLUG_HINT_FILTER_IGNORES_NODE_PODS " +
             "(kHints), but its filter on node \"" +
             runtime::str_of(node.name) + "\" answered " + said(v) +
             " with the node's pods and " + said(without) +
             " without them; drop the hint, or read nothing of "
             "node->requested, pod_count and pod_list";
    }
  }
  return pod_promise_problem(given, node);
}

inline std::string Plugin::identity_problem(
    const schedplug_pod& given, const schedplug_node& given_node) const {
  if ((settings_.hints & SCHEDPLUG_HINT_FILTER_IGNORES_POD_IDENTITY) == 0) {
    return {};
  }
  const schedplug_node node = sent(given_node);
  const Twin twin(given);
  const std::string got = outcome(twin.again, node);
  const std::string twin_got = outcome(twin.twin, node);
  if (got == twin_got) return {};
  return twin.differs("SCHEDPLUG_HINT_FILTER_IGNORES_POD_IDENTITY", name_,
                      "on node \"" + runtime::str_of(node.name) + "\" ", got,
                      twin_got, "applies, pod_begin and filter");
}

inline std::string Plugin::score_identity_problem(
    const schedplug_pod& given, std::span<const schedplug_node> nodes,
    bool normalized) const {
  if ((settings_.hints & SCHEDPLUG_HINT_SCORE_IGNORES_POD_IDENTITY) == 0) {
    return {};
  }
  const Twin twin(given);
  const std::string got = score_outcome(twin.again, nodes, normalized);
  const std::string twin_got = score_outcome(twin.twin, nodes, normalized);
  if (got == twin_got) return {};
  return twin.differs("SCHEDPLUG_HINT_SCORE_IGNORES_POD_IDENTITY", name_, "",
                      got, twin_got,
                      "applies, pod_begin, score and normalize_score");
}

inline std::string Plugin::undeclared_keys_problem(
    const schedplug_pod& given, const schedplug_node& given_node) const {
  if ((settings_.hints & SCHEDPLUG_HINT_FILTER_READS_DECLARED_POD_KEYS) == 0) {
    return {};
  }
  const schedplug_node node = sent(given_node);
  const auto declared = [](const std::vector<std::string>& keys,
                           const std::string& key) {
    return std::binary_search(keys.begin(), keys.end(), key);
  };
  std::string extra = kUndeclaredKey;
  while (declared(pod_keys_.labels(), extra) ||
         declared(pod_keys_.annotations(), extra)) {
    extra += "-";
  }
  const std::string value = "x";
  const uint64_t kv_size = schedplug_pod_kv_size(&given);
  std::vector<std::string> dropped_labels, dropped_annotations;
  std::vector<uint64_t> label_store, annotation_store;
  schedplug_pod again = given;
  again.state = nullptr;
  schedplug_pod copy = again;
  copy.labels = only_declared(given.labels, kv_size, pod_keys_.labels(), extra,
                              value, dropped_labels, label_store);
  copy.annotations =
      only_declared(given.annotations, kv_size, pod_keys_.annotations(), extra,
                    value, dropped_annotations, annotation_store);
  const std::string got = outcome(again, node);
  const std::string copy_got = outcome(copy, node);
  if (got == copy_got) return {};
  const auto listed = [](const std::vector<std::string>& keys) {
    if (keys.empty()) return std::string("none");
    std::string out;
    for (const std::string& k : keys) {
      out += (out.empty() ? "\"" : ", \"") + k + "\"";
    }
    return out;
  };
  return name_ + " promised SCHEDPLUG_HINT_FILTER_READS_DECLARED_POD_KEYS " +
         "(kHints), but on node \"" + runtime::str_of(node.name) + "\" pod \"" +
         runtime::str_of(given.name) + "\" got " + got +
         " and a copy without its undeclared labels (" +
         listed(dropped_labels) + ") and annotations (" +
         listed(dropped_annotations) +
         ") and with the undeclared label and annotation \"" + extra +
         "\": \"" + value + "\" got " + copy_got +
         "; declare every pod label and annotation key the plugin reads in "
         "applies, pod_begin and filter (declared label keys: " +
         listed(pod_keys_.labels()) +
         "; annotation keys: " + listed(pod_keys_.annotations()) +
         "), or drop the hint";
}

inline std::string Plugin::undeclared_data_problem(
    const Pod& pod, std::span<const Node> nodes) const {
  uint64_t given = detail::carried(pod.view());
  for (const Node& node : nodes) given |= detail::carried(node.view());
  const uint64_t undeclared = given & ~data() & SCHEDPLUG_DATA_ALL;
  if (undeclared == 0) return {};
  const Cycle host = run_sending(pod, nodes, data(), false);
  uint64_t reads = 0;
  Difference first;
  for (uint64_t bit = 1; bit <= undeclared; bit <<= 1) {
    if ((undeclared & bit) == 0) continue;
    Difference d =
        cycle_difference(host, run_sending(pod, nodes, data() | bit, false));
    if (d.where.empty()) continue;
    reads |= bit;
    if (first.where.empty()) first = std::move(d);
  }
  if (reads == 0) reads = undeclared;  // only together, if at all
  Difference d =
      cycle_difference(host, run_sending(pod, nodes, data() | reads, false));
  if (d.where.empty()) d = std::move(first);
  if (d.where.empty()) return {};
  const std::string names = detail::data_bit_names(reads);
  const char* it = (reads & (reads - 1)) == 0 ? "it" : "them";
  return name_ + " reads data it did not declare (" + names + "): " + d.where +
         " without " + it + " (as schedplug-host sends it) and " + d.with +
         " with " + it + " (as the test gave it); add " + names +
         " to the data it declares (settings->data in create(), kData in " +
         "the C++ layer)";
}

inline Plugin::Difference Plugin::cycle_difference(const Cycle& a,
                                                   const Cycle& b) const {
  const auto gate = [](const Cycle& c) {
    return std::string(c.filter_skipped ? "skipped" : "ran") + " filter, " +
           (c.score_skipped ? "skipped" : "ran") + " score";
  };
  if (a.filter_skipped != b.filter_skipped ||
      a.score_skipped != b.score_skipped) {
    return {std::string("its ") +
                (d_.pod_begin != nullptr ? "pod_begin" : "applies") + " " +
                gate(a),
            gate(b)};
  }
  for (size_t i = 0; i < std::min(a.nodes.size(), b.nodes.size()); ++i) {
    const NodeResult& x = a.nodes[i];
    const NodeResult& y = b.nodes[i];
    const std::string on = "on node \"" + x.node + "\" its ";
    if (x.filter.code != y.filter.code || x.filter.reason != y.filter.reason) {
      return {on + "filter answered " + said(x.filter), said(y.filter)};
    }
    const auto raw = [](const NodeResult& r) {
      return r.scored ? std::to_string(r.raw) : std::string("no score");
    };
    if (x.scored != y.scored || x.raw != y.raw) {
      return {on + "score answered " + raw(x), raw(y)};
    }
    if (x.score != y.score) {
      return {on + "score normalized to " + std::to_string(x.score),
              std::to_string(y.score)};
    }
  }
  if (a.nodes.size() != b.nodes.size() || a.error != b.error) {
    const auto failed = [](const Cycle& c) {
      return c.error.empty() ? std::string("no error")
                             : "the error \"" + c.error + "\"";
    };
    return {"its cycle had " + failed(a), failed(b)};
  }
  return {};
}

inline std::string Plugin::pod_promise_problem(
    const schedplug_pod& given, const schedplug_node& node) const {
  std::string problem = identity_problem(given, node);
  if (problem.empty()) problem = undeclared_keys_problem(given, node);
  return problem;
}

}  // namespace schedplug::testing
