#!/usr/bin/env bash
# Measures shipping on the corpus store, for Docs/Scaling.md (not a test):
#   1. the leader indexes the corpus (`eventlog apply`, batches of 100 items):
#      its records/s is the unit the other numbers are given in;
#   2. `eventlog ship --once` of the whole log to PostgreSQL: records/s, MB/s;
#   3. `eventlog restore` of the whole stream: seconds, records/s;
#   4. follower lag under a steady write load: `ship` and `follow` running,
#      a feeder committing one operation at a time at RATE a second for
#      SECONDS, Scripts/measure_lag.py sampling both heads.
# Release build; run beside a PostgreSQL server:
#   swift build -c release --product eventlog
#   bash Scripts/with-postgres.sh bash Scripts/measure_shipping.sh [CORPUS] [RATE] [SECONDS]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin="$root/.build/release/eventlog"
corpus=${1:-$root/../shared/corpus/items.jsonl.gz}
rate=${2:-200}
seconds=${3:-30}
url=${EVENTLOG_TEST_POSTGRES_URL:?run through Scripts/with-postgres.sh, or set EVENTLOG_TEST_POSTGRES_URL}
work=$(mktemp -d /tmp/eventlog-measure.XXXXXX)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT
now() { date +%s.%N; }
json() { python3 -c "import json,sys; print(json.load(sys.stdin)$1)"; }

echo "== 1. leader: index the corpus" >&2
start=$(now)
python3 "$root/Scripts/generate_workload.py" corpus "$corpus" --batch 100 | "$bin" apply --store "$work/leader" --json - > "$work/apply.json"
index_seconds=$(python3 -c "print($(now) - $start)")
head=$("$bin" verify --store "$work/leader" --json | json '["head"]')
bytes=$(du -sb "$work/leader/data.mdb" | cut -f1)
echo "indexed: $head records in $index_seconds s" >&2

echo "== 2. ship --once" >&2
"$bin" ship --store "$work/leader" --to "$url" --stream measure --once --json > "$work/ship.json"
cat "$work/ship.json" >&2

echo "== 3. restore" >&2
start=$(now)
"$bin" restore --from "$url" --stream measure --into "$work/restored" --json > "$work/restore.json"
restore_seconds=$(python3 -c "print($(now) - $start)")
cat "$work/restore.json" >&2

echo "== 4. follower lag at $rate operations/s for $seconds s" >&2
"$bin" follow --store "$work/follower" --from "$url" --stream measure --once > /dev/null
"$bin" ship --store "$work/leader" --to "$url" --stream measure 2> "$work/ship.log" &
pids+=($!)
"$bin" follow --store "$work/follower" --from "$url" --stream measure 2> "$work/follow.log" &
pids+=($!)
/usr/bin/python3 "$root/Scripts/measure_lag.py" "$work/leader" "$work/follower" "$((seconds + 3))" > "$work/lag.json" &
lag_pid=$!
python3 - "$rate" "$seconds" <<'PY' | "$bin" apply --store "$work/leader" --transaction-size 1 - > /dev/null
import json, sys, time
rate, seconds = float(sys.argv[1]), float(sys.argv[2])
out = sys.stdout
out.write(json.dumps({"op": "declareActivityTypes", "types": ["com.example.load.view"]}) + "\n"); out.flush()
start, i = time.monotonic(), 0
while time.monotonic() - start < seconds:
    user = f"user{(i // 2) % 97}"
    if i % 2 == 0:
        op = {"op": "createActivity", "user": user, "activity": f"load{i}", "activityType": "com.example.load.view",
              "device": "phone", "title": f"order {i} latte", "eligibleForSearch": True, "keywords": ["coffee"]}
    else:
        op = {"op": "becomeCurrent", "user": user, "activity": f"load{i - 1}"}
    out.write(json.dumps(op) + "\n"); out.flush()
    i += 1
    time.sleep(max(0.0, start + i / rate - time.monotonic()))
PY
wait "$lag_pid"
cat "$work/lag.json" >&2

python3 - "$work" "$head" "$bytes" "$index_seconds" "$restore_seconds" "$rate" <<'PY'
import json, sys
work, head, store_bytes, index_s, restore_s, rate = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5]), float(sys.argv[6])
ship = json.load(open(f"{work}/ship.json")); lag = json.load(open(f"{work}/lag.json"))
leader_rate = head / index_s
ship_rate = ship["records"] / ship["seconds"]
restore_rate = head / restore_s
print(json.dumps({
    "records": head, "recordBytes": ship["bytes"], "storeBytes": store_bytes,
    "leader": {"seconds": round(index_s, 1), "recordsPerSecond": round(leader_rate)},
    "ship": {"seconds": round(ship["seconds"], 1), "recordsPerSecond": round(ship_rate),
             "MBPerSecond": round(ship["bytes"] / ship["seconds"] / 1e6, 1), "ratioToLeader": round(ship_rate / leader_rate, 2)},
    "restore": {"seconds": round(restore_s, 1), "recordsPerSecond": round(restore_rate), "ratioToLeader": round(restore_rate / leader_rate, 2)},
    "lag": dict(lag, operationsPerSecond=rate),
}, indent=1))
PY
