#!/usr/bin/env python3
"""The service's items mix as `eventlog apply` operations, without HTTP.

15,000 indexSearchableItems of 10 items (the items mix's bodies: ids
i{thread}-{n}-{k}, domain "notes", words of queries.txt), a random user of
300 each, 1 ms apart; what Benchmarks/History/2026-11-notebook.md ("The item store's layout for
many small spaces") applies 29 a transaction (the mix's writes a commit) to
count the bytes an item of each database:

  python3 Benchmarks/ServiceLoad/items_ops.py > /tmp/svc-ops.jsonl
  eventlog apply --store /tmp/svc --transaction-size 29 --json /tmp/svc-ops.jsonl
  eventlog stats --store /tmp/svc --json
"""
import argparse
import datetime
import json
import random
import sys

parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
parser.add_argument("--requests", type=int, default=15000)
parser.add_argument("--users", type=int, default=300)
parser.add_argument("--queries", default="../shared/corpus/queries.txt")
parser.add_argument("--seed", type=int, default=28)
args = parser.parse_args()

random.seed(args.seed)
words = [w.strip("*") for line in open(args.queries, encoding="utf-8") for w in line.split() if w.strip("*")]
start = datetime.datetime(2026, 11, 27, 12, 0, 0, tzinfo=datetime.timezone.utc)


def item(identifier):
    return {"uniqueIdentifier": identifier, "domainIdentifier": "notes",
            "attributeSet": {"title": f"{random.choice(words)} {random.choice(words)}",
                             "contentDescription": " ".join(random.choice(words) for _ in range(4)),
                             "keywords": [random.choice(words)]}}


for n in range(args.requests):
    user = f"u{random.randrange(args.users)}"
    items = [item(f"i{n % 4}-{n}-{k}") for k in range(1, 11)]
    at = (start + datetime.timedelta(milliseconds=n)).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
    sys.stdout.write(json.dumps({"op": "indexSearchableItems", "user": user, "items": items, "at": at}, ensure_ascii=False) + "\n")
