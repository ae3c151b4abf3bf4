#!/bin/bash
# Instruction counts (callgrind) and bytes written of indexing and replay,
# for deciding changes on a shared machine where wall clock does not repeat.
#
#   Benchmarks/Callgrind/count.sh EVENTLOG_BINARY TAG [WORKDIR]
#
# Workload: the corpus's first 5,000 items as 10 `indexSearchableItems`
# operations of 500, one transaction each (`eventlog apply
# --transaction-size 1 --pipeline 0`), then `eventlog replay --full` of that
# store; and the first 1,000 items as 1,000 operations of one item (batch 1).
# Prints the instructions of each run and the bytes each wrote (wchar).
# `--pipeline 0`: each transaction commits before the next is handed over, so
# the commits and what they write are the same in every run. Figures taken
# before this option was added here (Benchmarks/History/2026-11-notebook.md up to the note on
# it) ran `apply` pipelined (`--pipeline 2`, its default): how operations
# grouped into commits varied with the threads' timing, and so did the bytes
# written (a few percent; once +25 % at batch 1). Each callgrind
# run goes through Scripts/callgrind.sh (a copy stripped of debug info, and
# the sigsuspend shim valgrind 3.19 needs for an async main).
# Reading the counts: `callgrind_annotate --inclusive=yes WORKDIR/apply-TAG.out
# | swift demangle --simplified`; `Environment.write` is the write path alone
# (the rest of `apply` is its JSON decoding, the same in every build).
set -euo pipefail
BIN=$1; TAG=$2; WORK=${3:-/tmp/callgrind-counts}
HERE=$(cd "$(dirname "$0")" && pwd)
CORPUS=${CORPUS:-$HERE/../../../shared/corpus/items.jsonl.gz}
mkdir -p "$WORK"
cc -shared -fPIC -O2 -o "$WORK/io_at_exit.so" "$HERE/io_at_exit.c"
cp "$BIN" "$WORK/eventlog-$TAG" && strip --strip-debug "$WORK/eventlog-$TAG"
E=$WORK/eventlog-$TAG
if [ ! -f "$WORK/items-5k.jsonl" ]; then
    python3 "$HERE/../../Scripts/generate_workload.py" corpus "$CORPUS" --batch 500 2>/dev/null | head -10 > "$WORK/items-5k.jsonl" || true
    python3 - "$WORK" <<'PY'
import json, sys
work = sys.argv[1]
items = [it for line in open(work + "/items-5k.jsonl") for it in json.loads(line)["items"]]
with open(work + "/items-1k-b1.jsonl", "w") as f:
    for it in items[:1000]:
        f.write(json.dumps({"op": "indexSearchableItems", "items": [it]}, ensure_ascii=False, separators=(",", ":")) + "\n")
PY
fi
rm -rf "$WORK/store-$TAG"
CALLGRIND=$HERE/../../Scripts/callgrind.sh
"$CALLGRIND" "$WORK/apply-$TAG.out" "$E" apply --store "$WORK/store-$TAG" --transaction-size 1 --pipeline 0 "$WORK/items-5k.jsonl" > /dev/null 2> "$WORK/apply-$TAG.err"
echo "apply  $(grep -o 'Collected : [0-9]*' "$WORK/apply-$TAG.err")"
"$CALLGRIND" "$WORK/replay-$TAG.out" "$E" replay --full --store "$WORK/store-$TAG" > /dev/null 2> "$WORK/replay-$TAG.err"
echo "replay $(grep -o 'Collected : [0-9]*' "$WORK/replay-$TAG.err")"
for w in items-5k items-1k-b1; do
    rm -rf "$WORK/io-$TAG"
    echo "$w $(LD_PRELOAD=$WORK/io_at_exit.so "$E" apply --store "$WORK/io-$TAG" --transaction-size 1 --pipeline 0 "$WORK/$w.jsonl" 2>&1 >/dev/null | grep wchar)"
done
