#ifndef CZSTD_SHIM_H
#define CZSTD_SHIM_H
// The system's zstd (Debian: libzstd-dev), reached through pkg-config `libzstd`:
// the codec of compressed log payloads and its dictionary trainer.
#include <zstd.h>
#include <zdict.h>
#endif
