#!/bin/bash
# Counts the instructions of one run of a Swift executable with callgrind
# (they repeat run to run, where wall clock on a shared machine does not).
#
#   Scripts/callgrind.sh OUT.callgrind .build/release/eventlog replay --full --store DIR --json
#   callgrind_annotate --inclusive=yes OUT.callgrind | head -60
#
# More valgrind options in CALLGRIND_OPTIONS, e.g. one count per search:
#   CALLGRIND_OPTIONS='--toggle-collect=*TextIndexAAV6search_3now5limit4cost2in* --dump-before=<mangled name>'
#
# Two workarounds, both needed with valgrind 3.19 and Swift 6.3 on Linux:
# - the binary is copied without its debug information (valgrind's reader
#   gives up on it: "Possibly corrupted debuginfo file");
# - a preloaded shim copies the mask that libdispatch passes to sigsuspend:
#   the mask is read-only and valgrind writes it in place, which crashes
#   valgrind ("VALGRIND INTERNAL ERROR ... SIGSEGV") as soon as an async
#   main (every eventlog command) suspends.
set -euo pipefail
out=$1; binary=$2; shift 2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat > "$work/sigsuspend.c" <<'C'
#define _GNU_SOURCE
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>
/* rt_sigsuspend with a writable copy of the mask (8 bytes: the kernel's sigset). */
int sigsuspend(const sigset_t *mask) { sigset_t copy = *mask; return (int)syscall(SYS_rt_sigsuspend, &copy, 8); }
C
cc -O2 -shared -fPIC -o "$work/sigsuspend.so" "$work/sigsuspend.c"
strip --strip-debug -o "$work/$(basename "$binary")" "$binary"
LD_PRELOAD="$work/sigsuspend.so" valgrind --tool=callgrind ${CALLGRIND_OPTIONS:-} --callgrind-out-file="$out" "$work/$(basename "$binary")" "$@"
