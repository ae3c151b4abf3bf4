#!/usr/bin/env bash
# Append throughput of the engine against raw LMDB from C, in one run.
# 300-byte payloads, batch 1, 100, 500, 5,000, durable and noSync.
# Usage: Benchmarks/RawLMDB/compare.sh [COUNT]   (from the repository root)
set -euo pipefail
count=${1:-200000}
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cc -O2 -o "$work/raw_append" "$root/Benchmarks/RawLMDB/raw_append.c" -llmdb
swift build -c release --package-path "$root/Tools" --product SyntheticAppender >/dev/null
engine="$root/Tools/.build/release/SyntheticAppender"
printf '%-10s %6s %14s %14s %7s\n' durability batch "raw LMDB/s" "engine/s" ratio
for durability in durable noSync; do
  for batch in 1 100 500 5000; do
    n=$count
    # Batch 1 durable is one fsync pair per event: fewer events, same accuracy.
    if [ "$batch" = 1 ] && [ "$durability" = durable ]; then n=$((count / 40)); fi
    rm -rf "$work/raw" "$work/engine"; mkdir -p "$work/raw"
    raw=$("$work/raw_append" "$work/raw" "$batch" "$n" 300 "$durability" | sed 's/.*"eventsPerSecond":\([0-9.]*\).*/\1/')
    eng=$("$engine" bench --store "$work/engine" --batch-size "$batch" --count "$n" --payload-bytes 300 --durability "$durability" \
          | sed 's/.*"eventsPerSecond":\([0-9.]*\).*/\1/')
    printf '%-10s %6s %14.0f %14.0f %7.2f\n' "$durability" "$batch" "$raw" "$eng" "$(echo "$eng / $raw" | bc -l)"
  done
done
