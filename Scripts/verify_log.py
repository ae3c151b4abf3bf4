#!/usr/bin/env python3
"""Decode and verify an event log without this project's code.

Usage: verify_log.py STORE_DIR [--dump N] [--json] [--schema DIR | --no-schema]

Needs the `lmdb` package (Debian: python3-lmdb; PyPI: lmdb), and for a log
with compressed payloads (format 2) the `zstandard` package (Debian:
python3-zstandard; PyPI: zstandard). Follows Docs/LogFormat.md
("Verifying"): checks `meta`'s format, walks database `log` from position 1
and checks each record's length fields, CRC-32C, payload digest (unless
redacted; a compressed payload is decompressed with the dictionary it names,
from database `dictionaries`) and hash chain link, the record rules
("Redaction": type length, reserved flags, a redacted record has no payload,
a redaction record's ranges), then that every redacted record is covered by
a later `eventlog.redaction` record (or a pending authorization past the
head, kept in `meta` by a follower or a restore), that the head recorded in `meta`
matches and that no checkpoint is past it. Prints the
number of records and the last link, or the first bad position, and exits 1
on a problem.

Step 6 of "Verifying": the payload of every record of an activity store's
event types (Docs/Semantics.md) is decoded with the schema, the .proto files
of Sources/ActivityDomain/Schema (--schema DIR; without a schema there,
or with --no-schema, for a log of another application, payloads are not
decoded), by log_payloads.py beside this script: a
Protocol Buffers reader driven by those files, no generated code. A payload
that does not decode, or a known type at a schema version it does not read,
is undecodablePayload. --json prints every record as `eventlog log --json`
does, one JSON object a line ({"position","type","version","at","event"},
"redacted": true instead of "event" for a redacted payload, no "event" for
a type the schema does not name), and the report on stderr.
"""
import argparse, bisect, datetime, hashlib, json, os, struct, sys
import lmdb
from log_payloads import DecodeError, Schema

def crc32c(data: bytes) -> int:
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
    return crc ^ 0xFFFFFFFF

REDACTION = b"eventlog.redaction"

def redaction_ranges(payload: bytes, position: int):
    """The ranges an `eventlog.redaction` payload names (Docs/LogFormat.md, "Redaction"), or an error string."""
    i = 0
    def varint():
        nonlocal i
        value, shift = 0, 0
        while True:
            if i >= len(payload) or shift >= 64:
                raise ValueError(f"truncated varint at byte {i}")
            b = payload[i]; i += 1
            value |= (b & 0x7F) << shift
            if b < 0x80:
                return value
            shift += 7
    try:
        ranges, previous = [], 0
        for index in range(varint()):
            gap, extent = varint(), varint()
            if gap < (1 if index == 0 else 2):
                return f"range {index + 1} (gap {gap}, extent {extent}) is out of order or adjacent"
            start = previous + gap
            previous = start + extent
            ranges.append((start, previous))
    except ValueError as error:
        return str(error)
    if ranges and ranges[-1][1] >= position:
        return f"it names position {ranges[-1][1]}; a redaction record covers only positions before its own"
    return ranges

def first_unauthorized(redacted, covered):
    """The first redacted position that no later redaction record covers, or None."""
    covered = sorted(covered)
    starts = [start for start, _, _ in covered]
    for position in redacted:
        i = bisect.bisect_right(starts, position) - 1
        if i < 0 or not (covered[i][1] >= position and covered[i][2] > position):
            return position
    return None

def read_varint(data: bytes, i: int):
    """The varint at data[i:] and the offset after it (ValueError when cut short)."""
    value, shift = 0, 0
    while True:
        if i >= len(data) or shift >= 64:
            raise ValueError(f"truncated varint at byte {i}")
        b = data[i]; i += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return value, i
        shift += 7

DICTIONARIES = {}  # id -> bytes, from database `dictionaries`

def decompress(stored: bytes, plen: int) -> bytes:
    """A compressed payload (Docs/LogFormat.md, "Compressed payloads"): varint D,
    a byte k, the stored lengths of all blocks but the last, then one zstd frame
    a block of 2^k payload bytes, decompressed with dictionary D (none when 0)."""
    import zstandard
    dictionary_id, i = read_varint(stored, 0)
    if i >= len(stored):
        raise ValueError("the block size is missing")
    k = stored[i]; i += 1
    if not 6 <= k <= 24 or plen == 0:
        raise ValueError(f"blocks of 2^{k} bytes of a {plen}-byte payload")
    blocks = (plen + (1 << k) - 1) >> k
    lengths = []
    for _ in range(blocks - 1):
        length, i = read_varint(stored, i)
        lengths.append(length)
    lengths.append(len(stored) - i - sum(lengths))
    if dictionary_id and dictionary_id not in DICTIONARIES:
        raise ValueError(f"dictionary {dictionary_id} is not in database `dictionaries`")
    kwargs = {"dict_data": zstandard.ZstdCompressionDict(DICTIONARIES[dictionary_id])} if dictionary_id else {}
    decompressor = zstandard.ZstdDecompressor(**kwargs)
    out = bytearray()
    for index, length in enumerate(lengths):
        if length <= 0 or i + length > len(stored):
            raise ValueError(f"block {index} of {length} bytes does not fit")
        size = min(1 << k, plen - (index << k))
        block = decompressor.decompress(stored[i:i + length], max_output_size=size)
        if len(block) != size:
            raise ValueError(f"block {index} holds {len(block)} bytes, not {size}")
        out += block
        i += length
    return bytes(out)

def records(path):
    """The format, each (position, record), then ("head", meta's head and checkpoints)."""
    env = lmdb.open(path, readonly=True, lock=False, max_dbs=128, subdir=True)
    log = env.open_db(b"log", create=False)
    meta = env.open_db(b"meta", create=False)
    try:
        dictionaries = env.open_db(b"dictionaries", create=False)
    except lmdb.Error:
        dictionaries = None  # a store of format 1
    with env.begin() as txn:
        if dictionaries is not None:
            for key, value in txn.cursor(db=dictionaries):
                DICTIONARIES[struct.unpack(">I", key)[0]] = bytes(value)
        yield "format", txn.get(b"format", db=meta)
        for key, value in txn.cursor(db=log):
            yield struct.unpack(">Q", key)[0], bytes(value)
        checkpoints = {bytes(k)[11:].decode(): bytes(v) for k, v in txn.cursor(db=meta) if bytes(k).startswith(b"checkpoint:")}
        pending = {int(bytes(k)[len(PENDING):]): bytes(v) for k, v in txn.cursor(db=meta)
                   if bytes(k).startswith(PENDING) and bytes(k)[len(PENDING):].isdigit()}
        yield "head", (txn.get(b"head", db=meta), checkpoints, pending)

PENDING = b"pendingRedaction:"

def pending_ranges(record, position):
    """The ranges of a pending authorization (an eventlog.redaction record held
    past the head, Docs/LogFormat.md "Pending authorizations"), or None when
    its bytes are not a whole, unredacted redaction record naming earlier positions."""
    if len(record) < 88 or record[0] not in (1, 2):
        return None
    flags, tlen, version, micros, plen = record[1], *struct.unpack(">HIqI", record[2:20])
    if len(record) != 84 + tlen + plen + 4 or struct.unpack(">I", record[-4:])[0] != crc32c(record[:-4]):
        return None
    payload = record[84 + tlen:84 + tlen + plen]
    if flags != 0 or record[84:84 + tlen] != REDACTION or version != 1 or hashlib.sha256(payload).digest() != record[20:52]:
        return None
    ranges = redaction_ranges(payload, position)
    return ranges if isinstance(ranges, list) and ranges else None

def iso8601(micros: int) -> str:
    """The time as `eventlog log --json` prints it: UTC, up to six fraction digits, none when whole."""
    seconds, fraction = divmod(micros, 1_000_000)
    text = (datetime.datetime(1970, 1, 1) + datetime.timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%S")
    return text + (f".{fraction:06d}".rstrip("0") if fraction else "") + "Z"

REPORT = sys.stdout  # stderr with --json, whose records go to stdout

def main():
    global REPORT
    parser = argparse.ArgumentParser(description="Decode and verify an event log without this project's code.")
    parser.add_argument("store")
    parser.add_argument("--dump", type=int, default=0, metavar="N", help="print the first N records")
    parser.add_argument("--json", action="store_true", help="print every record as `eventlog log --json` does")
    parser.add_argument("--schema", metavar="DIR", help="the .proto files (default: Sources/ActivityDomain/Schema of this checkout)")
    parser.add_argument("--no-schema", action="store_true", help="do not decode payloads (a log of another application)")
    args = parser.parse_args()
    path, dump = args.store, args.dump
    default_schema = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Sources", "ActivityDomain", "Schema")
    schema_dir = args.schema or default_schema
    schema = None if args.no_schema else Schema.load(schema_dir) if args.schema or os.path.isdir(schema_dir) else None
    if args.json:
        REPORT = sys.stderr
    decoded, undecoded = 0, 0
    link, expected, count = bytes(32), 1, 0
    raw_bytes, stored_bytes, compressed = 0, 0, 0
    redacted, covered = [], []  # redacted positions; (start, end, by) of each redaction record's ranges
    notes = []  # pending authorizations, printed after "ok"
    for position, value in records(path):
        if position == "format":
            if value is not None and (len(value) != 4 or struct.unpack(">I", value)[0] not in (1, 2)):
                print(f"incompatibleFormat: meta format is {bytes(value).hex()}, this reader reads formats 1 and 2", file=REPORT)
                return 1
            continue
        if position == "head":
            head, checkpoints, pending = value
            end = expected - 1
            for at, record in sorted(pending.items()):
                ranges = pending_ranges(record, at) if at > end else None
                if ranges:
                    covered.extend((start, stop, at) for start, stop in ranges)
                    starts = [start for start, _ in ranges]
                    uses = sum(1 for r in redacted if (i := bisect.bisect_right(starts, r) - 1) >= 0 and ranges[i][1] >= r)
                    if uses:
                        notes.append(f"pending: {uses} redacted records are authorized by the redaction record at position {at}, past the head")
            unauthorized = first_unauthorized(redacted, covered)
            if unauthorized is not None:
                return fail(unauthorized, "unauthorizedRedaction", "flagged redacted, but no later eventlog.redaction record covers it (nor a pending one)")
            if head is None and end > 0:
                return fail(1, "truncated", "the store's recorded head is missing")
            if head is not None and len(head) != 40:
                print(f"corrupt: meta head is {len(head)} bytes, not 40", file=REPORT)
                return 1
            if head is not None and (struct.unpack(">Q", head[:8])[0] != end or head[8:] != link):
                return fail(min(struct.unpack(">Q", head[:8])[0], end) + 1, "truncated", "the recorded head does not match the log's end")
            for name, checkpoint in sorted(checkpoints.items()):
                if len(checkpoint) != 12:
                    print(f"corrupt: meta checkpoint:{name} is {len(checkpoint)} bytes, not 12", file=REPORT)
                    return 1
                if struct.unpack(">Q", checkpoint[:8])[0] > end:
                    return fail(end + 1, "checkpointAhead", f"projection {name} claims a position past the head {end}")
            break
        if position != expected:
            return fail(expected, "gap", f"next record is at {position}")
        if len(value) < 88 or value[0] not in (1, 2):
            return fail(position, "malformedRecord", "short record or unknown format")
        fmt, flags, tlen, version, micros, plen = value[0], value[1], *struct.unpack(">HIqI", value[2:20])
        stored_length = len(value) - 88 - tlen
        is_compressed = fmt == 2 and flags & 2 and not flags & 1
        if stored_length < 0 or (stored_length != plen if not is_compressed else (stored_length == 0 or plen == 0)):
            return fail(position, "malformedRecord", "lengths do not fit")
        digest, stored_link = value[20:52], value[52:84]
        rtype, payload = value[84:84 + tlen], value[84 + tlen:84 + tlen + stored_length]
        if struct.unpack(">I", value[-4:])[0] != crc32c(value[:-4]):
            return fail(position, "checksumMismatch", "CRC-32C differs")
        if not 1 <= tlen <= 255:
            return fail(position, "invalidTypeLength", f"the type is {tlen} bytes; allowed: 1 to 255")
        if flags & ~(3 if fmt == 2 else 1):
            return fail(position, "reservedFlagSet", f"flags byte {flags:#04x} in a record of format {fmt}")
        if flags & 1 and flags & 2:
            return fail(position, "reservedFlagSet", f"flags byte {flags:#04x}: a redacted record is not compressed")
        if flags & 1 and plen:
            return fail(position, "redactedWithPayload", f"flagged redacted but keeps {plen} payload bytes")
        if is_compressed:
            try:
                payload = decompress(payload, plen)
            except Exception as error:  # zstandard.ZstdError, ValueError
                return fail(position, "malformedRecord", f"the compressed payload does not decompress: {error}")
            compressed += 1
        raw_bytes += 88 + tlen + plen
        stored_bytes += len(value)
        if not flags & 1 and hashlib.sha256(payload).digest() != digest:
            return fail(position, "payloadDigestMismatch", "SHA-256 of payload differs")
        computed = hashlib.sha256(link + struct.pack(">QIq", position, version, micros) + digest + rtype).digest()
        if computed != stored_link:
            return fail(position, "chainBreak", "link does not follow from the previous record")
        if flags & 1:
            redacted.append(position)
        elif rtype == REDACTION:
            if version != 1:
                return fail(position, "malformedRedaction", f"eventlog.redaction of schema version {version}; this reader reads 1")
            ranges = redaction_ranges(payload, position)
            if isinstance(ranges, str):
                return fail(position, "malformedRedaction", ranges)
            covered.extend((start, end, position) for start, end in ranges)
        event = None
        if not flags & 1 and schema is not None:
            try:
                event = schema.event_json(rtype.decode("utf-8", "replace"), version, payload)
            except DecodeError as error:
                return fail(position, "undecodablePayload", f"{rtype.decode('utf-8', 'replace')} v{version}: {error}")
            if event is None:
                undecoded += 1
            else:
                decoded += 1
        if args.json:
            line = {"position": position, "type": rtype.decode("utf-8", "replace"), "version": version, "at": iso8601(micros)}
            if flags & 1:
                line["redacted"] = True
            elif event is not None:
                line["event"] = event
            print(json.dumps(line, ensure_ascii=False, separators=(",", ":")))
        if count < dump:
            print(f"{position} {rtype.decode()} v{version} at {micros}us payload {plen} bytes"
                  + (f" (stored in {stored_length})" if is_compressed else "") + f": {payload[:80]!r}")
        link, expected, count = computed, expected + 1, count + 1
    print(f"ok: {count} records, last link {link.hex()}", file=REPORT)
    print(f"bytes: {raw_bytes} raw, {stored_bytes} stored, {compressed} records compressed, {len(DICTIONARIES)} dictionaries", file=REPORT)
    if schema is None:
        print("payloads: not decoded" + ("" if args.no_schema else f" (no schema at {schema_dir})"), file=REPORT)
    else:
        print(f"payloads: {decoded} decoded with the schema, {undecoded} of types it does not name, {len(redacted)} redacted", file=REPORT)
    for note in notes:
        print(note, file=REPORT)
    return 0

def fail(position, kind, detail):
    print(f"position {position}: {kind}: {detail}", file=REPORT)
    return 1

if __name__ == "__main__":
    sys.exit(main())
