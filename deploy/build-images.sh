#!/usr/bin/env bash
# Builds the three schedplug images from a build tree as OCI archives, with
# no registry and no container daemon (deploy/README.md):
#   OUT/schedplug-host.oci.tar     schedplug-host + schedplug CLI + their libraries
#   OUT/kube-scheduler.oci.tar     kube-scheduler with the shim (static)
#   OUT/schedplug-plugins.oci.tar  a plugin bundle for an image volume
#   OUT/kube-scheduler-<minor>.oci.tar  kube-scheduler for each other
#                                  Kubernetes minor (integration/k8s/minors)
#
#   deploy/build-images.sh [OUT]      # default build/images
#
# Inputs (defaults: the paths tools/dev/test.sh builds):
#   SCHEDPLUG_HOST_BIN, SCHEDPLUG_CLI_BIN, SCHEDPLUG_SCHEDULER_BIN, SCHEDPLUG_PLUGIN_DIR,
#   and beside SCHEDPLUG_SCHEDULER_BIN, kube-scheduler-<minor> for each other
#   minor (tools/dev/build-scheduler.sh --minor all)
# Labels and dates come from the checkout: the CMake project version, the
# Kubernetes version integration/go.mod pins, the commit and its time, so a
# rebuild of one commit gives the same digests.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# Relative paths are the caller's: resolved before the cd below.
out=$(realpath -m "${1:-$root/build/images}")
host=$(realpath -m "${SCHEDPLUG_HOST_BIN:-$root/build/host/schedplug-host}")
cli=$(realpath -m "${SCHEDPLUG_CLI_BIN:-$root/build/tools/schedplug/schedplug}")
scheduler=$(realpath -m "${SCHEDPLUG_SCHEDULER_BIN:-$root/build/go/kube-scheduler}")
plugins=$(realpath -m "${SCHEDPLUG_PLUGIN_DIR:-$root/build/plugins.d}")
cd "$root"
source tools/dev/lib.sh

minors=()
for m in $(k8s_other_minors); do
  bin="$(dirname "$scheduler")/$(basename "$(k8s_scheduler_bin "$m")")"
  if [[ ! -x $bin ]]; then
    echo "build-images.sh: kube-scheduler for Kubernetes $m is not built ($bin): bash tools/dev/build-scheduler.sh --minor $m (or --minor all)." >&2
    exit 1
  fi
  minors+=(--minor-scheduler "$(k8s_version "$m")=$bin")
done

version=$(sed -n 's/^project(schedplug VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
k8s=$(cd integration && go list -m -f '{{.Version}}' k8s.io/kubernetes)
revision=$(git rev-parse HEAD)
if [[ -n $(git status --porcelain --untracked-files=no) ]]; then revision+=-dirty; fi
created=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct)}
source=${SCHEDPLUG_SOURCE_URL:-$(git config --get remote.origin.url || echo unknown)}

cd deploy
exec go run ./cmd/schedplug-image --host "$host" --cli "$cli" --scheduler "$scheduler" \
  --plugins "$plugins" --version "$version" --scheduler-version "$k8s" \
  --revision "$revision" --source "$source" --created "$created" "${minors[@]}" -o "$out"
