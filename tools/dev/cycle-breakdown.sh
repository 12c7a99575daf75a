#!/usr/bin/env bash
# Where the native scheduling cycle's extra time goes (
# docs/performance.md, "Where the native cycle's extra time goes"):
# BenchmarkCycle (integration/scheduler/shim/cyclebench) at 500 and 5000
# nodes under Go's CPU profiler, one process per size, then the CPU per
# cycle of each part, read from the profile's samples of the timed cycles
# (the pprof label cycle=native|twin, which the goroutines a cycle starts
# inherit), beside the benchmark's own figures (ns/op, cpu-ns/op, GC, the
# fast path's calls, the host's time and CPU).
#
#   bash tools/dev/cycle-breakdown.sh                 # both sizes
#   CYCLES_500=4000 CYCLES_5000=1200 bash tools/dev/cycle-breakdown.sh
#   SIZES=500 bash tools/dev/cycle-breakdown.sh
#   BENCH=BenchmarkCycleNoHints bash tools/dev/cycle-breakdown.sh   # the NoHints shape
#   BENCH=BenchmarkCycleScoreOnly bash tools/dev/cycle-breakdown.sh # the ScoreOnly shape
#
# Uses the host and plugins of build/ (or $SCHEDPLUG_HOST_BIN and
# $SCHEDPLUG_PLUGIN_DIR, and $SCHEDPLUG_NO_HINTS_PLUGIN_DIR for the NoHints
# shape); writes build/cycle-breakdown/. The profiler
# samples at 100 Hz: a part under about 10 µs per cycle is a handful of
# samples at the default counts, so read those as "small".
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
out=${OUT:-$root/build/cycle-breakdown}
mkdir -p "$out"
export SCHEDPLUG_HOST_BIN=${SCHEDPLUG_HOST_BIN:-$root/build/host/schedplug-host}
export SCHEDPLUG_PLUGIN_DIR=${SCHEDPLUG_PLUGIN_DIR:-$root/build/plugins.d}
export SCHEDPLUG_NO_HINTS_PLUGIN_DIR=${SCHEDPLUG_NO_HINTS_PLUGIN_DIR:-$root/build/plugins/no-hints.d}
bench=${BENCH:-BenchmarkCycle}
bin=$out/cyclebench.test
(cd "$root/integration" && CGO_ENABLED=0 go test -c -o "$bin" ./scheduler/shim/cyclebench/)

# part|variant|focus regexp (empty: every sample of the timed cycles).
# The parts are disjoint call trees of the shim; the twin's own plugins
# are the Go twins' Filter, Score and NormalizeScore.
parts=(
  "all timed-cycle CPU|native|"
  "all timed-cycle CPU|twin|"
  "pod conversion (wire.Pod)|native|shim/wire\.Pod$"
  "delta planning (nodetable Sync.Plan, node conversion included)|native|nodetable\.\(\*Sync\)\.Plan$"
  "encoding (proto Marshal of the request)|native|proto\.MarshalOptions\.MarshalAppend$"
  "transport, shim side (socket write, read, spin)|native|session\.\(\*fastConn\)\.readFrame$|net\.\(\*conn\)\.Write$"
  "decoding (proto Unmarshal of the answer)|native|proto\.Unmarshal$"
  "window planning (which nodes the host evaluates, where the last walk ran)|native|cycle\.\(\*Tracker\)\.windowGuide|cycle\.windowFor\.func1$|cycle\.\(\*callResult\)\.passedIn$|cycle\.\(\*walkLog\)\.counted$"
  "answer indexing (newCallResult, newAheadScores)|native|cycle\.newCallResult$|cycle\.newAheadScores$"
  "shim PreFilter and PreScore, all of it (the parts above and more)|native|shim\.\(\*Plugin\)\.(PreFilter|PreScore)$"
  "per-node Filter and Score (answers looked up)|native|shim\.\(\*Plugin\)\.(Filter|Score)$"
  "normalization (NormalizeScore)|native|shim\.\(\*Plugin\)\.NormalizeScore$"
  "the twins' Filter, Score and NormalizeScore|twin|testbed/twin\."
  "GC assists in the cycle|native|runtime\.gcAssistAlloc$"
  "GC assists in the cycle|twin|runtime\.gcAssistAlloc$"
)

for n in ${SIZES:-500 5000}; do
  var=CYCLES_$n
  cycles=${!var:-}
  [[ -n $cycles ]] || cycles=$((n == 500 ? 2000 : 600))
  prof=$out/$bench-$n.prof
  log=$out/$bench-$n.txt
  if ! (cd "$root/integration/scheduler/shim/cyclebench" &&
    "$bin" -test.run '^$' -test.bench "^$bench/nodes=$n\$" -test.benchtime "${cycles}x" \
      -test.cpuprofile "$prof") >"$log" 2>&1; then
    tail -20 "$log"
    echo "$bench failed at $n nodes: $log" >&2
    exit 1
  fi
  grep -E '^Benchmark' "$log"
  # testing runs a benchmark once with b.N=1, then with b.N=cycles: both
  # are labelled.
  ops=$((cycles + 1))
  echo "CPU per cycle from the profile, $n nodes ($ops cycles of each variant):"
  for p in "${parts[@]}"; do
    IFS='|' read -r name variant focus <<<"$p"
    ms=$(go tool pprof -unit=ms -tagfocus="cycle=$variant" ${focus:+-focus="$focus"} -top -nodefraction=0 -nodecount=1000000 "$bin" "$prof" 2>/dev/null |
      sed -n 's/^Showing nodes accounting for \([0-9.]*\)ms.*/\1/p' | head -1)
    awk -v name="$name" -v v="$variant" -v ms="${ms:-0}" -v ops="$ops" \
      'BEGIN { printf "  %-62s %-6s %8.1f µs\n", name, v, 1000 * ms / ops }'
  done
done
