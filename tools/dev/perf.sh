#!/usr/bin/env bash
# The full scheduler_perf suite (integration/testbed/perf, docs/performance.md):
# builds schedplug-host, the sample plugins and etcd (from the Go module
# proxy), then runs every workload (500 and 5000 nodes, mixed, preemption)
# for every variant (default plugins, Go twins, native through shim and
# host), interleaved, three times, and prints the medians. Results:
# build/perf/results.json. Two repetitions took 53 minutes on 2 cores shared
# with other builds (load average 12-20), so the default three take about
# 80; SCHEDPLUG_PERF_REPS=1 about 27.
#
#   bash tools/dev/perf.sh
#   SCHEDPLUG_PERF_REPS=1 SCHEDPLUG_PERF_WORKLOADS=Basic500 bash tools/dev/perf.sh
#
# The test command (tools/dev/test.sh) runs the short version of the same
# suite as part of `go test ./...` (TestSchedulerPerfShort).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
root=$schedplug_root
cd "$root"
need_go

if [[ ! -f build/build.ninja ]]; then
  cxx_configure
fi
cmake --build build -j "${SCHEDPLUG_JOBS:-2}" --target schedplug-host hw_encrypt dedicated_nodes network_latency shape_fit device_share \
  dedicated_nodes_no_hints network_latency_no_hints

export SCHEDPLUG_HOST_BIN="$root/build/host/schedplug-host"
export SCHEDPLUG_PLUGIN_DIR="$root/build/plugins.d"
export SCHEDPLUG_ETCD_BIN="$root/build/go/etcd"
(cd integration && go build -o "$SCHEDPLUG_ETCD_BIN" go.etcd.io/etcd/server/v3)

export SCHEDPLUG_PERF=full
export SCHEDPLUG_PERF_OUT=${SCHEDPLUG_PERF_OUT:-$root/build/perf}
mkdir -p "$SCHEDPLUG_PERF_OUT"
say "uptime before: $(uptime)"
log="$SCHEDPLUG_PERF_OUT/bench.log"
say "running the suite (output: $(rel "$log"))"
rc=0
(cd integration && go test -run '^$' -bench '^BenchmarkSchedplugPerf$' -benchtime 1x -timeout 0 ./testbed/perf/) >"$log" 2>&1 || rc=$?
say "uptime after: $(uptime)"
# The summary table, then any failure.
sed -n '/^schedplug scheduler_perf,/,/^results: /p' "$log"
grep -E '^(--- FAIL|FAIL|ok)|^panic:' "$log" || true
if [[ $rc != 0 ]]; then
  say "the suite failed (exit $rc); see $(rel "$log") and the logs in $(rel "$SCHEDPLUG_PERF_OUT")/logs"
  exit "$rc"
fi
say "results: $(rel "$SCHEDPLUG_PERF_OUT")/results.json"
