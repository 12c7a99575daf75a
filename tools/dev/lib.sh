# Shared by tools/dev/*.sh (sourced, not run): the repository root, quiet
# timed steps with full logs in build/logs/, and the Go toolchain lookup.
#
#   source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
#   step NAME CMD...          # run CMD, output to build/logs/NAME.log
#   step --show REGEX NAME CMD...  # also print the log lines matching REGEX
#   step --fatal NAME CMD...  # stop the script (with the summary) if it fails
#   steps_finish              # list failed steps; exit 1 if any failed
#
# SCHEDPLUG_VERBOSE=1 also streams every step's output to the terminal.
# A step never stops the calling script by itself (failures are collected),
# and bash ignores `set -e` inside a shell function run as a step's CMD, so
# chain such a function's commands with && (or run `bash -c '...'`).

schedplug_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
SCHEDPLUG_LOG_DIR=${SCHEDPLUG_LOG_DIR:-$schedplug_root/build/logs}
# One clock for a script and the scripts it calls (demo.sh -> install-deps.sh).
export SCHEDPLUG_T0=${SCHEDPLUG_T0:-$(date +%s)}
failed_steps=()

# elapsed prints the time since the first script started, as m:ss.
elapsed() {
  local s=$(($(date +%s) - SCHEDPLUG_T0))
  printf '%d:%02d' $((s / 60)) $((s % 60))
}

# say prints one progress line with the elapsed time.
say() {
  printf '[%5s] %s\n' "$(elapsed)" "$*"
}

# rel prints a path relative to the repository root when it is inside it.
rel() {
  local p=$1
  if [[ $p == "$schedplug_root"/* ]]; then p=${p#"$schedplug_root"/}; fi
  printf '%s' "$p"
}

step() {
  local show="" fatal=0
  while [[ ${1:-} == --* ]]; do
    case $1 in
    --show) show=$2; shift 2 ;;
    --fatal) fatal=1; shift ;;
    *) echo "step: unknown option $1" >&2; return 2 ;;
    esac
  done
  local name=$1
  shift
  local log="$SCHEDPLUG_LOG_DIR/$name.log"
  mkdir -p "$SCHEDPLUG_LOG_DIR"
  local start rc=0
  start=$(date +%s)
  say "$name ... (log: $(rel "$log"))"
  if [[ ${SCHEDPLUG_VERBOSE:-0} == 1 ]]; then
    set -o pipefail
    "$@" </dev/null 2>&1 | tee "$log" || rc=$?
  else
    "$@" </dev/null >"$log" 2>&1 || rc=$?
  fi
  local took=$(($(date +%s) - start))
  if [[ -n $show ]]; then
    grep -E -- "$show" "$log" | sed 's/^/        /' || true
  fi
  if ((rc == 0)); then
    say "$name: ok (${took}s)"
    return 0
  fi
  # A go test log: what each failed test itself said, which is seldom at
  # the end (other packages' output follows it).
  if grep -q '^=== RUN' "$log"; then
    echo "        --- what the failed tests said ($(rel "$log"), tools/dev/failed-go-tests.awk):"
    awk -v max=40 -f "$schedplug_root/tools/dev/failed-go-tests.awk" "$log" | head -n 150 | cut -c1-400 | sed 's/^/        /'
  fi
  echo "        --- last lines of $(rel "$log"):"
  tail -n 25 "$log" | sed 's/^/        /'
  say "$name: FAILED (exit $rc after ${took}s); full output in $(rel "$log")"
  failed_steps+=("$name")
  if ((fatal)); then steps_finish; fi
  return 0
}

steps_finish() {
  if ((${#failed_steps[@]} > 0)); then
    say "FAILED: ${failed_steps[*]} (logs in $(rel "$SCHEDPLUG_LOG_DIR")/)" >&2
    exit 1
  fi
}

# The ctest tests tools/dev/test.sh runs in build/: those of the build
# system itself (they run cmake, cpack and the compiler on sample projects;
# no code of ours runs instrumented in them), and the one that needs
# glibc's allocator (host/tests/server/allocator_reuse_test.cpp). Every
# other ctest test runs in the sanitizer tree (tools/dev/sanitize.sh).
cxx_plain_build_tests='^(sdk_out_of_tree_plugin_build|sdk_compile_errors|packaging_debian|Metrics\.AnInstanceAtAFreedAddressIsCountedAsItself)$'

# cxx_configure runs CMake for build/ (Ninja; through ccache when installed).
cxx_configure() {
  local launcher=()
  if command -v ccache >/dev/null 2>&1; then
    launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
  fi
  cmake -G Ninja -S "$schedplug_root" -B "$schedplug_root/build" \
    -DCMAKE_BUILD_TYPE="${CMAKE_BUILD_TYPE:-RelWithDebInfo}" "${launcher[@]}" "$@"
}

# --- Go toolchain -----------------------------------------------------------
# The Go the scripts use: `go` on PATH if it is at least the version in
# integration/go.mod, else the toolchain install-deps.sh placed in the cache
# directory (a link to the official toolchain module in Go's module cache).

# go_required prints the version of integration/go.mod's go line (1.26.0).
go_required() {
  awk '$1 == "go" { print $2; exit }' "$schedplug_root/integration/go.mod"
}

# go_cache_dir is where install-deps.sh links toolchains (go<version>/bin).
go_cache_dir() {
  printf '%s' "${SCHEDPLUG_GO_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/schedplug}"
}

# go_version_of BIN prints BIN's Go version (1.26.8) or fails if BIN does not run.
go_version_of() {
  local out
  out=$(GOTOOLCHAIN=local "$1" version 2>/dev/null) || return 1
  [[ $out == "go version go"* ]] || return 1
  out=${out#go version go}
  printf '%s' "${out%% *}"
}

# go_version_key turns 1.26, 1.26.3, 1.26rc1 into a number that sorts like
# the versions do (a release candidate before its .0 release).
go_version_key() {
  [[ $1 =~ ^([0-9]+)\.([0-9]+)(\.([0-9]+))?(.*)$ ]] || { echo 0; return; }
  local maj=${BASH_REMATCH[1]} min=${BASH_REMATCH[2]} pat=${BASH_REMATCH[4]:-0} pre=5
  if [[ -n ${BASH_REMATCH[5]} ]]; then pre=0; fi
  echo $((((10#$maj * 1000 + 10#$min) * 1000 + 10#$pat) * 10 + pre))
}

# go_version_ge A B: Go version A is at least B.
go_version_ge() {
  (($(go_version_key "$1") >= $(go_version_key "$2")))
}

# go_suitable BIN: BIN runs and is at least the go.mod version.
go_suitable() {
  local v
  v=$(go_version_of "$1") && go_version_ge "$v" "$(go_required)"
}

# use_go puts a suitable Go first on PATH (see above); fails if there is none.
use_go() {
  local go_on_path cached
  go_on_path=$(command -v go 2>/dev/null) || go_on_path=""
  if [[ -n $go_on_path ]] && go_suitable "$go_on_path"; then return 0; fi
  cached="$(go_cache_dir)/go$(go_required)/bin"
  if [[ -x $cached/go ]] && go_suitable "$cached/go"; then
    export PATH="$cached:$PATH"
    return 0
  fi
  return 1
}

# need_go is use_go for the scripts that build Go: it stops with what to do.
need_go() {
  if ! use_go; then
    echo "No Go >= $(go_required) (integration/go.mod) on PATH or in $(go_cache_dir)." \
      "Run tools/dev/install-deps.sh, which fetches it through the Go module proxy." >&2
    exit 1
  fi
}

# --- Kubernetes minors -------------------------------------------------------
# integration/k8s/minors lists the minors kube-scheduler is built for; the
# default one is integration/go.mod's, every other builds with its own
# integration/k8s/<minor>.mod as Go's -modfile (docs/kubernetes-versions.md).

k8s_minors_file() {
  printf '%s' "$schedplug_root/integration/k8s/minors"
}

# The packages every minor builds (the shim, kube-scheduler, its per-minor
# tests); the rest of integration/ builds for the default minor only.
k8s_minor_packages=(./scheduler/shim/... ./scheduler/command ./scheduler/cmd/kube-scheduler ./testbed/minors)

# k8s_minors prints the supported minors, oldest first.
k8s_minors() {
  awk '!/^#/ && NF { print $1 }' "$(k8s_minors_file)"
}

# k8s_other_minors prints the supported minors but the default one.
k8s_other_minors() {
  awk '!/^#/ && NF && $3 != "default" { print $1 }' "$(k8s_minors_file)"
}

# k8s_default_minor prints the minor integration/go.mod pins.
k8s_default_minor() {
  awk '!/^#/ && $3 == "default" { print $1 }' "$(k8s_minors_file)"
}

# k8s_version MINOR prints the k8s.io/kubernetes version MINOR builds with;
# fails for a minor the list does not have.
k8s_version() {
  awk -v m="$1" '!/^#/ && $1 == m { print $2; found = 1 } END { exit !found }' "$(k8s_minors_file)"
}

# k8s_need_minor MINOR fails, saying which minors are, for one that is not
# supported.
k8s_need_minor() {
  k8s_version "$1" >/dev/null || {
    echo "Kubernetes $1 is not supported; the supported minors are: $(k8s_minors | tr '\n' ' ')(integration/k8s/minors)." >&2
    return 1
  }
}

# k8s_pinned MODFILE prints the k8s.io/kubernetes version MODFILE requires.
k8s_pinned() {
  awk '$1 == "k8s.io/kubernetes" && $2 ~ /^v/ { print $2; exit }' "$1"
}

# k8s_modfile MINOR prints the -modfile flag MINOR's Go commands take in
# integration/ (nothing for the default minor).
k8s_modfile() {
  if [[ $1 != "$(k8s_default_minor)" ]]; then printf '%s' "-modfile=k8s/$1.mod"; fi
}

# k8s_toolchain MINOR prints the Go toolchain MINOR's builds need when its
# go line is newer than the default's (go1.27.0), else nothing.
k8s_toolchain() {
  local flag want
  flag=$(k8s_modfile "$1")
  [[ -n $flag ]] || return 0
  want=$(awk '$1 == "toolchain" { sub(/^go/, "", $2); t = $2 } $1 == "go" { g = $2 } END { print (t != "" ? t : g) }' "$schedplug_root/integration/${flag#-modfile=}")
  if [[ $want != "$(go_required)" ]] && go_version_ge "$want" "$(go_required)"; then printf 'go%s' "$want"; fi
}

# k8s_go MINOR GO-ARGS... runs go in integration/ for MINOR: its -modfile
# and its build tag (k8s1.36: the few files that differ between minors)
# after the subcommand, under the toolchain it needs (which Go fetches
# through the module proxy; GOTOOLCHAIN=auto does not look at -modfile).
k8s_go() {
  local minor=$1 sub=$2 flag toolchain
  shift 2
  k8s_need_minor "$minor" || return 1
  flag=$(k8s_modfile "$minor")
  toolchain=$(k8s_toolchain "$minor")
  (cd "$schedplug_root/integration" && GOTOOLCHAIN=${toolchain:-${GOTOOLCHAIN:-}} go "$sub" ${flag:+"$flag" -tags="k8s$minor"} "$@")
}

# k8s_scheduler_bin MINOR prints where the scripts put MINOR's
# kube-scheduler: build/go/kube-scheduler for the default minor,
# build/go/kube-scheduler-<minor> for the others.
k8s_scheduler_bin() {
  k8s_need_minor "$1" || return 1
  if [[ $1 == "$(k8s_default_minor)" ]]; then
    printf '%s' "$schedplug_root/build/go/kube-scheduler"
  else
    printf '%s' "$schedplug_root/build/go/kube-scheduler-$1"
  fi
}

# go_build_scheduler OUT [MINOR] builds kube-scheduler with the shim
# (integration/scheduler/cmd/kube-scheduler) for MINOR (the default minor
# without it) into OUT the one way every script builds it: static
# (CGO_ENABLED=0, which its image needs: deploy/build-images.sh refuses a
# dynamic one) and reporting upstream's version. The demo and the test
# command thus make the same binary, and Go's build cache serves both.
go_build_scheduler() {
  local out=$1 minor=${2:-$(k8s_default_minor)} version
  version=$(k8s_version "$minor") &&
    CGO_ENABLED=0 k8s_go "$minor" build -ldflags "-X k8s.io/component-base/version.gitVersion=$version" \
      -o "$out" ./scheduler/cmd/kube-scheduler
}

# k8s_go_test MINOR runs, for a minor other than the default, the tests
# every minor runs (k8s_minor_packages) with that minor's kube-scheduler
# (k8s_scheduler_bin, built first).
# Not shim/cyclebench, which measures the shim against the Go twins of the
# sample plugins (testbed/twin), written for the default minor's API.
k8s_go_test() {
  local pkgs=() bin
  mapfile -t pkgs < <(k8s_go "$1" list "${k8s_minor_packages[@]}" | grep -v '/cyclebench$') &&
    bin=$(k8s_scheduler_bin "$1") &&
    CGO_ENABLED=0 SCHEDPLUG_SCHEDULER_BIN=$bin k8s_go "$1" test -count=1 -timeout 20m -v "${pkgs[@]}"
}

# go_build_cluster DIR builds what the real-node test (deploy/helm/realnode_test.go)
# runs beside the images: kubelet, kube-apiserver, kube-controller-manager
# and kubectl at the version integration/go.mod pins (its tool lines), the
# helm command at the version deploy/go.mod pins, and containerd 2 with its
# runc shim and ctr into DIR/containerd (deploy/realnode/containerd2, a
# module of its own so containerd's dependencies stay out of deploy's).
go_build_cluster() {
  local out=$1
  (
    cd "$schedplug_root/integration" &&
      CGO_ENABLED=0 go build -ldflags "-X k8s.io/component-base/version.gitVersion=$(go list -m -f '{{.Version}}' k8s.io/kubernetes)" \
        -o "$out/" k8s.io/kubernetes/cmd/kubelet k8s.io/kubernetes/cmd/kube-apiserver \
        k8s.io/kubernetes/cmd/kube-controller-manager k8s.io/kubernetes/cmd/kubectl &&
      cd "$schedplug_root/deploy" &&
      CGO_ENABLED=0 go build -o "$out/helm" helm.sh/helm/v4/cmd/helm &&
      cd "$schedplug_root/deploy/realnode/containerd2" &&
      CGO_ENABLED=0 go build -o "$out/containerd/" github.com/containerd/containerd/v2/cmd/containerd \
        github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2 github.com/containerd/containerd/v2/cmd/ctr
  )
}
