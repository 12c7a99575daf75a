#!/usr/bin/env bash
# Test of install-deps.sh's Go part (test.sh runs it): with a PATH on which
# no Go satisfies integration/go.mod, install-deps.sh brings one, the scripts
# (lib.sh: need_go, as demo.sh and test.sh call it) then find exactly the
# go.mod version, and a second run changes nothing.
# It uses a fresh cache directory (links) but Go's usual module cache, so the
# toolchain module is downloaded at most once per machine.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
root=$schedplug_root

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

required=$(go_required)
[[ -n $required ]] || fail "no go line in $root/integration/go.mod"

# Drop every PATH directory whose go satisfies go.mod (Debian's /usr/bin/go,
# 1.19, may stay: install-deps.sh must treat it as too old).
newpath=""
IFS=: read -ra dirs <<<"$PATH"
for d in "${dirs[@]}"; do
  if [[ -x $d/go ]] && go_suitable "$d/go"; then
    echo "PATH without $d (Go $(go_version_of "$d/go"))"
    continue
  fi
  newpath+=${newpath:+:}$d
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export PATH=$newpath SCHEDPLUG_GO_CACHE=$tmp/cache SCHEDPLUG_LOG_DIR=$tmp/logs
unset SCHEDPLUG_T0 GOROOT

if use_go; then
  fail "a Go >= $required is still found ($(command -v go)) on PATH=$PATH; the test needs a PATH without one"
fi
echo "before: go on PATH is $(command -v go || echo "none") $(go_version_of go 2>/dev/null || true)"

if ! bash "$root/tools/dev/install-deps.sh" >"$tmp/first.out" 2>&1; then
  cat "$tmp/first.out" "$tmp"/logs/*.log 2>/dev/null || true
  fail "install-deps.sh failed (output above)"
fi
echo "--- first run of install-deps.sh:"
cat "$tmp/first.out"
grep -q "go-toolchain: ok" "$tmp/first.out" || fail "the first run did not fetch the toolchain"

# What demo.sh and test.sh do after install-deps.sh.
for script in demo.sh test.sh; do
  grep -qx 'need_go' "$root/tools/dev/$script" || fail "tools/dev/$script does not call need_go"
done
# shellcheck disable=SC2016
found=$(bash -c 'source "$1/tools/dev/lib.sh" && need_go && command -v go && go version &&
  cd "$1/integration" && GOTOOLCHAIN=local go list -m' _ "$root") ||
  fail "need_go or the Go it found failed after install-deps.sh: $found"
echo "--- the scripts find:"
echo "$found"
want_go="$SCHEDPLUG_GO_CACHE/go$required/bin/go"
[[ $(sed -n 1p <<<"$found") == "$want_go" ]] || fail "go is $(sed -n 1p <<<"$found"), want $want_go"
[[ $(sed -n 2p <<<"$found") == "go version go$required "* ]] || fail "want Go $required, got: $(sed -n 2p <<<"$found")"
[[ $(sed -n 3p <<<"$found") == "schedplug.dev/integration" ]] || fail "go list -m in integration/ printed: $(sed -n 3p <<<"$found")"

# A second run does nothing: one line, no step, the link unchanged.
link_before=$(stat -c '%N %Y' "$SCHEDPLUG_GO_CACHE/go$required")
bash "$root/tools/dev/install-deps.sh" >"$tmp/second.out" 2>&1 || {
  cat "$tmp/second.out"
  fail "the second run of install-deps.sh failed"
}
echo "--- second run of install-deps.sh:"
cat "$tmp/second.out"
[[ $(wc -l <"$tmp/second.out") -eq 1 ]] || fail "the second run printed more than one line"
grep -q "Go $required ($want_go)" "$tmp/second.out" || fail "the second run did not report Go $required from $want_go"
[[ $(stat -c '%N %Y' "$SCHEDPLUG_GO_CACHE/go$required") == "$link_before" ]] || fail "the second run changed $SCHEDPLUG_GO_CACHE/go$required"
echo "PASS"
