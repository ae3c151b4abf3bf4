#!/usr/bin/env bash
# Regenerates Sources/ActivityDomain/Generated/*.pb.swift from
# Sources/ActivityDomain/Schema/*.proto. The generated code is committed, so
# only someone who changes a schema needs to run this.
#
#   Scripts/generate-protos.sh [PATH_TO_protoc-gen-swift]
#
# Without a plugin path it builds protoc-gen-swift (about ten minutes) from
# the swift-protobuf checkout that SwiftPM resolved for this package, so the
# generator matches the runtime library's version exactly.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
schema="$root/Sources/ActivityDomain/Schema"
out="$root/Sources/ActivityDomain/Generated"

if ! command -v protoc >/dev/null 2>&1; then
    echo "protoc is missing; installing protobuf-compiler" >&2
    if [ "$(id -u)" -eq 0 ]; then apt-get install -y protobuf-compiler; else sudo apt-get install -y protobuf-compiler; fi
fi

plugin="${1:-${PROTOC_GEN_SWIFT:-}}"
if [ -z "$plugin" ]; then
    checkout="$root/.build/checkouts/swift-protobuf"
    if [ ! -d "$checkout" ]; then
        (cd "$root" && swift package resolve)
    fi
    echo "building protoc-gen-swift from $checkout" >&2
    (cd "$checkout" && swift build -c release --product protoc-gen-swift)
    plugin="$checkout/.build/release/protoc-gen-swift"
fi
[ -x "$plugin" ] || { echo "no executable protoc-gen-swift at $plugin" >&2; exit 1; }

mkdir -p "$out"
rm -f "$out"/*.pb.swift
# Internal visibility: the library's public API is its Swift types, not these.
protoc --plugin="protoc-gen-swift=$plugin" \
    --proto_path="$schema" \
    --swift_out="$out" \
    --swift_opt=Visibility=Internal \
    "$schema"/*.proto
echo "generated: $(cd "$out" && ls *.pb.swift | tr '\n' ' ')"
