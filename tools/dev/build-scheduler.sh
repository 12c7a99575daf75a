#!/usr/bin/env bash
# Builds kube-scheduler with the shim for one supported Kubernetes minor or
# for all of them (integration/k8s/minors): build/go/kube-scheduler for the
# default minor, build/go/kube-scheduler-<minor> for each other.
# schedplug-host, the CLI and the plugins are the same for every minor.
# docs/kubernetes-versions.md.
#
#   bash tools/dev/build-scheduler.sh                 # the default minor
#   bash tools/dev/build-scheduler.sh --minor 1.36
#   bash tools/dev/build-scheduler.sh --minor all
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

minor=$(k8s_default_minor)
while (($# > 0)); do
  case $1 in
  --minor) minor=${2:?--minor needs a minor (1.36) or all}; shift 2 ;;
  --minor=*) minor=${1#--minor=}; shift ;;
  *) echo "build-scheduler.sh: unknown argument $1; usage: build-scheduler.sh [--minor MINOR|all]" >&2; exit 2 ;;
  esac
done
need_go
minors=("$minor")
if [[ $minor == all ]]; then mapfile -t minors < <(k8s_minors); fi
for m in "${minors[@]}"; do
  out=$(k8s_scheduler_bin "$m") || exit 1
  step --fatal "go-build-scheduler-$m" go_build_scheduler "$out" "$m"
  say "kube-scheduler $(k8s_version "$m"): $(rel "$out")"
done
