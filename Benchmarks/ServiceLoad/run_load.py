#!/usr/bin/env python3
"""The service load benchmark (Docs/Benchmarks.md, "How to compare with the peers"; earlier runs: Benchmarks/History/2026-11-notebook.md, "A service under load").

The example service (Examples/ActivityService, the library embedded) and
the same endpoints on GRDB (Benchmarks/ServiceLoad, SQLite WAL,
synchronous=FULL, FTS5), each loaded with wrk as 300 users over 64
connections, three mixes, one round of each mix alternating which system
goes first, ratios from the same round:

  search      90 % searches of one word, 10 % one item indexed (on 40 corpus items a user)
  activities  createActivity, becomeCurrent of what was created, current
  items       indexSearchableItems of 10 items a request

After every run of the library's service: `eventlog verify`, `eventlog replay
--verify`, and the store holds every write the service acknowledged (what
wrk received; the writes in flight when wrk stopped may be stored too,
unacknowledged: at most one a connection). Then a SIGKILL under load: the
service is killed in the middle of the items mix, and nothing acknowledged
is lost.

Run from the repository's root (builds release binaries first):

  python3 Benchmarks/ServiceLoad/run_load.py [--duration 20] [--rounds 1] [--json out.json]

Bytes an item with real text: --corpus-text makes the items the mixes write
real corpus items (a random one of ../shared/corpus's, under the mix's
identifier) instead of search words, and --one-store runs the mixes in
order on one store a system, then reports its bytes on disk over the items
and activities it holds:

  python3 Benchmarks/ServiceLoad/run_load.py --mixes items,activities --one-store --corpus-text --no-sigkill --keep
"""
import argparse
import base64
import concurrent.futures
import gzip
import hashlib
import hmac
import http.client
import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
HERE = os.path.dirname(os.path.abspath(__file__))
KEY = "service-load-benchmark-key-0123456789abcdef"
MIXES = ["search", "activities", "items"]


def log(text):
    print(text, file=sys.stderr, flush=True)


def run(cmd, **kwargs):
    log("$ " + " ".join(cmd))
    return subprocess.run(cmd, check=True, **kwargs)


SCRATCH = os.path.join(HERE, ".build-release")


def build(args):
    # One release build folder for the three: the example service and
    # eventlog are products of this package's dependencies.
    for product in ["GRDBPeerService", "ActivityService", "eventlog"]:
        run(["swift", "build", "-c", "release", "--package-path", HERE, "--scratch-path", SCRATCH, "--product", product], cwd=ROOT)
    if shutil.which("wrk") is None:
        run(["apt-get", "install", "-y", "wrk"])


def binaries():
    release = os.path.join(SCRATCH, "release")
    return {"eventlog": os.path.join(release, "eventlog"), "ours": os.path.join(release, "ActivityService"),
            "peer": os.path.join(release, "GRDBPeerService")}


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def token(user):
    """An HS256 JWT, made here without the service's code: the services must accept it."""
    header = b64url(b'{"alg":"HS256","typ":"JWT"}')
    claims = b64url(json.dumps({"sub": user, "exp": int(time.time()) + 86400}, separators=(",", ":")).encode())
    signature = hmac.new(KEY.encode(), f"{header}.{claims}".encode(), hashlib.sha256).digest()
    return f"{header}.{claims}.{b64url(signature)}"


def words_from_corpus(corpus, queries):
    words = []
    with open(queries) as f:
        for line in f:
            w = line.strip().lower()
            if re.fullmatch(r"[a-z][a-z0-9]{2,14}", w):
                words.append(w)
    return sorted(set(words))


def corpus_items(corpus, count):
    items = []
    with gzip.open(corpus, "rt") as f:
        for line in f:
            d = json.loads(line)
            attributes = {k: d[k] for k in ("title", "displayName", "contentDescription", "keywords") if d.get(k)}
            item = {"uniqueIdentifier": "p-" + d["uniqueIdentifier"], "attributeSet": attributes}
            if d.get("domainIdentifier"):
                item["domainIdentifier"] = d["domainIdentifier"]
            items.append(item)
            if len(items) == count:
                break
    return items


class Service:
    def __init__(self, system, directory, port, bins):
        self.system, self.directory, self.port = system, directory, port
        env = dict(os.environ, ACTIVITY_SERVICE_KEY=KEY, ACTIVITY_PORT=str(port), ACTIVITY_HOST="127.0.0.1",
                   ACTIVITY_DURABILITY="durable", LOG_LEVEL="warning")
        if system == "ours":
            env["ACTIVITY_STORE"] = directory
        else:
            env["PEER_STORE"] = directory
        self.log = open(directory + ".log", "w")
        self.process = subprocess.Popen([bins[system]], env=env, stdout=self.log, stderr=self.log)
        deadline = time.time() + 120
        while time.time() < deadline:
            try:
                if self.get("/health")[0] == 200:
                    return
            except OSError:
                pass
            if self.process.poll() is not None:
                raise RuntimeError(f"{system} exited: see {directory}.log")
            time.sleep(0.2)
        raise RuntimeError(f"{system} did not answer /health")

    def get(self, path, headers=None):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        c.request("GET", path, headers=headers or {})
        r = c.getresponse()
        body = r.read()
        c.close()
        return r.status, body

    def post(self, path, body, user):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        c.request("POST", path, body=json.dumps(body), headers={"Authorization": "Bearer " + token(user), "Content-Type": "application/json"})
        r = c.getresponse()
        data = r.read()
        c.close()
        if r.status not in (200, 201):
            raise RuntimeError(f"{path}: {r.status} {data[:300]}")

    def stop(self, kill=False):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL if kill else signal.SIGTERM)
            self.process.wait(timeout=120)
        self.log.close()


def preload(service, users, items, per_user):
    """Each user gets `per_user` corpus items, in batches of 50."""
    jobs = []
    for u, user in enumerate(users):
        mine = items[u * per_user:(u + 1) * per_user]
        for i in range(0, len(mine), 50):
            jobs.append((user, mine[i:i + 50]))
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda job: service.post("/v1/items", {"items": job[1]}, job[0]), jobs))


def cpu_seconds(service):
    """The service process's user and system CPU so far, from /proc: robust
    to a shared machine's load, unlike requests a second."""
    with open(f"/proc/{service.process.pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def commit_metrics(service):
    """(commits, writes) from the library's /metrics: eventlog_commit_writes' count and sum."""
    _, body = service.get("/metrics")
    count = total = 0.0
    for line in body.decode().splitlines():
        if line.startswith("eventlog_commit_writes_count"):
            count += float(line.split()[-1])
        elif line.startswith("eventlog_commit_writes_sum"):
            total += float(line.split()[-1])
    return count, total


def corpus_text_file(corpus, workdir):
    """Each corpus item as mix.lua's ITEMS takes it: its JSON object without "{" and the identifier."""
    path = os.path.join(workdir, "corpus-items.txt")
    with gzip.open(corpus, "rt") as f, open(path, "w") as out:
        for line in f:
            d = json.loads(line)
            item = {"domainIdentifier": d["domainIdentifier"]} if d.get("domainIdentifier") else {}
            item["attributeSet"] = {k: d[k] for k in ("title", "displayName", "contentDescription", "keywords") if d.get(k)}
            out.write(json.dumps(item, ensure_ascii=False, separators=(",", ":"))[1:] + "\n")
    return path


def run_wrk(service, mix, args, workdir, tokens_file, words_file, kill_after=None):
    acked_file = os.path.join(workdir, f"acked-{service.system}-{mix}-{time.time_ns()}.txt")
    cmd = ["wrk", f"-t{args.threads}", f"-c{args.connections}", f"-d{args.duration}s", "--timeout", "30s", "-s",
           os.path.join(HERE, "mix.lua"), f"http://127.0.0.1:{service.port}", "--", mix, tokens_file, words_file, acked_file]
    if args.corpus_text_file:
        cmd.append(args.corpus_text_file)
    log("$ " + " ".join(cmd))
    process = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if kill_after is not None:
        time.sleep(kill_after)
        service.stop(kill=True)
    output, _ = process.communicate()
    result = None
    for line in output.splitlines():
        if line.startswith("RESULT "):
            result = json.loads(line[len("RESULT "):])
    if result is None:
        raise RuntimeError("wrk printed no result:\n" + output)
    acked = []
    if os.path.exists(acked_file):
        with open(acked_file) as f:
            acked = [tuple(line.split()) for line in f if line.strip()]
    result["acked"] = acked
    result["rps"] = result["requests"] / result["seconds"]
    return result


def expected(acked):
    """What the acknowledged writes must have left: (kind, user, id) facts."""
    facts = set()
    for kind, user, ident in acked:
        if kind == "items":
            facts.update(("item", user, f"{ident}-{k}") for k in range(1, 11))
        elif kind == "item":
            facts.add(("item", user, ident))
        elif kind == "activity":
            facts.add(("activity", user, ident))
        elif kind == "current":
            facts.add(("current", user, ident))
    return facts


def stored_ours(bins, directory):
    out = subprocess.run([bins["eventlog"], "log", "--store", directory, "--json"], check=True, capture_output=True, text=True).stdout
    facts = set()
    for line in out.splitlines():
        e = json.loads(line)
        event, user = e.get("event", {}), e.get("event", {}).get("user", "")
        if e["type"] == "activity.created":
            facts.add(("activity", user, event["activity"]["activity"]))
        elif e["type"] == "activity.becameCurrent":
            facts.add(("current", user, event["activity"]))
        elif e["type"] == "searchableItems.indexed":
            for item in event.get("items", []):
                facts.add(("item", user, item["item"]["uniqueIdentifier"]))
    return {f for f in facts if not f[2].startswith("p-")}


def stored_peer(directory):
    db = sqlite3.connect(os.path.join(directory, "peer.sqlite"))
    facts = {("item", u, i) for u, i in db.execute("SELECT user, id FROM items") if not i.startswith("p-")}
    facts |= {("activity", u, a) for u, a in db.execute("SELECT user, activity FROM activities")}
    facts |= {("current", u, a) for u, a in db.execute("SELECT user, activity FROM activities WHERE becameCurrentAt IS NOT NULL")}
    db.close()
    return facts


def disk_bytes(directory):
    total = 0
    for base, _, files in os.walk(directory):
        for name in files:
            total += os.path.getsize(os.path.join(base, name))
    return total


def check_ours(bins, directory):
    verify = subprocess.run([bins["eventlog"], "verify", "--store", directory], capture_output=True, text=True)
    replay = subprocess.run([bins["eventlog"], "replay", "--verify", "--store", directory], capture_output=True, text=True)
    return {"verify": verify.returncode == 0, "verifyOutput": (verify.stdout + verify.stderr).strip()[-300:],
            "replayVerify": replay.returncode == 0, "replayOutput": (replay.stdout + replay.stderr).strip()[-300:]}


def one_run(system, mix, args, bins, workdir, tokens_file, words_file, users, corpus, port):
    directory = os.path.join(workdir, f"{system}-{mix}-{time.time_ns()}")
    service = Service(system, directory, port, bins)
    try:
        if mix == "search":
            preload(service, users, corpus, args.preload)
        before = commit_metrics(service) if system == "ours" else None
        cpu_before = cpu_seconds(service)
        result = run_wrk(service, mix, args, workdir, tokens_file, words_file)
        result["cpuMicrosPerRequest"] = (cpu_seconds(service) - cpu_before) * 1e6 / max(1, result["requests"])
        after = commit_metrics(service) if system == "ours" else None
    finally:
        service.stop()
    if before and after and after[0] > before[0]:
        result["commits"] = after[0] - before[0]
        result["writesPerCommit"] = (after[1] - before[1]) / (after[0] - before[0])
    # Every file of the store: for ours the log's environment and the index's (index/).
    result["bytes"] = disk_bytes(directory)
    if system == "ours":
        result["bytesIndex"] = disk_bytes(os.path.join(directory, "index"))
    stored = stored_ours(bins, directory) if system == "ours" else stored_peer(directory)
    facts = expected(result.pop("acked"))
    result["acknowledged"] = len(facts)
    result["missing"] = sorted(facts - stored)[:10]
    result["missingCount"] = len(facts - stored)
    result["unacknowledgedStored"] = len(stored - facts)
    items_stored = len([f for f in stored if f[0] == "item"]) + (len(users) * args.preload if mix == "search" else 0)
    result["itemsStored"] = items_stored
    if items_stored:
        result["bytesPerItem"] = result["bytes"] / items_stored
    if system == "ours":
        result.update(check_ours(bins, directory))
    if not args.keep:
        shutil.rmtree(directory, ignore_errors=True)
    return result


def one_store_run(system, args, bins, workdir, tokens_file, words_file, port):
    """--one-store: the mixes in order on one store; its bytes over what it holds."""
    directory = os.path.join(workdir, f"{system}-one-store-{time.time_ns()}")
    service = Service(system, directory, port, bins)
    result, acked = {"mixes": {}}, []
    try:
        for mix in args.mixes.split(","):
            run = run_wrk(service, mix, args, workdir, tokens_file, words_file)
            acked += run.pop("acked")
            result["mixes"][mix] = run
            log(f"{system} {mix}: {json.dumps(run)}")
    finally:
        service.stop()
    result["directory"] = directory
    result["bytes"] = disk_bytes(directory)
    stored = stored_ours(bins, directory) if system == "ours" else stored_peer(directory)
    facts = expected(acked)
    result["acknowledged"], result["missingCount"] = len(facts), len(facts - stored)
    result["itemsStored"] = len([f for f in stored if f[0] == "item"])
    result["activitiesStored"] = len([f for f in stored if f[0] == "activity"])
    result["bytesPerItem"] = result["bytes"] / max(1, result["itemsStored"])
    if system == "ours":
        result["bytesIndex"] = disk_bytes(os.path.join(directory, "index"))
        result["stats"] = json.loads(subprocess.run([bins["eventlog"], "stats", "--store", directory, "--json"],
                                                    check=True, capture_output=True, text=True).stdout)
        result.update(check_ours(bins, directory))
    if not args.keep:
        shutil.rmtree(directory, ignore_errors=True)
    return result


def sigkill_check(args, bins, workdir, tokens_file, words_file, port):
    directory = os.path.join(workdir, f"ours-sigkill-{time.time_ns()}")
    service = Service("ours", directory, port, bins)
    result = run_wrk(service, "items", args, workdir, tokens_file, words_file, kill_after=args.duration / 2)
    stored = stored_ours(bins, directory)
    facts = expected(result.pop("acked"))
    check = {"acknowledged": len(facts), "missingCount": len(facts - stored), "unacknowledgedStored": len(stored - facts)}
    check.update(check_ours(bins, directory))
    # It opens again and serves.
    again = Service("ours", directory, port, bins)
    check["reopened"] = again.get("/health")[0] == 200
    again.stop()
    if not args.keep:
        shutil.rmtree(directory, ignore_errors=True)
    return check


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--duration", type=int, default=20, help="seconds of each wrk run")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--users", type=int, default=300)
    parser.add_argument("--connections", type=int, default=64)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--preload", type=int, default=40, help="corpus items a user before the search mix")
    parser.add_argument("--mixes", default=",".join(MIXES))
    parser.add_argument("--corpus", default=os.path.join(ROOT, "../shared/corpus/items.jsonl.gz"))
    parser.add_argument("--queries", default=os.path.join(ROOT, "../shared/corpus/queries.txt"))
    parser.add_argument("--port", type=int, default=18080)
    parser.add_argument("--skip-build", action="store_true")
    parser.add_argument("--no-sigkill", action="store_true")
    parser.add_argument("--keep", action="store_true", help="keep the stores")
    parser.add_argument("--json", help="write the results here")
    parser.add_argument("--corpus-text", action="store_true", help="the items the mixes write are real corpus items, not search words")
    parser.add_argument("--one-store", action="store_true", help="the mixes in order on one store a system; bytes an item stored")
    args = parser.parse_args()

    if not args.skip_build:
        build(args)
    bins = binaries()
    workdir = tempfile.mkdtemp(prefix="service-load-")
    users = [f"user{i:03d}" for i in range(args.users)]
    tokens_file = os.path.join(workdir, "tokens.txt")
    with open(tokens_file, "w") as f:
        for user in users:
            f.write(f"{user} {token(user)}\n")
    words = words_from_corpus(args.corpus, args.queries)
    words_file = os.path.join(workdir, "words.txt")
    with open(words_file, "w") as f:
        f.write("\n".join(words) + "\n")
    corpus = corpus_items(args.corpus, args.users * args.preload)
    args.corpus_text_file = corpus_text_file(args.corpus, workdir) if args.corpus_text else None
    log(f"{len(users)} users, {len(words)} search words, {len(corpus)} corpus items to preload; work in {workdir}")

    if args.one_store:
        results = []
        for r in range(args.rounds):
            order = ["ours", "peer"] if r % 2 == 0 else ["peer", "ours"]
            results.append({system: one_store_run(system, args, bins, workdir, tokens_file, words_file, args.port) for system in order})
        print(f"| round | system | mixes ({args.mixes}) req/s | items / activities stored | bytes on disk | bytes an item stored | checks |")
        print("|---|---|---|---|---|---|---|")
        for r, result in enumerate(results):
            for system in ["ours", "peer"]:
                x = result[system]
                rates = " · ".join(f"{run['rps']:.0f}" for run in x["mixes"].values())
                checks = f"acked stored {x['acknowledged'] - x['missingCount']}/{x['acknowledged']}"
                if system == "ours":
                    checks += f" · verify {'ok' if x['verify'] else 'FAILED'} · replay --verify {'ok' if x['replayVerify'] else 'FAILED'}"
                print(f"| {r + 1} | {'eventlog' if system == 'ours' else 'GRDB/FTS5'} | {rates} | {x['itemsStored']:,} / {x['activitiesStored']:,} | "
                      f"{x['bytes'] / 1e6:.1f} MB | {x['bytesPerItem']:,.0f} | {checks} |")
            print(f"| {r + 1} | ratio | | | | {result['ours']['bytesPerItem'] / result['peer']['bytesPerItem']:.2f}× | |")
        if args.json:
            with open(args.json, "w") as f:
                json.dump({"oneStore": results, "arguments": vars(args)}, f, indent=1)
        shutil.rmtree(workdir, ignore_errors=True) if not args.keep else None
        return

    rounds = []
    for r in range(args.rounds):
        results = {}
        for m, mix in enumerate(args.mixes.split(",")):
            order = ["ours", "peer"] if (r + m) % 2 == 0 else ["peer", "ours"]
            for system in order:
                log(f"round {r + 1}, {mix}, {system}")
                results[(mix, system)] = one_run(system, mix, args, bins, workdir, tokens_file, words_file, users, corpus, args.port)
                log(json.dumps({k: v for k, v in results[(mix, system)].items() if k != "missing"}))
        rounds.append(results)
    sigkill = None if args.no_sigkill else sigkill_check(args, bins, workdir, tokens_file, words_file, args.port)

    print("| round | mix | ours req/s | GRDB req/s | ratio | ours p50 / p99 ms | GRDB p50 / p99 ms | CPU µs a request, ours / GRDB | writes a commit | bytes an item, ours / GRDB | checks |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r, results in enumerate(rounds):
        for mix in args.mixes.split(","):
            ours, peer = results[(mix, "ours")], results[(mix, "peer")]
            checks = "verify {} · replay --verify {} · acked stored {}/{} ({} more in flight)".format(
                "ok" if ours["verify"] else "FAILED", "ok" if ours["replayVerify"] else "FAILED",
                ours["acknowledged"] - ours["missingCount"], ours["acknowledged"], ours["unacknowledgedStored"])
            per_item = "{:.0f} / {:.0f}".format(ours.get("bytesPerItem", 0), peer.get("bytesPerItem", 0)) if mix != "activities" else ""
            print(f"| {r + 1} | {mix} | {ours['rps']:.0f} | {peer['rps']:.0f} | {ours['rps'] / peer['rps']:.2f}× | "
                  f"{ours['p50_ms']:.1f} / {ours['p99_ms']:.1f} | {peer['p50_ms']:.1f} / {peer['p99_ms']:.1f} | "
                  f"{ours['cpuMicrosPerRequest']:.0f} / {peer['cpuMicrosPerRequest']:.0f} | "
                  f"{ours.get('writesPerCommit', 0):.1f} | {per_item} | {checks} |")
    if sigkill:
        print(f"\nSIGKILL under the items mix: {sigkill['acknowledged']} acknowledged, {sigkill['missingCount']} lost, "
              f"verify {'ok' if sigkill['verify'] else 'FAILED'}, replay --verify {'ok' if sigkill['replayVerify'] else 'FAILED'}, "
              f"reopened {'ok' if sigkill['reopened'] else 'FAILED'}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"rounds": [{f"{m}/{s}": v for (m, s), v in results.items()} for results in rounds], "sigkill": sigkill,
                       "arguments": vars(args)}, f, indent=1)
    shutil.rmtree(workdir, ignore_errors=True) if not args.keep else None


if __name__ == "__main__":
    main()
