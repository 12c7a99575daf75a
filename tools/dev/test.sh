#!/usr/bin/env bash
# THE test command (README, CI): installs what is missing, builds the C++
# tree into build/, runs its unit tests (ctest), then the Go tests in
# integration/, whose end-to-end tests start etcd, kube-apiserver, the host
# and kube-scheduler for real (docs/e2e.md). Exits non-zero on any failure.
#
#   bash tools/dev/test.sh            # everything
#   GO_TEST_FLAGS="-run HwEncrypt -v" bash tools/dev/test.sh
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"

bash tools/dev/install-deps.sh

jobs=${SCHEDPLUG_JOBS:-2}
if [[ ! -f build/build.ninja ]]; then
  cmake -G Ninja -S . -B build -DCMAKE_BUILD_TYPE="${CMAKE_BUILD_TYPE:-RelWithDebInfo}"
fi
cmake --build build -j "$jobs"

# Both suites run even if the first fails, so one run shows every failure.
failed=()
echo "== C++ tests (ctest)"
ctest --test-dir build --output-on-failure -j "$jobs" || failed+=("ctest")

echo "== Go tests (integration/)"
export SCHEDPLUG_HOST_BIN="$root/build/host/schedplug-host"
export SCHEDPLUG_PLUGIN_DIR="$root/build/plugins.d"
cd integration
start=$(date +%s)
# Built here rather than inside the first e2e test, so a cold build (many
# minutes on 2 cores) does not count against go test's timeout.
export SCHEDPLUG_SCHEDULER_BIN="$root/build/go/kube-scheduler"
go build -o "$SCHEDPLUG_SCHEDULER_BIN" ./cmd/kube-scheduler || failed+=("go build ./cmd/kube-scheduler")
# The same command with the Go twins of the sample plugins compiled in, for
# the differential test (docs/e2e.md).
export SCHEDPLUG_TWIN_SCHEDULER_BIN="$root/build/go/kube-scheduler-twin"
go build -tags schedplug_twin -o "$SCHEDPLUG_TWIN_SCHEDULER_BIN" ./cmd/kube-scheduler || failed+=("go build -tags schedplug_twin ./cmd/kube-scheduler")
# -count=1: the end-to-end tests depend on binaries outside Go's cache key.
# shellcheck disable=SC2086
go test -count=1 -timeout 60m ${GO_TEST_FLAGS:-} ./... || failed+=("go test")
echo "== Go tests took $(($(date +%s) - start))s (including compilation)"

if ((${#failed[@]} > 0)); then
  echo "== FAILED: ${failed[*]}" >&2
  exit 1
fi
echo "== all tests passed"
