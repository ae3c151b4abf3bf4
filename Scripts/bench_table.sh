#!/usr/bin/env bash
# Prints the performance table of README.md ("Performance") and
# Docs/Benchmarks.md ("The current table"): eventlog against SQLite FTS5,
# Tantivy and raw LMDB on the same items, measured in one run, as Markdown,
# with the date, the commit and the machine.
#
#   bash Scripts/bench_table.sh [--items N] [--eventlog PATH] [--keep DIR]
#
#   --items N       the corpus's first N items only (a quick check of the
#                   script; the table's figures are for the whole corpus)
#   --eventlog PATH a release `eventlog` to measure (default: built here,
#                   `swift build -c release --scratch-path .build-bench`)
#   --keep DIR      keep every command's raw output in DIR
#
# PEER_BENCH=FILE runs a copy of peer_bench.py instead of ../shared's (the
# shared one keeps its stores in /tmp/peer-*: a copy with other paths lets
# two people measure at once).
#
# Needs the corpus in ../shared/corpus beside the checkout and python3 with
# `tantivy` and `lmdb` (`pip install tantivy lmdb`). The whole corpus takes
# about ten minutes on two cores. Progress goes to stderr, the table to
# stdout. Every command it runs is printed to stderr first, and listed in
# Docs/Benchmarks.md ("How to compare with the peers").
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

items=""; eventlog=""; keep=""
while [ $# -gt 0 ]; do
  case "$1" in
    --items) items=$2; shift 2 ;;
    --eventlog) eventlog=$2; shift 2 ;;
    --keep) keep=$2; shift 2 ;;
    *) echo "usage: bash Scripts/bench_table.sh [--items N] [--eventlog PATH] [--keep DIR]" >&2; exit 2 ;;
  esac
done

shared=$(cd "$root/../shared" 2>/dev/null && pwd -P || echo "$root/../shared")
corpus=$shared/corpus/items.jsonl.gz
queries=$shared/corpus/queries.txt
peers=${PEER_BENCH:-$shared/tools/peer_bench.py}
for file in "$corpus" "$queries" "$peers"; do
  [ -f "$file" ] || { echo "bench_table: $file is missing (../shared beside the checkout)" >&2; exit 1; }
done
python3 -c 'import tantivy, lmdb' 2>/dev/null || {
  echo "bench_table: python3 needs tantivy and lmdb: pip install tantivy lmdb" >&2; exit 1; }

# The commit measured: HEAD, and whether the product's code differs from it
# (taken before the build, so that edits during the run do not change it).
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
if [ -n "$(git status --porcelain --untracked-files=no -- Sources Package.swift 2>/dev/null)" ]; then
  commit="$commit with uncommitted changes to Sources/"
fi

if [ -z "$eventlog" ]; then
  echo "+ swift build -c release --scratch-path .build-bench --product eventlog" >&2
  swift build -c release --scratch-path .build-bench --product eventlog >&2
  eventlog=$root/.build-bench/release/eventlog
fi

if [ -n "$keep" ]; then mkdir -p "$keep"; out=$keep; else out=$(mktemp -d); trap 'rm -rf "$out"' EXIT; fi
if [ -n "$items" ]; then
  { gzip -dc "$corpus" || true; } | head -n "$items" > "$out/items.jsonl"   # gzip ends on SIGPIPE
  corpus=$out/items.jsonl
fi

run() {   # run OUTFILE COMMAND...: prints the command, runs it, keeps its stdout
  local file=$1; shift
  echo "+ $*" >&2
  "$@" > "$out/$file"
}

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
started=$(date -u +%Y-%m-%dT%H:%MZ)
# Each setting of eventlog, then the peers at the same setting: on a shared
# machine the load moves, and a ratio is fairest between runs close in time.
for batch in 100 500 5000; do
  run "eventlog-$batch.json" "$eventlog" bench --corpus "$corpus" --batch-sizes "$batch" --queries "$queries" --json
  run "peers-$batch.txt" python3 "$peers" "$corpus" "$batch" --queries "$queries" sqlite tantivy
done
run eventlog-users.json "$eventlog" bench --corpus "$corpus" --batch-sizes 500 --users 300 --queries "$queries" --json
run peers-users.txt python3 "$peers" "$corpus" 500 --queries "$queries" --users 300 sqlite tantivy
# Batch 1 against raw LMDB, alternating in one process (one raw commit after each of the engine's).
run eventlog-batch1.json "$eventlog" bench --corpus "$corpus" --batch-sizes 1 --pipeline 0 --max-commits 2000 --alternate-raw --json
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
memory=$(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo)
tmp=${TMPDIR:-/tmp}
filesystem=$(df -T "$tmp" | awk 'NR == 2 { print $2 }')
machine="$cpu, $(nproc) cores, $memory RAM, $filesystem ($tmp), Linux $(uname -r)"

python3 - "$out" "$started" "$commit" "$machine" "$load_before" "$load_after" <<'PY'
import json, re, sys

out, started, commit, machine, load_before, load_after = sys.argv[1:]

def settings(name):
    return {s["setting"]["batchSize"]: s for s in json.load(open(f"{out}/{name}"))["settings"]}

def peers(name):
    """peer_bench.py's lines, by peer: items/s, MB, rebuild items/s, query p50/p99 µs, hits."""
    found = {}
    for line in open(f"{out}/{name}", encoding="utf-8"):
        if m := re.match(r"(\w+): (\d+) items, batch \d+: ([\d,]+) items/s, [\d.]+ s, ([\d.]+) MB on disk", line):
            found.setdefault(m[1], {}).update(items=int(m[2]), rate=float(m[3].replace(",", "")), mb=float(m[4]))
        elif m := re.match(r"sqlite rebuild: \d+ items: ([\d,]+) items/s", line):
            found.setdefault("sqlite", {})["rebuild"] = float(m[1].replace(",", ""))
        elif m := re.match(r"(\w+): (\d+) queries: p50 (\d+) us, p99 (\d+) us, (\d+) with hits", line):
            found.setdefault(m[1], {}).update(queries=int(m[2]), p50=float(m[3]), p99=float(m[4]), hits=int(m[5]))
    return found

ours = {b: settings(f"eventlog-{b}.json")[b] for b in (100, 500, 5000)}
batch1 = settings("eventlog-batch1.json")[1]
users = settings("eventlog-users.json")[500]
theirs = {b: peers(f"peers-{b}.txt") for b in (100, 500, 5000)}
theirs_users = peers("peers-users.txt")

def n(x): return f"{x:,.0f}"
def ratio(a, b): return f"{a / b:.2f}×"
def mb(x): return f"{x / 1e6:.1f} MB"

rows = []
for b in (100, 500, 5000):
    s, p = ours[b], theirs[b]
    rows.append((f"indexing, batch {b:,}, items/s", n(s["itemsPerSecond"]), n(p["sqlite"]["rate"]), n(p["tantivy"]["rate"]),
                 f'{ratio(s["itemsPerSecond"], p["sqlite"]["rate"])} SQLite, {ratio(s["itemsPerSecond"], p["tantivy"]["rate"])} Tantivy'))
raw = batch1["rawLMDB"]
rows.append(("batch 1, one caller waiting for each commit, commits/s",
             n(raw["commitsPerSecond"] * raw["engineRatio"]), "", "",
             f'{raw["engineRatio"]:.2f}× raw LMDB ({n(raw["commitsPerSecond"])}/s, alternating)'))
u, pu = users, theirs_users
rows.append(("300 users, batch 500, items/s", n(u["itemsPerSecond"]), n(pu["sqlite"]["rate"]), n(pu["tantivy"]["rate"]),
             f'{ratio(u["itemsPerSecond"], pu["sqlite"]["rate"])} SQLite, {ratio(u["itemsPerSecond"], pu["tantivy"]["rate"])} Tantivy'))
s, p = ours[500], theirs[500]
rows.append(("full rebuild, items/s (eventlog: every view and the index, verified; SQLite: FTS5 `rebuild`)",
             n(s["replayItemsPerSecond"]), n(p["sqlite"]["rebuild"]), "", f'{ratio(s["replayItemsPerSecond"], p["sqlite"]["rebuild"])} SQLite'))
q = s["queries"]
rows.append((f'queries p50 / p99, µs ({q["count"]} queries, top 20, batch-500 store)',
             f'{n(q["p50Microseconds"])} / {n(q["p99Microseconds"])}',
             f'{n(p["sqlite"]["p50"])} / {n(p["sqlite"]["p99"])}', f'{n(p["tantivy"]["p50"])} / {n(p["tantivy"]["p99"])}',
             f'p50 {ratio(q["p50Microseconds"], p["tantivy"]["p50"])} Tantivy\'s'))
rows.append(("queries with hits", f'{q["withHits"]}', f'{p["sqlite"]["hits"]}', f'{p["tantivy"]["hits"]}', ""))
uq = u["queries"]
rows.append(("300 users: queries p50 / p99, µs (query k as user k mod 300)",
             f'{n(uq["p50Microseconds"])} / {n(uq["p99Microseconds"])}',
             f'{n(pu["sqlite"]["p50"])} / {n(pu["sqlite"]["p99"])}', f'{n(pu["tantivy"]["p50"])} / {n(pu["tantivy"]["p99"])}',
             f'p50 {ratio(uq["p50Microseconds"], pu["tantivy"]["p50"])} Tantivy\'s'))
rows.append(("bytes on disk, batch 500", mb(s["bytesOnDisk"]), f'{p["sqlite"]["mb"]:.1f} MB', f'{p["tantivy"]["mb"]:.1f} MB',
             f'{ratio(s["bytesOnDisk"] / 1e6, p["sqlite"]["mb"])} SQLite'))
rows.append(("bytes on disk, 300 users", mb(u["bytesOnDisk"]), f'{pu["sqlite"]["mb"]:.1f} MB', f'{pu["tantivy"]["mb"]:.1f} MB',
             f'{ratio(u["bytesOnDisk"] / 1e6, pu["sqlite"]["mb"])} SQLite'))
def per_item(ours, peer):   # bytes on disk / items
    e = ours["bytesOnDisk"] / ours["items"]
    sq, ta = (peer[k]["mb"] * 1e6 / peer[k]["items"] for k in ("sqlite", "tantivy"))
    return n(e), n(sq), n(ta), f"{ratio(e, sq)} SQLite, {ratio(e, ta)} Tantivy"
rows.append(("bytes on disk per item, batch 500", *per_item(s, p)))
rows.append(("bytes on disk per item, 300 users", *per_item(u, pu)))

count = ours[500]["items"]
verified = all(x["replayVerified"] for x in list(ours.values()) + [users])
print(f"{count:,} corpus items, every commit durable (fsync), one run, each setting of eventlog followed by the peers at the same setting; "
      f"eventlog's indexing rate is the searchable rate (until the index covers the last write).")
print()
print("| measure | eventlog | SQLite FTS5 | Tantivy | eventlog ÷ peer |")
print("|---|---|---|---|---|")
for row in rows:
    print("| " + " | ".join(row) + " |")
print()
print(f"{started}, commit {commit}, release build; {machine}; load average {load_before} before, {load_after} after. "
      f"Rebuilds verified byte for byte: {'yes' if verified else 'NO'}.")
PY
