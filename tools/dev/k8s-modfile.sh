#!/usr/bin/env bash
# Writes integration/k8s/<minor>.mod and .sum, the Go module files that
# build the shim and kube-scheduler (and the per-minor tests) against
# another Kubernetes minor than integration/go.mod, for each minor
# integration/k8s/minors lists (all of them without arguments; the default
# minor has no such file). Each is integration/go.mod with every Kubernetes
# module moved to that minor's version and, when that minor needs a newer
# Go, its go line; the other modules stay at least at the default's
# versions (Go's minimum version selection). The .sum holds what the
# packages built for that minor need; not `go mod tidy`, which would also
# resolve the imports of packages only the default minor builds (the
# scheduler_perf suite) by moving Kubernetes back to its newest release.
# docs/kubernetes-versions.md.
#
#   bash tools/dev/k8s-modfile.sh          # every minor but the default
#   bash tools/dev/k8s-modfile.sh 1.38     # one
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
need_go
cd "$schedplug_root/integration"

default=$(k8s_version "$(k8s_default_minor)")
minors=("$@")
if ((${#minors[@]} == 0)); then mapfile -t minors < <(k8s_other_minors); fi
for minor in "${minors[@]}"; do
  version=$(k8s_version "$minor") || { echo "k8s-modfile: $minor is not in integration/k8s/minors; add its line there first." >&2; exit 1; }
  if [[ $minor == "$(k8s_default_minor)" ]]; then continue; fi
  mod="k8s/$minor.mod"
  # v1.37.2 -> v1.36.3 (k8s.io/kubernetes), v0.37.2 -> v0.36.3 (the staging modules).
  from=${default#v1} to=${version#v1}
  sed -e "s/ v\([01]\)${from//./\\.}\( \|\$\)/ v\1${to}\2/" go.mod >"$mod"
  : >"k8s/$minor.sum"
  # k8s.io/kubernetes' own go.mod (which the download leaves in the module
  # cache even when the Go running it is too old to use the module): its
  # go line, if newer than the default's, and its staging modules, which
  # come and go between minors and which it requires at v0.0.0, so each is
  # pinned to that minor's release and the others are dropped.
  go mod download k8s.io/kubernetes@"$version" 2>/dev/null || true
  upstream="$(go env GOMODCACHE)/cache/download/k8s.io/kubernetes/@v/$version.mod"
  want=$(awk '$1 == "go" { print $2; exit }' "$upstream")
  if go_version_ge "$want" "$(go_required)" && [[ $want != "$(go_required)" ]]; then
    go mod edit -modfile="$mod" -go="$want"
  fi
  staging=$(awk '$2 == "=>" && $3 ~ "^./staging/" { print $1 }' "$upstream")
  edits=()
  for m in $(awk '$2 == "=>" && $1 ~ "^k8s.io/" { print $1 }' "$mod"); do
    if ! grep -qxF "$m" <<<"$staging"; then edits+=(-dropreplace="$m" -droprequire="$m"); fi
  done
  for m in $staging; do edits+=(-replace="$m=$m@v0${to}"); done
  GOTOOLCHAIN=$(k8s_toolchain "$minor") go mod edit -modfile="$mod" "${edits[@]}"
  GOFLAGS=-mod=mod k8s_go "$minor" list -deps -test "${k8s_minor_packages[@]}" >/dev/null
  got=$(k8s_pinned "$mod")
  if [[ $got != "$version" ]]; then
    echo "k8s-modfile: $mod ended up with k8s.io/kubernetes $got, not $version: a package built for every minor imports one that $version does not have." >&2
    exit 1
  fi
  say "k8s-modfile: $mod pins k8s.io/kubernetes $version (go $(awk '$1 == "go" { print $2; exit }' "$mod"))"
done
