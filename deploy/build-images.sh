#!/usr/bin/env bash
# Builds the three schedplug images from a build tree as OCI archives, with
# no registry and no container daemon (deploy/README.md):
#   OUT/schedplug-host.oci.tar     schedplug-host + schedplug CLI + their libraries
#   OUT/kube-scheduler.oci.tar     kube-scheduler with the shim (static)
#   OUT/schedplug-plugins.oci.tar  a plugin bundle for an image volume
#
#   deploy/build-images.sh [OUT]      # default build/images
#
# Inputs (defaults: the paths tools/dev/test.sh builds):
#   SCHEDPLUG_HOST_BIN, SCHEDPLUG_CLI_BIN, SCHEDPLUG_SCHEDULER_BIN, SCHEDPLUG_PLUGIN_DIR
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

version=$(sed -n 's/^project(schedplug VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
k8s=$(cd integration && go list -m -f '{{.Version}}' k8s.io/kubernetes)
revision=$(git rev-parse HEAD)
if [[ -n $(git status --porcelain --untracked-files=no) ]]; then revision+=-dirty; fi
created=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct)}
source=${SCHEDPLUG_SOURCE_URL:-$(git config --get remote.origin.url || echo unknown)}

cd deploy
exec go run ./cmd/schedplug-image --host "$host" --cli "$cli" --scheduler "$scheduler" \
  --plugins "$plugins" --version "$version" --scheduler-version "$k8s" \
  --revision "$revision" --source "$source" --created "$created" -o "$out"
