#!/usr/bin/env bash
# Installs the Debian 12 packages schedplug needs to build and test, only
# those missing. Idempotent; safe to run on every build. Needs root (or sudo).
# apt's output goes to build/logs/apt-install.log; the terminal gets one line.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

packages=(
  build-essential cmake ninja-build pkg-config git
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libboost-dev libboost-filesystem-dev
  libyaml-cpp-dev libspdlog-dev libfmt-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libcli11-dev prometheus-cpp-dev nlohmann-json3-dev
  clang-format
  libssl-dev openssl
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
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

if ! command -v go >/dev/null 2>&1; then
  echo "install-deps: Go is not installed; the integration tests and the demo need Go >= 1.26 on PATH." >&2
  exit 1
fi
