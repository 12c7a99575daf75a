#!/usr/bin/env bash
# The full scheduler_perf suite (integration/perf, docs/performance.md):
# builds schedplug-host, the sample plugins and etcd (from the Go module
# proxy), then runs every workload (500 and 5000 nodes, mixed, preemption)
# for every variant (default plugins, Go twins, native through shim and
# host), interleaved, three times, and prints the medians. Results:
# build/perf/results.json. Takes about an hour on 2 loaded cores.
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
cmake --build build -j "${SCHEDPLUG_JOBS:-2}" --target schedplug-host hw_encrypt dedicated_nodes network_latency

export SCHEDPLUG_HOST_BIN="$root/build/host/schedplug-host"
export SCHEDPLUG_PLUGIN_DIR="$root/build/plugins.d"
export SCHEDPLUG_ETCD_BIN="$root/build/go/etcd"
(cd integration && go build -o "$SCHEDPLUG_ETCD_BIN" go.etcd.io/etcd/server/v3)

export SCHEDPLUG_PERF=full
export SCHEDPLUG_PERF_OUT=${SCHEDPLUG_PERF_OUT:-$root/build/perf}
mkdir -p "$SCHEDPLUG_PERF_OUT"
say "uptime before: $(uptime)"
cd integration
go test -run '^$' -bench '^BenchmarkSchedplugPerf$' -benchtime 1x -timeout 0 ./perf/ 2>&1 |
  tee "$SCHEDPLUG_PERF_OUT/bench.log" | grep -v '^\s*$' | grep -vE '^\s+(scheduler_perf|[a-z_]+\.go:[0-9]+:)' || true
say "uptime after: $(uptime)"
say "results: $(rel "$SCHEDPLUG_PERF_OUT")/results.json, full output: $(rel "$SCHEDPLUG_PERF_OUT")/bench.log"
