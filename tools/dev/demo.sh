#!/usr/bin/env bash
# THE main command (README): on a fresh machine installs what is missing,
# builds the host and the sample plugins into build/, then runs the demo:
# a local kube-apiserver + etcd, schedplug-host, kube-scheduler with the
# shim, six nodes and a handful of pods; it prints where each pod went (or
# why it is Pending) and shuts everything down (Ctrl-C works too).
# One line per step on the terminal, the result tables last; full output in
# build/logs/ (the components' logs of the demo run in build/logs/demo/).
#
#   bash tools/dev/demo.sh            # extra flags go to schedplug-demo:
#   bash tools/dev/demo.sh -timeout 3m
#   bash tools/dev/demo.sh --help     # every flag
#   bash tools/dev/demo.sh --plugins DIR --config FILE --nodes FILE --pods FILE
#                                     # your own plugins, nodes and pods (README)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
root=$schedplug_root
# Relative paths in the flags (--plugins my-plugin/build) are the caller's.
caller_dir=$PWD
cd "$root"

bash tools/dev/install-deps.sh
need_go

jobs=${SCHEDPLUG_JOBS:-2}
if [[ ! -f build/build.ninja ]]; then
  step --fatal cxx-configure cxx_configure
fi
step --fatal cxx-build cmake --build build -j "$jobs" --target schedplug-host schedplug hw_encrypt dedicated_nodes network_latency

bin="$root/build/go"
mkdir -p "$bin"
step --fatal go-mod-download bash -c 'cd integration && go mod download'
say "go-build: kube-scheduler (upstream + shim), kube-scheduler-simulate and schedplug-demo; the first build takes several minutes"
# Without cgo, as tools/dev/test.sh builds: the same static kube-scheduler
# (its image needs one: deploy/build-images.sh), and one setting for every
# build keeps Go's build cache shared between the two scripts.
export CGO_ENABLED=0
step --fatal go-build-scheduler go_build_scheduler "$bin/kube-scheduler"
# kube-scheduler-simulate goes beside the schedplug CLI, where `schedplug
# simulate` looks for it (docs/simulate.md).
step --fatal go-build bash -c "cd integration && go build -o '$root/build/tools/schedplug/kube-scheduler-simulate' ./scheduler/cmd/kube-scheduler-simulate &&
  go build -o '$bin/schedplug-demo' ./testbed/cmd/schedplug-demo"

export SCHEDPLUG_HOST_BIN="$root/build/host/schedplug-host"
export SCHEDPLUG_PLUGIN_DIR="$root/build/plugins.d"
export SCHEDPLUG_SCHEDULER_BIN="$bin/kube-scheduler"
cd "$caller_dir"
exec "$bin/schedplug-demo" -config-dir "$root/config/demo" -keep-logs "$SCHEDPLUG_LOG_DIR/demo" "$@"
