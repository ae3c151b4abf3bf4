#!/usr/bin/env python3
"""Where a service's CPU goes under one of the load mixes (Benchmarks/History/2026-11-notebook.md,
"Search under load: where a request's time goes").

Starts one system of run_load.py (the example service, `ours`, or the GRDB
peer), preloads 40 corpus items a user as the search mix does, then for each
mix runs wrk (300 users, 64 connections) and reports the service's CPU a
request (from /proc). With --perf it samples the whole machine meanwhile
(`perf record -a -g`, cpu-clock at 499 Hz), keeps the service's samples and
sorts each into the first of these parts whose function is on its stack:
the indexer, the log's commit, the answer's JSON, …, the HTTP stack (NIO,
Hummingbird), scheduling. A store thread's sample whose stack was lost in C
(LMDB's pwrite, fdatasync) counts for that thread's part.

Mixes: those of mix.lua, and three that measure the shared stack alone:
health (GET /health, no token), current (GET /v1/current: token, one read),
searchonly (the search mix without its writes).

  python3 Benchmarks/ServiceLoad/profile_service.py ours health,current,searchonly,search --perf
  python3 Benchmarks/ServiceLoad/profile_service.py peer search --perf

Run from the repository's root after run_load.py has built the binaries.
"""
import argparse
import collections
import json
import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_load as R  # noqa: E402

# The first rule matching any frame of a sample's stack names its part.
PARTS = [
    ("indexer (prepare, apply, index commit)", r"Indexer|IndexFeed|IndexTarget|TextIndexWriter|PreparedDocument|KeywordIndexProjection"),
    ("log commit (GroupCommit, LMDB write, fsync)", r"GroupCommit|EventLog0A5StoreC6commit|Environment(C|V)[0-9]*write|fdatasync|0A5StoreC5write_"),
    ("JSON answer (value -> bytes)", r"JSONBodyV8response|JSONBodyVyxG11Hummingbird17ResponseGenerator|ActivityJSON|0A4JSONO5bytes|JSONValueEncoder|EncoderCore|JSONValueO5write|4jsonAA9JSONValue|SE6encode"),
    ("JSON read (request bodies, the peer's stored JSON)", r"JSONValue.*pars|JSONParser|OperationDecoder|JSONRequestDecoder|SearchableItemV4json|MemberReader"),
    ("peer store (GRDB, SQLite FTS5)", r"GRDB|sqlite3|fts5|PeerStore|Fts5|bm25"),
    ("auth (token check, cache)", r"UserAuthenticator|VerifiedTokens|BearerToken|bearer"),
    ("store: search (index read, scoring)", r"9TextIndex.*search|SpaceReaderV6search|SpaceReaderV5query|Searcher"),
    ("store: documents (item reads, decoding)", r"SpaceReaderV9documents|ItemSlices|ItemStore"),
    ("store: read transactions, reading(after:)", r"readIndex|mdb_txn|Environment(C|V)[0-9]*read|UserScopedV7reading|waitForIndex|BlockingWork"),
    ("route: query parameters", r"RequestV015ActivityService|percentDecoded"),
    ("metrics", r"StoreMetrics|ServiceMetrics|Prometheus|7CoreMetrics"),
    ("Hummingbird (router, middleware)", r"Hummingbird"),
    ("NIO (HTTP parsing, channels, sockets)", r"NIO|epoll|sendmsg|recvmsg|tcp_|sock_|__x64_sys_write|__x64_sys_read"),
    ("scheduling (tasks, dispatch, futex)", r"swift_task|swift_job|dispatch|futex|schedule|Executor"),
]
PARTS = [(name, re.compile(pattern)) for name, pattern in PARTS]
OTHER = "other (allocation, runtime, kernel, stack lost)"


def samples(perf_data, pid):
    """(tid, frames) of each sample of process `pid`."""
    text = subprocess.run(["perf", "script", "-i", perf_data, "--pid", str(pid), "-F", "tid,ip,sym"],
                          capture_output=True, text=True, errors="replace").stdout
    tid, frames = None, []
    for line in text.splitlines():
        if line.strip() and not line.startswith("\t"):
            if tid is not None:
                yield tid, frames
            tid, frames = line.split()[0], []
        elif line.strip():
            parts = line.split(None, 1)
            frames.append(parts[1].strip() if len(parts) > 1 else "")
    if tid is not None:
        yield tid, frames


def breakdown(perf_data, pid):
    all_samples = list(samples(perf_data, pid))

    def part(frames, parts):
        for name, pattern in parts:
            if any(pattern.search(f) for f in frames):
                return name
        return None
    # A store thread (the indexer's, the log writer's) keeps its part when C frames lost the stack.
    roles = collections.defaultdict(collections.Counter)
    for tid, frames in all_samples:
        name = part(frames, PARTS[:2])
        if name:
            roles[tid][name] += 1
    role = {tid: c.most_common(1)[0][0] for tid, c in roles.items() if c.most_common(1)[0][1] > 20}
    counts = collections.Counter(part(frames, PARTS) or role.get(tid) or OTHER for tid, frames in all_samples)
    return len(all_samples), counts


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("system", choices=["ours", "peer"])
    parser.add_argument("mixes", help="comma-separated: search, searchonly, health, current, activities, items")
    parser.add_argument("--duration", type=int, default=15)
    parser.add_argument("--perf", action="store_true", help="sample with perf and print the breakdown")
    parser.add_argument("--binary", help="this service binary instead of the built one")
    parser.add_argument("--port", type=int, default=18090)
    parser.add_argument("--corpus", default=os.path.join(R.ROOT, "../shared/corpus/items.jsonl.gz"))
    parser.add_argument("--queries", default=os.path.join(R.ROOT, "../shared/corpus/queries.txt"))
    args = parser.parse_args()
    bins = R.binaries()
    if args.binary:
        bins[args.system] = args.binary
    work = tempfile.mkdtemp(prefix="service-profile-")
    users = [f"user{i:03d}" for i in range(300)]
    tokens_file = os.path.join(work, "tokens.txt")
    with open(tokens_file, "w") as f:
        f.write("".join(f"{u} {R.token(u)}\n" for u in users))
    words_file = os.path.join(work, "words.txt")
    with open(words_file, "w") as f:
        f.write("\n".join(R.words_from_corpus(args.corpus, args.queries)) + "\n")
    service = R.Service(args.system, os.path.join(work, args.system), args.port, bins)
    try:
        R.preload(service, users, R.corpus_items(args.corpus, 300 * 40), 40)
        time.sleep(2)
        for mix in args.mixes.split(","):
            perf_data = os.path.join(work, f"perf-{mix}.data")
            perf = None
            if args.perf:
                perf = subprocess.Popen(["perf", "record", "-F", "499", "-g", "-a", "-o", perf_data, "--", "sleep", str(args.duration - 2)],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            cpu_before = R.cpu_seconds(service)
            cmd = ["wrk", "-t2", "-c64", f"-d{args.duration}s", "--timeout", "30s", "-s", os.path.join(R.HERE, "mix.lua"),
                   f"http://127.0.0.1:{args.port}", "--", mix, tokens_file, words_file, os.path.join(work, "acked.txt")]
            output = subprocess.run(cmd, capture_output=True, text=True).stdout
            cpu = R.cpu_seconds(service) - cpu_before
            result = next(json.loads(line[7:]) for line in output.splitlines() if line.startswith("RESULT "))
            report = {"system": args.system, "mix": mix, "load": float(open("/proc/loadavg").read().split()[0]),
                      "rps": round(result["requests"] / result["seconds"]),
                      "cpuMicrosPerRequest": round(cpu * 1e6 / max(1, result["requests"]), 1),
                      "p50_ms": result["p50_ms"], "p99_ms": result["p99_ms"], "statuses": result["statuses"]}
            if perf:
                perf.wait()
                total, counts = breakdown(perf_data, service.process.pid)
                report["samples"] = total
                report["parts"] = {name: {"share": round(n / total, 3), "micros": round(n / total * report["cpuMicrosPerRequest"], 1)}
                                   for name, n in counts.most_common()}
            print(json.dumps(report), flush=True)
    finally:
        service.stop()
        subprocess.run(["rm", "-rf", work])


if __name__ == "__main__":
    main()
