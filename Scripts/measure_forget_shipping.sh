#!/usr/bin/env bash
# What shipping a forget costs: a store where user "big" has N events among
# other users' N, shipped to PostgreSQL and followed; then big is forgotten
# and the forget shipped (one record, N rows rewritten) and followed (N local
# records redacted, big's views dropped). Prints the JSON of each step.
# Usage: bash Scripts/with-postgres.sh bash Scripts/measure_forget_shipping.sh [EVENTLOG] [N]
set -euo pipefail
eventlog=${1:-.build/release/eventlog}
n=${2:-10000}
url=${EVENTLOG_TEST_POSTGRES_URL:?run under Scripts/with-postgres.sh}
dir=$(mktemp -d /tmp/measure-forget.XXXXXX)
trap 'rm -rf "$dir"' EXIT
stream="forget-$$"
python3 - "$n" > "$dir/ops.jsonl" <<'PY'
import json, sys
n = int(sys.argv[1])
print(json.dumps({"op": "declareActivityTypes", "types": ["t.view"], "at": "2026-11-22T09:00:00Z"}))
for i in range(n):
    for user in ("big", f"u{i % 50}"):
        print(json.dumps({"op": "createActivity", "activity": f"a{i}", "activityType": "t.view", "device": "phone",
                          "user": user, "title": f"Order {i} latte", "keywords": ["coffee"], "eligibleForSearch": True,
                          "at": f"2026-11-22T10:00:00Z"}))
PY
"$eventlog" apply --store "$dir/leader" --transaction-size 1000 "$dir/ops.jsonl" >/dev/null
step() { local name=$1; shift; local start end; start=$(date +%s.%N); "$@" > "$dir/out.json"; end=$(date +%s.%N)
  printf '%-28s %6.2f s  %s\n' "$name" "$(echo "$end - $start" | bc)" "$(head -c 300 "$dir/out.json")"; }
step "ship (2N+1 records)" "$eventlog" ship --store "$dir/leader" --to "$url" --stream "$stream" --once --json
step "follow (2N+1 records)" "$eventlog" follow --store "$dir/follower" --from "$url" --stream "$stream" --once --json
echo '{"op":"forgetUser","user":"big","at":"2026-11-23T10:00:00Z"}' > "$dir/forget.jsonl"
step "forget (leader, N events)" "$eventlog" apply --store "$dir/leader" "$dir/forget.jsonl"
step "ship the forget" "$eventlog" ship --store "$dir/leader" --to "$url" --stream "$stream" --once --json
step "follow the forget" "$eventlog" follow --store "$dir/follower" --from "$url" --stream "$stream" --once --json
step "restore after the forget" "$eventlog" restore --from "$url" --stream "$stream" --into "$dir/restored" --json
step "verify the follower" "$eventlog" verify --store "$dir/follower" --json
cmp <(/usr/bin/python3 -c 'import lmdb,sys
e=lmdb.open(sys.argv[1],readonly=True,lock=False,max_dbs=128)
d=e.open_db(b"log",create=False)
t=e.begin(); [sys.stdout.buffer.write(k+v) for k,v in t.cursor(db=d)]' "$dir/leader") <(/usr/bin/python3 -c 'import lmdb,sys
e=lmdb.open(sys.argv[1],readonly=True,lock=False,max_dbs=128)
d=e.open_db(b"log",create=False)
t=e.begin(); [sys.stdout.buffer.write(k+v) for k,v in t.cursor(db=d)]' "$dir/follower") && echo "follower's log equals the leader's"
