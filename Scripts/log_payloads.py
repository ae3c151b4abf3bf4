"""Decode the payloads of an activity store's log with its schema, without generated code.

Reads the message and enum definitions from the .proto files of
Sources/ActivityDomain/Schema (the proto3 those files use: messages, enums,
oneofs, `optional` and `repeated` fields, imports; maps are refused: the
schema has none), then decodes Protocol Buffers' binary wire format with
those field numbers and types into proto3's canonical JSON mapping (field
names in lowerCamelCase, 64-bit integers as strings, enums by name, bytes in
base64), which is what `eventlog log --json` prints as an event's "event".
Only the standard library: no protoc, no protobuf package.

    schema = Schema.load("Sources/ActivityDomain/Schema")
    event = schema.event_json("activity.created", 2, payload)   # a dict, or None for a type it does not know

Decoding follows the wire format as the Swift runtime (swift-protobuf) reads
it: the last value of a singular field wins, a singular message seen twice is
merged, repeated scalars are read packed or not, a field of the schema that
arrives with another wire type is skipped as an unknown field would be; a
varint, length or tag cut short, a string that is not UTF-8, or a wire type
6 or 7 is an error (DecodeError).
"""
import base64, math, os, re, struct

# The event types of an activity store (Docs/Semantics.md, "Events" of the
# activity domain and of Core Spotlight): type -> (message, newest schema
# version). A type not listed here (the engine's `eventlog.redaction`, another
# application's) is not decoded, as `eventlog log --json` does not decode it.
EVENT_TYPES = {
    "activityTypes.declared": ("ActivityTypesDeclared", 1),
    "activity.created": ("ActivityCreated", 2),
    "activity.updated": ("ActivityUpdated", 2),
    "activity.userInfoEntriesAdded": ("ActivityUserInfoEntriesAdded", 2),
    "activity.becameCurrent": ("ActivityBecameCurrent", 2),
    "activity.resignedCurrent": ("ActivityResignedCurrent", 2),
    "activity.invalidated": ("ActivityInvalidated", 2),
    "activity.saved": ("ActivitySaved", 2),
    "savedActivities.deleted": ("SavedActivitiesDeleted", 2),
    "savedActivities.allDeleted": ("SavedActivitiesAllDeleted", 2),
    "searchableItems.indexed": ("SearchableItemsIndexed", 2),
    "searchableItems.deleted": ("SearchableItemsDeleted", 2),
    "searchableItems.domainsDeleted": ("SearchableItemsInDomainsDeleted", 2),
    "searchableItems.allDeleted": ("SearchableItemsAllDeleted", 2),
    "searchableItems.expiredPurged": ("SearchableItemsExpiredPurged", 2),
    "searchableIndex.batchCommitted": ("IndexBatchCommitted", 2),
}

# Version 1 had no user spaces: the `user` an activity carried was an
# attribute, and is dropped when a version-1 event is read (Docs/Semantics.md,
# "Events"): message -> the fields (a path of field names) cleared.
VERSION_1_DROPPED = {
    "ActivityCreated": [("activity", "user")],
    "ActivityUpdated": [("activity", "user")],
    "ActivitySaved": [("copy", "user")],
    "ActivityBecameCurrent": [("v1_owner",)],
}


class DecodeError(Exception):
    pass


class SchemaError(Exception):
    pass


VARINT, FIXED64, LENGTH, START_GROUP, END_GROUP, FIXED32 = 0, 1, 2, 3, 4, 5
SCALARS = {  # type -> wire type
    "double": FIXED64, "float": FIXED32, "int32": VARINT, "int64": VARINT, "uint32": VARINT, "uint64": VARINT,
    "sint32": VARINT, "sint64": VARINT, "fixed32": FIXED32, "fixed64": FIXED64, "sfixed32": FIXED32,
    "sfixed64": FIXED64, "bool": VARINT, "string": LENGTH, "bytes": LENGTH,
}
SIXTY_FOUR_BIT = {"int64", "uint64", "sint64", "fixed64", "sfixed64"}  # JSON strings


class Field:
    def __init__(self, name, number, type_name, label, oneof, json_name):
        self.name, self.number, self.type_name, self.label, self.oneof = name, number, type_name, label, oneof
        self.json_name = json_name or lower_camel(name)
        self.kind = None  # "scalar", "enum" or "message", once resolved
        self.target = None  # the full name of the enum or message


def lower_camel(name):
    """protoc's JSON name: each underscore dropped and the letter after it upper-cased."""
    out, upper = [], False
    for c in name:
        if c == "_":
            upper = True
        else:
            out.append(c.upper() if upper else c)
            upper = False
    return "".join(out)


TOKEN = re.compile(r'\s+|//[^\n]*|/\*.*?\*/|"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|[A-Za-z_][\w.]*|-?\d[\w.]*|[{}\[\]()<>=;,.]', re.S)


def tokenize(text, path):
    tokens, i = [], 0
    while i < len(text):
        m = TOKEN.match(text, i)
        if not m:
            raise SchemaError(f"{path}: cannot read {text[i:i + 20]!r}")
        t = m.group(0)
        if not (t.isspace() or t.startswith("//") or t.startswith("/*")):
            tokens.append(t)
        i = m.end()
    return tokens


class Schema:
    """Messages and enums of a directory of .proto files, by full name (`activitylog.v1.Activity`)."""

    def __init__(self):
        self.messages = {}  # full name -> {"fields": {number: Field}, "oneofs": {name: [numbers]}}
        self.enums = {}  # full name -> {number: name}

    @classmethod
    def load(cls, directory):
        schema = cls()
        files = sorted(f for f in os.listdir(directory) if f.endswith(".proto"))
        if not files:
            raise SchemaError(f"no .proto files in {directory}")
        for name in files:
            path = os.path.join(directory, name)
            with open(path, encoding="utf-8") as f:
                schema.parse(tokenize(f.read(), path), path)
        schema.resolve()
        for message, _ in EVENT_TYPES.values():
            schema.message(message)  # every event's message is in the schema
        return schema

    def parse(self, tokens, path):
        package, i = "", 0

        def expect(t):
            nonlocal i
            if i >= len(tokens) or tokens[i] != t:
                raise SchemaError(f"{path}: expected {t!r} at token {i} ({tokens[i] if i < len(tokens) else 'end'!r})")
            i += 1

        def skip_statement():
            nonlocal i
            while tokens[i] != ";":
                i += 1
            i += 1

        def options():
            """`[name = value, …]` after a field: returns the json_name option, if any."""
            nonlocal i
            json_name = None
            if tokens[i] == "[":
                while tokens[i] != "]":
                    if tokens[i] == "json_name":
                        json_name = tokens[i + 2].strip('"')
                    i += 1
                i += 1
            return json_name

        def enum(scope):
            nonlocal i
            name = tokens[i]; i += 1
            expect("{")
            values = {}
            while tokens[i] != "}":
                if tokens[i] in ("option", "reserved"):
                    skip_statement()
                    continue
                value_name = tokens[i]; i += 1
                expect("=")
                number = int(tokens[i], 0); i += 1
                options()
                expect(";")
                values.setdefault(number, value_name)  # an alias prints by its first name
            i += 1
            self.enums[scope + name] = values

        def message(scope):
            nonlocal i
            name = tokens[i]; i += 1
            full = scope + name
            expect("{")
            fields, oneofs = {}, {}
            body = {"fields": fields, "oneofs": oneofs, "scope": full + "."}

            def field(label, oneof):
                nonlocal i
                type_name = tokens[i]; i += 1
                if type_name == "map":
                    raise SchemaError(f"{path}: {full}: map fields are not read (the schema has none: their order is not fixed)")
                field_name = tokens[i]; i += 1
                expect("=")
                number = int(tokens[i], 0); i += 1
                json_name = options()
                expect(";")
                if number in fields:
                    raise SchemaError(f"{path}: {full}: field number {number} twice")
                fields[number] = Field(field_name, number, type_name, label, oneof, json_name)
                if oneof:
                    oneofs.setdefault(oneof, []).append(number)

            while tokens[i] != "}":
                t = tokens[i]
                if t == "message":
                    i += 1; message(full + ".")
                elif t == "enum":
                    i += 1; enum(full + ".")
                elif t in ("option", "reserved", "extensions"):
                    skip_statement()
                elif t == "oneof":
                    oneof = tokens[i + 1]; i += 2
                    expect("{")
                    while tokens[i] != "}":
                        if tokens[i] == "option":
                            skip_statement()
                        else:
                            field(None, oneof)
                    i += 1
                elif t in ("repeated", "optional"):
                    i += 1; field(t, None)
                else:
                    field(None, None)
            i += 1
            self.messages[full] = body

        while i < len(tokens):
            t = tokens[i]
            if t == "syntax":
                if tokens[i + 2].strip('"') != "proto3":
                    raise SchemaError(f"{path}: syntax {tokens[i + 2]}; this reader reads proto3")
                skip_statement()
            elif t == "package":
                package = tokens[i + 1] + "."; skip_statement()
            elif t in ("import", "option"):
                skip_statement()  # every .proto of the directory is read
            elif t == "message":
                i += 1; message(package)
            elif t == "enum":
                i += 1; enum(package)
            else:
                raise SchemaError(f"{path}: unexpected {t!r}")

    def resolve(self):
        """Each field's type: a scalar, or the enum or message its name means from the field's scope."""
        for full, body in self.messages.items():
            for f in body["fields"].values():
                if f.type_name in SCALARS:
                    f.kind = "scalar"
                    continue
                scope = body["scope"].split(".")[:-1]
                name = f.type_name.lstrip(".")
                while True:
                    candidate = ".".join(scope + [name])
                    if candidate in self.messages or candidate in self.enums:
                        f.kind, f.target = ("message" if candidate in self.messages else "enum"), candidate
                        break
                    if not scope:
                        raise SchemaError(f"{full}.{f.name}: unknown type {f.type_name}")
                    scope.pop()

    def message(self, name):
        for full in self.messages:
            if full == name or full.endswith("." + name):
                return full
        raise SchemaError(f"no message {name} in the schema")

    def event_json(self, event_type, version, payload):
        """The payload of an event of `event_type` at schema `version` as proto3 JSON
        (a dict), as `eventlog log --json` prints it; None for a type not in EVENT_TYPES.
        Raises DecodeError for a version it does not read or bytes that do not decode."""
        if event_type not in EVENT_TYPES:
            return None
        message, newest = EVENT_TYPES[event_type]
        if not 1 <= version <= newest:
            raise DecodeError(f"{event_type} has schema version {version}; this reader reads versions 1 to {newest}")
        full = self.message(message)
        decoded = self.decode(full, payload)
        if version == 1:
            for path in VERSION_1_DROPPED.get(message, []):
                self.clear(full, decoded, path)
        return self.to_json(full, decoded)

    # Decoding: a message is {field number: value} (a list for a repeated field).

    def decode(self, full, data):
        body = self.messages[full]
        fields, values = body["fields"], {}
        for number, wire, raw in wire_fields(data):
            f = fields.get(number)
            if f is None:
                continue  # an unknown field
            packed = f.label == "repeated" and f.kind != "message" and f.type_name not in ("string", "bytes") and wire == LENGTH
            expected = LENGTH if f.kind == "message" else (VARINT if f.kind == "enum" else SCALARS[f.type_name])
            if wire != expected and not packed:
                continue  # swift-protobuf keeps it as an unknown field
            if packed:
                items = [self.scalar(f, v) for v in packed_values(raw, SCALARS.get(f.type_name, VARINT))]
                values.setdefault(number, []).extend(items)
                continue
            value = self.decode(f.target, raw) if f.kind == "message" else self.scalar(f, raw)
            if f.label == "repeated":
                values.setdefault(number, []).append(value)
                continue
            if f.oneof:
                for other in body["oneofs"][f.oneof]:
                    if other != number:
                        values.pop(other, None)
            if f.kind == "message" and number in values:
                value = self.merge(f.target, values[number], value)
            values[number] = value
        return values

    def merge(self, full, old, new):
        fields = self.messages[full]["fields"]
        merged = dict(old)
        for number, value in new.items():
            f = fields[number]
            if f.label == "repeated":
                merged[number] = merged.get(number, []) + value
            else:
                if f.oneof:
                    for other in self.messages[full]["oneofs"][f.oneof]:
                        if other != number:
                            merged.pop(other, None)
                merged[number] = self.merge(f.target, merged[number], value) if f.kind == "message" and number in merged else value
        return merged

    def scalar(self, f, raw):
        t = "int32" if f.kind == "enum" else f.type_name
        if t == "string":
            try:
                return raw.decode("utf-8")
            except UnicodeDecodeError as error:
                raise DecodeError(f"field {f.name} is not UTF-8: {error}")
        if t == "bytes":
            return raw
        if t in ("double", "float", "fixed32", "fixed64", "sfixed32", "sfixed64"):
            fmt = {"double": "<d", "float": "<f", "fixed32": "<I", "fixed64": "<Q", "sfixed32": "<i", "sfixed64": "<q"}[t]
            return struct.unpack(fmt, raw)[0]
        v = raw  # a varint, 64 bits
        if t == "bool":
            return v != 0
        if t == "int64":
            return v - (1 << 64) if v >= 1 << 63 else v
        if t == "uint64":
            return v
        if t == "int32":
            v &= 0xFFFFFFFF
            return v - (1 << 32) if v >= 1 << 31 else v
        if t == "uint32":
            return v & 0xFFFFFFFF
        if t == "sint32":
            v &= 0xFFFFFFFF
            return (v >> 1) ^ -(v & 1)
        if t == "sint64":
            return (v >> 1) ^ -(v & 1)
        raise SchemaError(f"type {t}")

    def clear(self, full, values, path):
        f = next(f for f in self.messages[full]["fields"].values() if f.name == path[0])
        if len(path) == 1:
            values.pop(f.number, None)
        elif f.number in values:
            self.clear(f.target, values[f.number], path[1:])

    # proto3's JSON mapping, as swift-protobuf writes it.

    def to_json(self, full, values):
        out = {}
        for number in sorted(self.messages[full]["fields"]):
            f = self.messages[full]["fields"][number]
            if number not in values:
                continue
            v = values[number]
            if f.label == "repeated":
                if v:
                    out[f.json_name] = [self.json_value(f, x) for x in v]
            elif f.kind == "message" or f.label == "optional" or f.oneof:
                out[f.json_name] = self.json_value(f, v)  # present: printed, even when it is the default
            elif v not in (0, False, "", b"") or (isinstance(v, float) and math.isnan(v)):
                out[f.json_name] = self.json_value(f, v)  # proto3: the default value is not printed
        return out

    def json_value(self, f, v):
        if f.kind == "message":
            return self.to_json(f.target, v)
        if f.kind == "enum":
            return self.enums[f.target].get(v, v)
        t = f.type_name
        if t in SIXTY_FOUR_BIT:
            return str(v)
        if t == "bytes":
            return base64.b64encode(v).decode("ascii")
        if t in ("double", "float"):
            if math.isnan(v):
                return "NaN"
            if math.isinf(v):
                return "Infinity" if v > 0 else "-Infinity"
            if t == "float":  # the shortest decimal that reads back as the same float
                for digits in range(1, 10):
                    if struct.unpack("<f", struct.pack("<f", float(f"{v:.{digits}g}")))[0] == v:
                        return float(f"{v:.{digits}g}")
        return v


def read_varint(data, i):
    value, shift = 0, 0
    while True:
        if i >= len(data):
            raise DecodeError(f"a varint is cut short at byte {i}")
        if shift >= 70:
            raise DecodeError(f"a varint longer than 10 bytes at byte {i}")
        b = data[i]; i += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return value & 0xFFFFFFFFFFFFFFFF, i
        shift += 7


def wire_fields(data, i=0, group=None):
    """Each (field number, wire type, value) of a message's bytes: an int for a
    varint, bytes for the rest. Groups (wire types 3 and 4, unknown to proto3) are skipped whole."""
    while i < len(data):
        tag, i = read_varint(data, i)
        number, wire = tag >> 3, tag & 7
        if number == 0 or number >= 1 << 29:
            raise DecodeError(f"field number {number} at byte {i}")
        if wire == VARINT:
            value, i = read_varint(data, i)
        elif wire in (FIXED64, FIXED32):
            size = 8 if wire == FIXED64 else 4
            if i + size > len(data):
                raise DecodeError(f"field {number}: {size} bytes cut short")
            value, i = bytes(data[i:i + size]), i + size
        elif wire == LENGTH:
            length, i = read_varint(data, i)
            if i + length > len(data):
                raise DecodeError(f"field {number}: {length} bytes, {len(data) - i} left")
            value, i = bytes(data[i:i + length]), i + length
        elif wire == START_GROUP:
            i = skip_group(data, i, number)
            continue
        elif wire == END_GROUP:
            raise DecodeError(f"an end of group {number} without its start")
        else:
            raise DecodeError(f"wire type {wire} of field {number}")
        yield number, wire, value


def skip_group(data, i, number):
    while True:
        if i >= len(data):
            raise DecodeError(f"group {number} is not closed")
        tag, i = read_varint(data, i)
        wire = tag & 7
        if wire == END_GROUP:
            if tag >> 3 != number:
                raise DecodeError(f"group {number} closed as {tag >> 3}")
            return i
        if wire == VARINT:
            _, i = read_varint(data, i)
        elif wire in (FIXED64, FIXED32):
            i += 8 if wire == FIXED64 else 4
        elif wire == LENGTH:
            length, i = read_varint(data, i)
            i += length
        elif wire == START_GROUP:
            i = skip_group(data, i, tag >> 3)
        else:
            raise DecodeError(f"wire type {wire} in group {number}")
        if i > len(data):
            raise DecodeError(f"group {number} is cut short")


def packed_values(raw, wire):
    """The values of a packed repeated scalar field: varints, or 4- or 8-byte values."""
    i, out = 0, []
    while i < len(raw):
        if wire == VARINT:
            v, i = read_varint(raw, i)
        else:
            size = 8 if wire == FIXED64 else 4
            if i + size > len(raw):
                raise DecodeError("a packed field is cut short")
            v, i = raw[i:i + size], i + size
        out.append(v)
    return out
