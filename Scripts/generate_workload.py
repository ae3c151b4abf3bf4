#!/usr/bin/env python3
"""Write SPEC §6 operations (JSON Lines) for measurements: a generated
activity history, and/or the corpus as indexSearchableItems batches.

Usage:
  generate_workload.py activities N [--seed S]     # about N lifecycle events
  generate_workload.py activities N --user U --user-events K [--seed S]
                                                   # of which about K are U's, spread evenly
                                                   # (a user to forget: Benchmarks/History/2026-11-notebook.md)
  generate_workload.py corpus ITEMS.jsonl.gz [--batch B]

Deterministic for a seed; every line carries "at", so a store built from the
output is the same bytes every time. Pipe it into `eventlog apply -`.
"""
import gzip, json, random, sys
from datetime import datetime, timedelta, timezone

def iso(t):
    return t.strftime("%Y-%m-%dT%H:%M:%S.%fZ")

def activities(n, seed):
    rng = random.Random(seed)
    t = datetime(2026, 1, 1, tzinfo=timezone.utc)
    types = [f"com.example.shop.action{i:02d}" for i in range(12)]
    yield {"op": "declareActivityTypes", "types": types, "at": iso(t)}
    users = [f"user{u}" for u in range(300)]
    devices = {u: [f"{u}-{k}" for k in ("phone", "watch", "mac")[: rng.randint(1, 3)]] for u in users}
    live = []          # activities that are not invalidated
    owner = {}         # activity id → its user: every later operation acts in that user's space
    events, serial = 0, 0
    words = "latte oat mocha espresso order pickup receipt menu cafe table card coffee tea cold brew".split()
    while events < n:
        t += timedelta(milliseconds=rng.randint(1, 400))
        r = rng.random()
        if r < 0.25 or len(live) < 50:
            serial += 1
            user = rng.choice(users)
            a = f"a{serial}"
            op = {"op": "createActivity", "activity": a, "activityType": rng.choice(types),
                  "device": rng.choice(devices[user]), "user": user,
                  "title": " ".join(rng.sample(words, 3)), "userInfo": {"orderID": serial, "size": rng.choice(["s", "m", "l"])},
                  "eligibleForSearch": rng.random() < 0.5, "keywords": rng.sample(words, 2), "at": iso(t)}
            if rng.random() < 0.6:
                op["persistentIdentifier"] = f"order-{serial}"
            live.append(a); owner[a] = user; events += 1
            yield op
        elif r < 0.65:
            a = rng.choice(live)
            yield {"op": "becomeCurrent", "activity": a, "user": owner[a], "at": iso(t)}; events += 2
        elif r < 0.80:
            a = rng.choice(live)
            yield {"op": "addUserInfoEntries", "activity": a, "user": owner[a], "entries": {"step": rng.randint(1, 9)}, "at": iso(t)}; events += 1
        elif r < 0.90:
            a = rng.choice(live)
            yield {"op": "resignCurrent", "activity": a, "user": owner[a], "at": iso(t)}; events += 1
        elif r < 0.98:
            a = live.pop(rng.randrange(len(live)))
            yield {"op": "invalidate", "activity": a, "user": owner[a], "at": iso(t)}; events += 1
        else:
            k = rng.randint(1, serial)
            yield {"op": "deleteSavedUserActivities", "user": owner.get(f"a{k}", rng.choice(users)),
                   "persistentIdentifiers": [f"order-{k}"], "at": iso(t)}; events += 1

def with_user(ops, n, user, k, seed):
    """`ops` (about n events of 300 users) with about k events of `user`
    interleaved evenly: activities created, made current (two events:
    becameCurrent, saved), given userInfo, and items indexed, so that the
    user has data in every view and events all along the log."""
    rng = random.Random(seed + 1)
    every = max(1, n // max(1, k))
    words = "latte oat mocha espresso order pickup receipt menu cafe table card coffee tea cold brew".split()
    seen, mine, serial = 0, 0, 0
    for op in ops:
        yield op
        before = seen
        seen += 2 if op.get("op") == "becomeCurrent" else 1
        if before // every == seen // every or mine >= k:
            continue
        t, r = op["at"], rng.random()
        if serial == 0 or r < 0.3:
            serial += 1
            yield {"op": "createActivity", "activity": f"{user}-a{serial}", "activityType": "com.example.shop.action00",
                   "device": "phone", "user": user, "title": " ".join(rng.sample(words, 3)) + f" {user}",
                   "userInfo": {"orderID": serial}, "eligibleForSearch": True, "keywords": rng.sample(words, 2),
                   "persistentIdentifier": f"{user}-order-{serial}", "at": t}
            mine += 1
        elif r < 0.6:
            yield {"op": "becomeCurrent", "activity": f"{user}-a{rng.randint(1, serial)}", "user": user, "at": t}
            mine += 2
        elif r < 0.8:
            yield {"op": "addUserInfoEntries", "activity": f"{user}-a{rng.randint(1, serial)}", "user": user,
                   "entries": {"step": rng.randint(1, 9)}, "at": t}
            mine += 1
        else:
            yield {"op": "indexSearchableItems", "user": user, "at": t, "items": [{
                "uniqueIdentifier": f"{user}-item-{rng.randint(1, 2000)}", "domainIdentifier": "orders",
                "attributeSet": {"title": " ".join(rng.sample(words, 4)) + f" {user}", "keywords": rng.sample(words, 2)}}]}
            mine += 1

def corpus(path, batch):
    t = datetime(2026, 11, 1, tzinfo=timezone.utc)
    with gzip.open(path, "rt", encoding="utf-8") if path.endswith(".gz") else open(path, encoding="utf-8") as f:
        chunk = []
        for line in f:
            r = json.loads(line)
            attrs = {k: r[k] for k in ("title", "displayName", "contentDescription", "keywords") if r.get(k)}
            chunk.append({"uniqueIdentifier": r["uniqueIdentifier"], "domainIdentifier": r["domainIdentifier"], "attributeSet": attrs})
            if len(chunk) == batch:
                yield {"op": "indexSearchableItems", "items": chunk, "at": iso(t)}; chunk = []
        if chunk:
            yield {"op": "indexSearchableItems", "items": chunk, "at": iso(t)}

if __name__ == "__main__":
    args = sys.argv[1:]
    opt = lambda name, default: int(args[args.index(name) + 1]) if name in args else default
    if args[0] == "activities":
        gen = activities(int(args[1]), opt("--seed", 1))
        if "--user" in args:
            k = opt("--user-events", 10000)
            gen = with_user(activities(int(args[1]) - k, opt("--seed", 1)), int(args[1]) - k, args[args.index("--user") + 1], k, opt("--seed", 1))
    else:
        gen = corpus(args[1], opt("--batch", 500))
    out = sys.stdout
    for op in gen:
        out.write(json.dumps(op, ensure_ascii=False, separators=(",", ":")) + "\n")
