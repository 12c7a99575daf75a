#!/usr/bin/env bash
# Installs the Debian 12 packages schedplug needs to build and test, only
# those missing, and a Go that satisfies integration/go.mod (below).
# Idempotent; safe to run on every build; a second run changes nothing.
# Needs root (or sudo) only to install Debian packages. apt's and Go's output
# go to build/logs/ (apt-install.log, go-toolchain.log); the terminal gets
# one line per step.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

packages=(
  build-essential cmake ninja-build pkg-config git
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libboost-dev libboost-filesystem-dev
  libyaml-cpp-dev libspdlog-dev libfmt-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libcli11-dev prometheus-cpp-dev libcivetweb-dev nlohmann-json3-dev
  clang-format
  ccache clang libclang-rt-14-dev
  libssl-dev openssl
  umoci
  # ip, for the network namespace in which deploy/helm/pod_test.go runs the
  # chart's pod (minimal Debian images lack it).
  iproute2
  # The real node of deploy/helm/realnode_test.go: runc runs the chart's
  # pods (under containerd 2, built from the Go module proxy), the CNI
  # plugins give them a bridge network, iptables stands in for kube-proxy.
  runc containernetworking-plugins iptables
  # Debian 12's own Rust (1.63), the Rust SDK's minimum (sdk/rust): the test
  # command builds the crate with it as well as with a newer cargo on PATH.
  rustc cargo
)

# One dpkg-query for all packages: those not "install ok installed" are missing.
installed=$(dpkg-query -W -f='${Package} ${Status}\n' "${packages[@]}" 2>/dev/null | awk '$4 == "installed" { print $1 }') || true
missing=()
for p in "${packages[@]}"; do
  if ! grep -qxF "$p" <<<"$installed"; then missing+=("$p"); fi
done

apt_install() {
  local sudo=""
  if [[ $(id -u) -ne 0 ]]; then sudo="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -q &&
    $sudo apt-get install -y -q --no-install-recommends "$@"
}

if ((${#missing[@]} > 0)); then
  say "install-deps: installing ${#missing[@]} Debian packages: ${missing[*]}"
  # Ask for the sudo password here, on the terminal, not inside the logged step.
  if [[ $(id -u) -ne 0 ]]; then sudo -v; fi
  step --fatal apt-install apt_install "${missing[@]}"
fi

# --- Go ------------------------------------------------------------------
# A Go at least as new as integration/go.mod's go line. If `go` on PATH is
# missing or older, fetch the official toolchain for exactly that version the
# way GOTOOLCHAIN does: as the module golang.org/toolchain through the Go
# module proxy (checked against sum.golang.org), downloaded by a bootstrap Go
# (Debian's golang-go when there is no go at all). It stays in Go's module
# cache; the cache directory (~/.cache/schedplug by default, see lib.sh) gets
# a link go<version> to it, which the scripts put on PATH (lib.sh: use_go).
required=$(go_required)

go_arch() {
  local a
  a=$(dpkg --print-architecture)
  case $a in
  i386) echo 386 ;;
  armhf | armel) echo armv6l ;;
  ppc64el) echo ppc64le ;;
  *) echo "$a" ;;
  esac
}

# fetch_toolchain BOOTSTRAP_GO VERSION ARCH LINK: downloads the toolchain
# module, makes its commands executable and points LINK at it.
fetch_toolchain() {
  local boot=$1 version=$2 arch=$3 link=$4
  local mod="golang.org/toolchain@v0.0.1-go$version.linux-$arch"
  local modcache dir tmp
  modcache=$(GOTOOLCHAIN=local "$boot" env GOMODCACHE) || return 1
  dir="$modcache/$mod"
  tmp=$(mktemp -d)
  echo "downloading $mod with $("$boot" version) into $modcache"
  # Outside any module (tmp), without the caller's GOFLAGS; GOTOOLCHAIN=local
  # keeps a bootstrap Go >= 1.21 from switching toolchains on its own.
  (cd "$tmp" && GOTOOLCHAIN=local GOFLAGS="" GO111MODULE=on "$boot" mod download -json "$mod")
  local rc=$?
  rmdir "$tmp"
  if ((rc != 0)); then
    echo "could not download $mod through the Go module proxy ($(GOTOOLCHAIN=local "$boot" env GOPROXY)); check the network or GOPROXY" >&2
    return 1
  fi
  # A Go before 1.21 unpacks module zips without exec bits; Go's own
  # toolchain switch sets them the same way on first use.
  find "$dir/bin" "$dir/pkg/tool" -type f ! -perm -u+x -exec chmod a+x {} + || return 1
  mkdir -p "$(dirname "$link")" && ln -sfn "$dir" "$link" || return 1
  if ! go_suitable "$link/bin/go"; then
    echo "$link/bin/go does not run or is not Go $version: $("$link/bin/go" version 2>&1)" >&2
    return 1
  fi
  "$link/bin/go" version
}

if use_go; then
  say "install-deps: Debian packages present; Go $(go_version_of go) ($(command -v go))"
  exit 0
fi

boot=$(command -v go 2>/dev/null) || boot=""
if [[ -z $boot ]]; then
  say "install-deps: no Go on PATH; installing Debian's golang-go to bootstrap Go $required"
  if [[ $(id -u) -ne 0 ]]; then sudo -v; fi
  step --fatal apt-install-golang apt_install golang-go
  boot=/usr/lib/go/bin/go
else
  say "install-deps: $boot is Go $(go_version_of "$boot" || echo "?"), older than Go $required (integration/go.mod)"
fi
link="$(go_cache_dir)/go$required"
step --fatal go-toolchain fetch_toolchain "$boot" "$required" "$(go_arch)" "$link"
use_go
say "install-deps: Go $(go_version_of go) in $link/bin (the tools/dev scripts add it to PATH; to use it yourself: export PATH=\"$link/bin:\$PATH\")"
