// One call's share of a cycle summary (recent_cycles.hpp), from the chain's
// outcome: what PreFilter and FilterNodes found (filter_part) and what
// PreScore found (score_part). The service stores them; the host bench
// times them.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "host/chain/filter_chain.hpp"
#include "host/chain/score_chain.hpp"
#include "host/explain/recent_cycles.hpp"
#include "host/plugin/created_plugins.hpp"
#include "host/table/node_table.hpp"

namespace schedplug::host {

// `filtered`: the node evaluations the filters made.
CycleSummary filter_part(const ProfilePlugins& profile, const v1::Pod& pod,
                         const NodeTable& table, const FilterOutcome& outcome,
                         size_t filtered);

// `weights`: per scorer of the profile (missing ones count 1); `slots`:
// the scored nodes' table slots, parallel to the outcome's scores.
CycleSummary score_part(const ProfilePlugins& profile,
                        const std::vector<int>& weights, const v1::Pod& pod,
                        const NodeTable& table, std::span<const uint32_t> slots,
                        const ScoreOutcome& outcome);

// Makes a score part one of scores ahead: each scorer's policy, for the
// normalization that waits for kube-scheduler's choice of nodes.
void mark_ahead(const ProfilePlugins& profile, const ScoreOutcome& outcome,
                CycleSummary& part);

}  // namespace schedplug::host
