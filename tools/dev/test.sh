#!/usr/bin/env bash
# THE test command (README, CI): installs what is missing, builds the host,
# the CLI and the plugins into build/ and runs the build system's own tests
# there (ctest), then the Rust tests, the Go tests in integration/, whose
# end-to-end tests start etcd, kube-apiserver, the host and kube-scheduler
# for real (docs/e2e.md), the shim under Go's race detector, and last the
# C++ test programs under the sanitizers and a bounded fuzz run
# (docs/sanitizers.md). Exits non-zero on any failure.
#
#   bash tools/dev/test.sh            # everything
#   GO_TEST_FLAGS="-run HwEncrypt" bash tools/dev/test.sh
#   SCHEDPLUG_VERBOSE=1 bash tools/dev/test.sh   # stream every step's output
#
# Each step below is one `step NAME CMD...` (tools/dev/lib.sh): it prints one
# line when it starts and one when it ends, with the elapsed time, keeps the
# full output in build/logs/NAME.log, and shows its last lines on failure.
# Every step runs even if an earlier one failed (except where --fatal says
# the rest cannot run), and the end lists the failed steps.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
root=$schedplug_root
cd "$root"

bash tools/dev/install-deps.sh
need_go
step install-deps-test bash tools/dev/install-deps-test.sh

jobs=${SCHEDPLUG_JOBS:-2}
if [[ ! -f build/build.ninja ]]; then
  step --fatal cxx-configure cxx_configure
fi
# Everything but the C++ test programs (cmake/SchedplugArtifacts.cmake):
# those are compiled and run once, in the sanitizer tree below; compiling
# them here too took as long as the rest of the build.
step --fatal cxx-build cmake --build build -j "$jobs" --target schedplug_artifacts

# ctest's closing lines (pass count, failed tests) stay on the terminal.
ctest_summary='tests passed|tests failed out of|Total Test time|The following tests|^[[:space:]]+[0-9]+ - .*\(|Errors while running'
# Here only the tests of the build system itself (the SDK built out of the
# tree, the compile errors, the Debian packages) and the one that needs
# glibc's allocator (lib.sh). Every other ctest test runs under the
# sanitizers.
step --show "$ctest_summary" ctest ctest --test-dir build --output-on-failure -j "$jobs" -R "$cxx_plain_build_tests"

# The Rust crates, the SDK (sdk/rust/schedplug: the layout test compiles
# plugin.h with cc) and the Rust sample plugin (plugins/spot-nodes): their
# tests with the cargo on PATH and with Debian 12's own Rust, the crates'
# minimum (1.63), and clippy where the toolchain on PATH has it (rustup's
# does; Debian 12 packages none). One target directory per toolchain.
rust_crates=("$root/sdk/rust/schedplug" "$root/plugins/spot-nodes" "$root/plugins/testing/panics-rs")
step rust-test bash -c 'for c in "${@:2}"; do (cd "$c" && RUSTFLAGS=-Dwarnings CARGO_TARGET_DIR="$1/build/rust" cargo test --offline) || exit 1; done' _ "$root" "${rust_crates[@]}"
step rust-test-debian bash -c 'for c in "${@:2}"; do (cd "$c" && PATH=/usr/bin:$PATH RUSTFLAGS=-Dwarnings CARGO_TARGET_DIR="$1/build/rust-1.63" /usr/bin/cargo test --offline) || exit 1; done' _ "$root" "${rust_crates[@]}"
if cargo clippy --version >/dev/null 2>&1; then
  step rust-clippy bash -c 'for c in "${@:2}"; do (cd "$c" && CARGO_TARGET_DIR="$1/build/rust" cargo clippy --offline --all-targets -- -D warnings) || exit 1; done' _ "$root" "${rust_crates[@]}"
else
  say "rust-clippy: not run, the cargo on PATH ($(command -v cargo)) has no clippy; rustup component add clippy"
fi

export SCHEDPLUG_HOST_BIN="$root/build/host/schedplug-host"
export SCHEDPLUG_PLUGIN_DIR="$root/build/plugins.d"
export SCHEDPLUG_SCHEDULER_BIN="$root/build/go/kube-scheduler"
# go test's per-package lines, failures and skips: what --show prints.
go_summary='^(ok|FAIL)[[:space:]]|^[[:space:]]*--- (FAIL|SKIP)|^panic:|\[no test files\]'
step go-mod-download bash -c 'cd integration && go mod download'
# Go builds and tests without cgo: kube-scheduler must be static for its
# image (deploy/), and one setting for every step keeps Go's build cache
# shared between them. Only the race detector needs cgo (its own step).
export CGO_ENABLED=0
# Built here rather than inside the first e2e test, so a cold build (many
# minutes on 2 cores) does not count against go test's timeout.
step go-build-scheduler go_build_scheduler "$SCHEDPLUG_SCHEDULER_BIN"
# kube-scheduler for every other supported Kubernetes minor
# (integration/k8s/minors), for its image and its tests below.
for minor in $(k8s_other_minors); do
  step go-build-scheduler-"$minor" go_build_scheduler "$(k8s_scheduler_bin "$minor")" "$minor"
done
# kube-scheduler-simulate, which `schedplug simulate` runs from beside itself
# (docs/simulate.md): the same kube-scheduler, on dumps instead of a cluster.
step go-build-simulator bash -c 'cd integration && go build -o "$1" ./scheduler/cmd/kube-scheduler-simulate' _ "$root/build/tools/schedplug/kube-scheduler-simulate"
# The same command with the Go twins of the sample plugins compiled in, for
# the differential test (docs/e2e.md).
export SCHEDPLUG_TWIN_SCHEDULER_BIN="$root/build/go/kube-scheduler-twin"
step go-build-scheduler-twin bash -c 'cd integration && go build -o "$SCHEDPLUG_TWIN_SCHEDULER_BIN" ./testbed/cmd/kube-scheduler-twin'
# etcd for the scheduler_perf suite (integration/testbed/perf, docs/performance.md),
# built from the Go module proxy at the version integration/go.mod pins.
export SCHEDPLUG_ETCD_BIN="$root/build/go/etcd"
step go-build-etcd bash -c 'cd integration && go build -o "$SCHEDPLUG_ETCD_BIN" go.etcd.io/etcd/server/v3'
# The real node of deploy/helm/realnode_test.go, which follows the deploy
# guide on a kubelet (docs/deploy.md): kubelet, kube-apiserver,
# kube-controller-manager, kubectl, helm and containerd 2, into build/go.
step go-build-cluster go_build_cluster "$root/build/go"

# The images (deploy/build-images.sh from the outputs above, twice: equal
# digests; each unpacked and its entry point run, the demo with the host
# and kube-scheduler from the image roots) and the Helm chart (lint,
# render, server-side dry run through schedplug-dryrun, schema refusals).
export SCHEDPLUG_CLI_BIN="$root/build/tools/schedplug/schedplug"
export SCHEDPLUG_DRYRUN_BIN="$root/build/go/schedplug-dryrun"
step go-build-dryrun bash -c 'cd integration && go build -o "$SCHEDPLUG_DRYRUN_BIN" ./testbed/cmd/schedplug-dryrun'
# The demo, run by the image test with the host and kube-scheduler from the
# unpacked image roots (the end-to-end smoke test of the images).
export SCHEDPLUG_DEMO_BIN="$root/build/go/schedplug-demo"
step go-build-demo bash -c 'cd integration && go build -o "$SCHEDPLUG_DEMO_BIN" ./testbed/cmd/schedplug-demo'
step --show "$go_summary" deploy-test bash -c 'cd deploy && go test -count=1 -timeout 25m -v ./...'

# -v goes to the log only; the terminal gets go test's per-package lines,
# every failed or skipped test, and the counts below.
# -count=1: the end-to-end tests depend on binaries outside Go's cache key.
# shellcheck disable=SC2016
step --show "$go_summary" go-test bash -c 'cd integration && go test -count=1 -timeout 60m -v ${GO_TEST_FLAGS:-} ./...'
gotest_log="$SCHEDPLUG_LOG_DIR/go-test.log"
say "go tests: $(grep -cE '^[[:space:]]*--- PASS' "$gotest_log" || true) passed," \
  "$(grep -cE '^[[:space:]]*--- FAIL' "$gotest_log" || true) failed," \
  "$(grep -cE '^[[:space:]]*--- SKIP' "$gotest_log" || true) skipped (tests and subtests)"

# Every other supported Kubernetes minor (integration/k8s/minors): the
# shim's and the command's unit tests built against it, and the smoke test
# (testbed/minors) with its kube-scheduler (built above) against the
# minor's own kube-apiserver. The full suite above runs on the
# default minor, whose smoke test it includes. What each minor adds, cold
# and warm: docs/kubernetes-versions.md.
for minor in $(k8s_other_minors); do
  step --show "$go_summary" go-test-"$minor" k8s_go_test "$minor"
done

# The shim, the Go code that runs inside kube-scheduler, again under Go's
# race detector (its tests drive the manager, sessions and fallbacks from
# many goroutines). Only the shim package: most end-to-end tests run
# kube-scheduler as a separate, uninstrumented binary, so -race there would
# mostly check the test harness at the price of a race build of all of
# Kubernetes (docs/sanitizers.md).
step --show "$go_summary" go-test-race bash -c 'cd integration && CGO_ENABLED=1 go test -race -count=1 -timeout 30m ./scheduler/shim/...'

# The C++ suites again under AddressSanitizer+UndefinedBehaviorSanitizer
# (clang; the same tree holds the libFuzzer targets) and the threaded suites
# under ThreadSanitizer (GCC), then a bounded, reproducible libFuzzer run
# (fixed seed and input counts) over each fuzz target's seed corpus and past
# crashes. Last, so the suites above report first; each its own directory
# (build-asan/, build-tsan/) compiled through ccache. What runs where, and
# the measured cost: docs/sanitizers.md, docs/fuzzing.md.
step sanitize-asan-build bash tools/dev/sanitize.sh build asan
step --show "$ctest_summary" sanitize-asan-test bash tools/dev/sanitize.sh test asan
step --show '^== fuzz_|found a crash|Done [0-9]+ runs' fuzz-ci bash tools/dev/sanitize.sh fuzz-ci
step sanitize-tsan-build bash tools/dev/sanitize.sh build tsan
step --show "$ctest_summary" sanitize-tsan-test bash tools/dev/sanitize.sh test tsan

steps_finish
say "all tests passed"
