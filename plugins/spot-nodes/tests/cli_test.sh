#!/usr/bin/env bash
# SpotNodes, the Rust sample, through the schedplug CLI (the host's loader,
# checks and runtime): inspect reports what the Rust export declared, check
# accepts a profile enabling it, simulate places pods as the plugin says.
#   cli_test.sh SCHEDPLUG_CLI PLUGIN_DIR DATA_DIR
set -uo pipefail
cli=$1 dir=$2 data=$3
failures=0
expect() { # expect WHAT OUTPUT PATTERN...
  local what=$1 out=$2
  shift 2
  for pattern in "$@"; do
    if ! grep -qE -- "$pattern" <<<"$out"; then
      echo "FAIL: $what: no line matches /$pattern/ in:"
      echo "$out"
      failures=$((failures + 1))
    fi
  done
}

out=$("$cli" inspect "$dir/spot_nodes.so" 2>&1) || { echo "FAIL: inspect exited $?: $out"; exit 1; }
expect inspect "$out" '^name: +SpotNodes$' '^version: +1\.0\.0$' \
  '^extension points: +PreFilter, Filter, PreScore, Score' '^events: +NodeAdd, NodeUpdateLabel$' \
  '^ *hints: +FilterIgnoresNodePods, FilterIgnoresPodIdentity, FilterReadsDeclaredPodKeys, ScoreIgnoresPodIdentity$'
json=$("$cli" inspect --json "$dir/spot_nodes.so" 2>&1)
expect "inspect --json" "$json" '"name": *"SpotNodes"'

out=$("$cli" check --config "$data/scheduler-config.yaml" --plugins "$dir" 2>&1)
rc=$?
[[ $rc == 0 ]] || { echo "FAIL: check exited $rc"; failures=$((failures + 1)); }
expect check "$out" '^ok: 1 plugin'

# Args are refused with the plugin's sentence, naming the arg.
bad=$(mktemp)
trap 'rm -f "$bad"' EXIT
sed 's/^    plugins:/    pluginConfig:\n      - name: SpotNodes\n        args: {nodeLabel: x}\n    plugins:/' \
  "$data/scheduler-config.yaml" >"$bad"
out=$("$cli" check --config "$bad" --plugins "$dir" 2>&1)
rc=$?
[[ $rc == 1 ]] || { echo "FAIL: check of a config with args exited $rc, want 1"; failures=$((failures + 1)); }
expect "check with args" "$out" 'SpotNodes.*nodeLabel'

out=$("$cli" simulate --native-only --config "$data/scheduler-config.yaml" --plugins "$dir" \
  --nodes "$data/nodes.yaml" --pods "$data/pods.yaml" --explain default/typo-1 2>&1)
rc=$?
[[ $rc == 1 ]] || { echo "FAIL: simulate exited $rc, want 1 (one pod unschedulable)"; failures=$((failures + 1)); }
expect simulate "$out" '^default/web-1 +on-demand-1 ' '^default/batch-1 +spot-1 +\(score 100\)' \
  '^default/typo-1 +unschedulable: 0/2 nodes are available: 2 pod.s annotation schedplug.io/interruptible must be "true" or "false"' \
  'SpotNodes +filter +UnschedulableAndUnresolvable'

if ((failures > 0)); then
  echo "$failures check(s) failed"
  exit 1
fi
echo "SpotNodes: inspect, check and simulate agree with the plugin"
