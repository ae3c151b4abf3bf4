#!/usr/bin/python3
"""Follower lag under a steady write load, for Docs/Scaling.md (not a test).

Samples the heads of a leader store and of its follower (the last key of
their `log` databases, read-only through Python's lmdb package, as
Docs/LogFormat.md allows) every few milliseconds while a load runs, then
prints, as JSON, the lag of each position: the time from the first sample
that saw it in the leader to the first that saw it in the follower.

Usage: measure_lag.py LEADER_DIR FOLLOWER_DIR SECONDS [--interval MS]
"""
import json, struct, sys, time
import lmdb

def head(env, db):
    while True:
        try:
            with env.begin(db=db) as txn:
                cursor = txn.cursor()
                return struct.unpack(">Q", cursor.key())[0] if cursor.last() else 0
        except lmdb.MapResizedError:
            env.set_mapsize(0)      # adopt the size the writer grew the map to

def open_env(path):
    env = lmdb.open(path, readonly=True, lock=True, max_dbs=128, subdir=True)
    return env, env.open_db(b"log", create=False)

def main():
    leader_dir, follower_dir, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
    interval = float(sys.argv[sys.argv.index("--interval") + 1]) / 1000 if "--interval" in sys.argv else 0.005
    leader, follower = open_env(leader_dir), open_env(follower_dir)
    seen_leader, seen_follower = {}, {}     # position -> first time seen
    last_l = last_f = head(*leader)
    last_f = head(*follower)
    start = time.monotonic()
    while time.monotonic() - start < seconds:
        now = time.monotonic()
        l, f = head(*leader), head(*follower)
        for p in range(last_l + 1, l + 1): seen_leader[p] = now
        for p in range(last_f + 1, f + 1): seen_follower[p] = now
        last_l, last_f = max(last_l, l), max(last_f, f)
        time.sleep(interval)
    lags = sorted(seen_follower[p] - seen_leader[p] for p in seen_follower if p in seen_leader)
    if not lags:
        print(json.dumps({"positions": 0})); return
    pick = lambda q: lags[min(len(lags) - 1, int(q * len(lags)))]
    print(json.dumps({"positions": len(lags), "p50_ms": round(pick(0.5) * 1000, 1), "p99_ms": round(pick(0.99) * 1000, 1),
                      "max_ms": round(lags[-1] * 1000, 1), "leader_head": last_l, "follower_head": last_f,
                      "sample_interval_ms": interval * 1000}))

if __name__ == "__main__":
    main()
