#!/usr/bin/env python3
"""Decode and verify an event log without this project's code.

Usage: verify_log.py STORE_DIR [--dump N]

Needs the `lmdb` package (Debian: python3-lmdb; PyPI: lmdb). Follows
Docs/LogFormat.md ("Verifying"): checks `meta`'s format, walks database
`log` from position 1 and checks each record's length fields, CRC-32C,
payload digest (unless redacted) and hash chain link, then that the head
recorded in `meta` matches and that no checkpoint is past it. Prints the
number of records and the last link, or the first bad position, and exits 1
on a problem. Payloads are Protocol Buffers; decode them with the schemas in
Sources/ActivityDomain/Schema (protoc --decode_raw works without them).
"""
import hashlib, struct, sys
import lmdb

def crc32c(data: bytes) -> int:
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
    return crc ^ 0xFFFFFFFF

def records(path):
    """The format, each (position, record), then ("head", meta's head and checkpoints)."""
    env = lmdb.open(path, readonly=True, lock=False, max_dbs=128, subdir=True)
    log = env.open_db(b"log", create=False)
    meta = env.open_db(b"meta", create=False)
    with env.begin() as txn:
        yield "format", txn.get(b"format", db=meta)
        for key, value in txn.cursor(db=log):
            yield struct.unpack(">Q", key)[0], bytes(value)
        checkpoints = {bytes(k)[11:].decode(): bytes(v) for k, v in txn.cursor(db=meta) if bytes(k).startswith(b"checkpoint:")}
        yield "head", (txn.get(b"head", db=meta), checkpoints)

def main():
    path = sys.argv[1]
    dump = int(sys.argv[3]) if len(sys.argv) > 3 and sys.argv[2] == "--dump" else 0
    link, expected, count = bytes(32), 1, 0
    for position, value in records(path):
        if position == "format":
            if value is not None and (len(value) != 4 or struct.unpack(">I", value)[0] != 1):
                print(f"incompatibleFormat: meta format is {bytes(value).hex()}, this reader reads format 1 (00000001)")
                return 1
            continue
        if position == "head":
            head, checkpoints = value
            end = expected - 1
            if head is None and end > 0:
                return fail(1, "truncated", "the store's recorded head is missing")
            if head is not None and len(head) != 40:
                print(f"corrupt: meta head is {len(head)} bytes, not 40")
                return 1
            if head is not None and (struct.unpack(">Q", head[:8])[0] != end or head[8:] != link):
                return fail(min(struct.unpack(">Q", head[:8])[0], end) + 1, "truncated", "the recorded head does not match the log's end")
            for name, checkpoint in sorted(checkpoints.items()):
                if len(checkpoint) != 12:
                    print(f"corrupt: meta checkpoint:{name} is {len(checkpoint)} bytes, not 12")
                    return 1
                if struct.unpack(">Q", checkpoint[:8])[0] > end:
                    return fail(end + 1, "checkpointAhead", f"projection {name} claims a position past the head {end}")
            break
        if position != expected:
            return fail(expected, "gap", f"next record is at {position}")
        if len(value) < 88 or value[0] != 1:
            return fail(position, "malformedRecord", "short record or unknown format")
        flags, tlen, version, micros, plen = value[1], *struct.unpack(">HIqI", value[2:20])
        if len(value) != 84 + tlen + plen + 4:
            return fail(position, "malformedRecord", "lengths do not fit")
        digest, stored_link = value[20:52], value[52:84]
        rtype, payload = value[84:84 + tlen], value[84 + tlen:84 + tlen + plen]
        if struct.unpack(">I", value[-4:])[0] != crc32c(value[:-4]):
            return fail(position, "checksumMismatch", "CRC-32C differs")
        if not flags & 1 and hashlib.sha256(payload).digest() != digest:
            return fail(position, "payloadDigestMismatch", "SHA-256 of payload differs")
        computed = hashlib.sha256(link + struct.pack(">QIq", position, version, micros) + digest + rtype).digest()
        if computed != stored_link:
            return fail(position, "chainBreak", "link does not follow from the previous record")
        if count < dump:
            print(f"{position} {rtype.decode()} v{version} at {micros}us payload {plen} bytes")
        link, expected, count = computed, expected + 1, count + 1
    print(f"ok: {count} records, last link {link.hex()}")
    return 0

def fail(position, kind, detail):
    print(f"position {position}: {kind}: {detail}")
    return 1

if __name__ == "__main__":
    sys.exit(main())
