#!/usr/bin/env bash
# The sanitizer builds and the bounded fuzz run, steps of tools/dev/test.sh
# (docs/sanitizers.md, docs/fuzzing.md), or by hand:
#
#   bash tools/dev/sanitize.sh build asan|tsan          # configure + build
#   bash tools/dev/sanitize.sh test asan|tsan           # run its ctest subset
#   bash tools/dev/sanitize.sh fuzz-ci                  # fixed seed and counts
#   bash tools/dev/sanitize.sh fuzz SECONDS [TARGET...] # longer libFuzzer runs
#
# asan  build-asan/  clang, -DSCHEDPLUG_FUZZ=ON: AddressSanitizer and
#                    UndefinedBehaviorSanitizer on every target, the test
#                    suites and the libFuzzer targets in one tree (one
#                    compile of the code serves both)
# tsan  build-tsan/  GCC, -DSCHEDPLUG_SANITIZE=thread, only the threaded
#                    suites' targets
# Both compile through ccache at -O0 with line tables only: -O1 took twice
# as long to compile (12 more minutes on 2 cores) for a suite and a fuzz run
# about 4 minutes faster together (docs/sanitizers.md has the figures).
# What runs under which sanitizer, and why: docs/sanitizers.md.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
root=$schedplug_root
cd "$root"
jobs=${SCHEDPLUG_JOBS:-2}
supp="$root/tools/sanitizers"

# Every finding fails the test that caused it (the builds use
# -fno-sanitize-recover too); suppressions are explained in each file.
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1"
export LSAN_OPTIONS="suppressions=$supp/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
export TSAN_OPTIONS="suppressions=$supp/tsan.supp:halt_on_error=1:second_deadlock_stack=1:print_suppressions=0"

launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi

configure() { # DIR EXTRA_CMAKE_ARGS...
  local dir=$1
  shift
  if [[ -f $dir/build.ninja ]]; then return 0; fi
  # -gline-tables-only (GCC: -g1): file:line in every report, without the
  # full debug info that would double compile and link time.
  local debug=-g1
  if [[ " $* " == *" -DCMAKE_CXX_COMPILER=clang++ "* ]]; then debug=-gline-tables-only; fi
  cmake -G Ninja -S . -B "$dir" "${launcher[@]}" \
    -DCMAKE_BUILD_TYPE=Debug "-DCMAKE_C_FLAGS_DEBUG=-O0 $debug" \
    "-DCMAKE_CXX_FLAGS_DEBUG=-O0 $debug" -DSCHEDPLUG_BUILD_BENCHMARKS=OFF "$@"
}

# The ctest tests each sanitizer runs (regexes over test names).
# asan: everything but what tools/dev/test.sh runs in build/ (lib.sh: the
#   build system's own tests, and the one test that needs glibc's
#   allocator, which the sanitizer trees do not even build).
asan_exclude=$cxx_plain_build_tests
# tsan: where our threads meet, without gRPC's transport in between: the
#   host's concurrent sessions, session eviction, refresh threads and the
#   metrics page with callers calling the service in-process
#   (InProcessConcurrency), calls racing hot-reload swaps
#   (HotReloadInProcess), the thread pool, the chains, the node table, the
#   sample plugins' concurrent-hook tests and the SDK's Published<T> (what
#   refresh threads publish through). The tests that talk to the host
#   through gRPC are left out: Debian's gRPC is not instrumented, TSan
#   cannot see how it hands a call between its threads, and reports races
#   inside it (docs/sanitizers.md). The core, CLI and fuzz replay tests are
#   single-threaded: ASan covers them.
tsan_targets=(schedplug_host_server_tests hw_encrypt_test network_latency_test sdk_cpp_layer_test)
tsan_include='^(NodeTable|CompactNode|ThreadPool|ChainTest|ListenAddress|InProcessConcurrency|HotReloadInProcess|HwEncrypt|NetworkLatencyTest|Published)\.'

# Inputs per target in the bounded, reproducible fuzz run (fuzz-ci): about 20 s
# each on a 2-core machine (docs/fuzzing.md has the measured rates).
fuzz_targets=(config args table request record reasons frames)
declare -A fuzz_ci_runs=([config]=5000 [args]=20000 [table]=20000 [request]=80000 [record]=80000 [reasons]=400000 [frames]=2000)

need_fuzzers() {
  local t
  for t in "${fuzz_targets[@]}"; do
    if [[ ! -x build-asan/fuzz/fuzz_$t ]]; then
      echo "build-asan/fuzz/fuzz_$t is missing: build the fuzzers first with" \
        "\`bash tools/dev/sanitize.sh build asan\`" >&2
      exit 2
    fi
  done
}

case ${1:-} in
build)
  case ${2:-} in
  asan)
    configure build-asan -DSCHEDPLUG_FUZZ=ON \
      -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++
    cmake --build build-asan -j "$jobs"
    ;;
  tsan)
    configure build-tsan -DSCHEDPLUG_SANITIZE=thread
    cmake --build build-tsan -j "$jobs" --target "${tsan_targets[@]}"
    ;;
  *) echo "usage: $0 build asan|tsan" >&2; exit 2 ;;
  esac
  ;;
test)
  case ${2:-} in
  asan) ctest --test-dir build-asan --output-on-failure -j "$jobs" -E "$asan_exclude" ;;
  tsan) ctest --test-dir build-tsan --output-on-failure -j "$jobs" -R "$tsan_include" ;;
  *) echo "usage: $0 test asan|tsan" >&2; exit 2 ;;
  esac
  ;;
fuzz)
  need_fuzzers
  seconds=${2:?usage: $0 fuzz SECONDS [TARGET...]}
  shift 2
  targets=("$@")
  if ((${#targets[@]} == 0)); then targets=("${fuzz_targets[@]}"); fi
  status=0
  for t in "${targets[@]}"; do
    # New inputs go to a scratch corpus under build-asan/, never into the
    # seed corpus in the repository; a crash lands in build-asan/crashes/.
    work="build-asan/corpus/$t"
    mkdir -p "$work" build-asan/crashes
    seeds=("fuzz/$t/corpus")
    if [[ -d fuzz/$t/regressions ]]; then seeds+=("fuzz/$t/regressions"); fi
    echo "== fuzz_$t for ${seconds}s"
    if ! "build-asan/fuzz/fuzz_$t" -max_total_time="$seconds" -timeout=10 \
      -rss_limit_mb=2048 -print_final_stats=1 \
      -artifact_prefix="build-asan/crashes/$t-" "$work" "${seeds[@]}"; then
      echo "fuzz_$t found a crash: see build-asan/crashes/ and docs/fuzzing.md" >&2
      status=1
    fi
  done
  exit $status
  ;;
fuzz-ci)
  # A reproducible run: from the seed corpus and regressions only, a
  # fixed seed and a fixed number of inputs per target, so two CI runs of
  # one commit try the same inputs (a time bound would not); about 20 s
  # per target on a 2-core machine. Scratch corpora go to a temporary
  # directory, never into build-asan/corpus/ or the repository.
  need_fuzzers
  scratch=$(mktemp -d)
  trap 'rm -rf "$scratch"' EXIT
  mkdir -p build-asan/crashes
  status=0
  for t in "${fuzz_targets[@]}"; do
    mkdir -p "$scratch/$t"
    seeds=("fuzz/$t/corpus")
    if [[ -d fuzz/$t/regressions ]]; then seeds+=("fuzz/$t/regressions"); fi
    echo "== fuzz_$t: ${fuzz_ci_runs[$t]} inputs, seed 1"
    if ! "build-asan/fuzz/fuzz_$t" -seed=1 -runs="${fuzz_ci_runs[$t]}" \
      -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
      -artifact_prefix="build-asan/crashes/$t-" "$scratch/$t" "${seeds[@]}"; then
      echo "fuzz_$t found a crash: see build-asan/crashes/ and docs/fuzzing.md" >&2
      status=1
    fi
  done
  exit $status
  ;;
*)
  sed -n '2,19p' "$0" >&2
  exit 2
  ;;
esac
