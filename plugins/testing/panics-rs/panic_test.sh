#!/usr/bin/env bash
# A Rust plugin's filter panics on spot nodes: the host's runtime (through
# schedplug simulate --native-only, which runs the host's loader, chain and
# thread pool) reports an ERROR naming the plugin and the hook for every
# pod, and goes
# on to the next pod; nothing unwinds into C++, nothing dies to a signal.
#   panic_test.sh SCHEDPLUG_CLI PLUGIN_DIR DATA_DIR   (DATA_DIR: nodes.yaml, pods.yaml)
set -uo pipefail
cli=$1 dir=$2 data=$3
config=$(mktemp)
trap 'rm -f "$config"' EXIT
cat >"$config" <<'YAML'
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: default-scheduler
    plugins:
      multiPoint:
        enabled:
          - name: PanicsInRust
YAML
out=$(RUST_BACKTRACE=0 "$cli" simulate --native-only --config "$config" --plugins "$dir" \
  --nodes "$data/nodes.yaml" --pods "$data/pods.yaml" 2>&1)
rc=$?
fail=0
if [[ $rc != 1 ]]; then
  echo "FAIL: simulate exited $rc, want 1 (plugin errors; above 128 means a signal)"
  fail=1
fi
want='returned Error on node "spot-1": plugin PanicsInRust panicked in filter: no spot node for spot-1'
if [[ $(grep -c -- "$want" <<<"$out") != 3 ]]; then
  echo "FAIL: want the panic reported as an Error for each of the 3 pods: $want"
  fail=1
fi
if ! grep -q '3 pods to schedule: 0 placed (0 ties), 0 unschedulable, 3 errors' <<<"$out"; then
  echo "FAIL: the run did not go on through every pod"
  fail=1
fi
if ((fail)); then
  echo "$out"
  exit 1
fi
echo "PanicsInRust: each panic reported as an Error naming the plugin and the hook; the run went on"
