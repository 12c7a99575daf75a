#!/usr/bin/env bash
# Regenerates the Go code for proto/schedplug/v1/schedplug.proto into
# integration/scheduler/gen/schedplugv1. The output is committed so that `go build`
# needs no protoc; run this after every change to the proto.
#
# Needs protoc (Debian: protobuf-compiler) and the two Go generators:
#   go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.11
#   go install google.golang.org/grpc/cmd/protoc-gen-go-grpc@v1.6.2
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
gobin="$(go env GOPATH)/bin"
export PATH="${gobin}:${PATH}"

for tool in protoc protoc-gen-go protoc-gen-go-grpc; do
  if ! command -v "${tool}" >/dev/null; then
    echo "gen-go-proto: ${tool} not found on PATH; see the install lines at the top of $0" >&2
    exit 1
  fi
done

out="${root}/integration/scheduler/gen/schedplugv1"
mkdir -p "${out}"
# module= strips the go_package prefix so files land directly in ${out}.
protoc -I "${root}/proto" \
  --go_out="${root}/integration" --go_opt=module=schedplug.dev/integration \
  --go-grpc_out="${root}/integration" --go-grpc_opt=module=schedplug.dev/integration \
  "${root}/proto/schedplug/v1/schedplug.proto"
echo "gen-go-proto: wrote $(ls "${out}" | tr '\n' ' ')"
