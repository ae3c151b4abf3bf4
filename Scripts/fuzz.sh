#!/usr/bin/env bash
# Fuzzing with libFuzzer (not part of CI; the tests replay the corpora).
#
#   bash Scripts/fuzz.sh [SECONDS] [TARGET...]
#
# Builds `eventlog-fuzz` (Tools/, the test harness's package) with
# -sanitize=fuzzer in its own scratch path
# (.build-fuzz, release), and `eventlog` (debug, .build: the `arguments`
# target runs it as a child, through EVENTLOG_BINARY), then runs each target
# (default: all six: operations query records snapshots payloads arguments)
# for SECONDS (default 60) on
# its corpus in Tools/Tests/FuzzCorpusTests/Corpus/TARGET (and the inputs that once
# failed, in Regressions/TARGET), one process, new inputs in a scratch
# directory; then merges them into the corpus, minimized (-merge=1: only
# inputs that add coverage are kept). A crash leaves crash-* in
# .build-fuzz/artifacts/TARGET/ and stops the script; once the product is
# fixed, add the input to Regressions/TARGET under a name that says what
# it found (the tests replay both directories). Each run's last libFuzzer
# status line (executions, exec/s) is printed and kept in
# .build-fuzz/runs.log. Run it with `nice`: it keeps a core busy.
#
# Environment: FUZZ_FLAGS adds libFuzzer flags (e.g. -max_len=8192).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
seconds=${1:-60}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(operations query records snapshots payloads arguments)
scratch=.build-fuzz

swift build -c release --package-path Tools --scratch-path "$scratch" --product eventlog-fuzz \
  -Xswiftc -sanitize=fuzzer -Xswiftc -parse-as-library -Xswiftc -DFUZZING
binary=$(swift build -c release --package-path Tools --scratch-path "$scratch" --show-bin-path)/eventlog-fuzz
swift build --product eventlog
export EVENTLOG_BINARY
EVENTLOG_BINARY=$(swift build --show-bin-path)/eventlog

for target in "${targets[@]}"; do
  corpus=Tools/Tests/FuzzCorpusTests/Corpus/$target
  regressions=Tools/Tests/FuzzCorpusTests/Regressions/$target
  grown=$scratch/grown/$target
  artifacts=$scratch/artifacts/$target
  mkdir -p "$corpus" "$regressions" "$grown" "$artifacts"
  log=$scratch/$target.log
  started=$(date -u +%FT%TZ)
  echo "== $target: $seconds s, corpus $(ls "$corpus" | wc -l) inputs"
  SWIFT_BACKTRACE=enable=no FUZZ_TARGET=$target "$binary" "$grown" "$corpus" "$regressions" -max_total_time="$seconds" \
    -artifact_prefix="$artifacts/" -print_final_stats=1 ${FUZZ_FLAGS:-} 2>"$log" || {
    echo "$target: libFuzzer stopped with a failure; see $log and $artifacts" >&2
    tail -40 "$log" >&2
    exit 1
  }
  execs=$(grep -E '^stat::number_of_executed_units' "$log" | awk '{print $2}')
  rate=$(grep -E '^stat::average_exec_per_sec' "$log" | awk '{print $2}')
  echo "$started $target seconds=$seconds execs=$execs exec_per_s=$rate crashes=0 command=\"FUZZ_TARGET=$target eventlog-fuzz CORPUS -max_total_time=$seconds\"" \
    | tee -a "$scratch/runs.log"
  # Keep only what adds coverage: merge the grown inputs into a fresh copy.
  merged=$scratch/merged/$target
  rm -rf "$merged" && mkdir -p "$merged"
  SWIFT_BACKTRACE=enable=no FUZZ_TARGET=$target "$binary" -merge=1 "$merged" "$corpus" "$grown" 2>"$scratch/$target.merge.log"
  rm -f "$corpus"/* && cp "$merged"/* "$corpus"/
  echo "   corpus now $(ls "$corpus" | wc -l) inputs, $(du -sh "$corpus" | cut -f1)"
done
