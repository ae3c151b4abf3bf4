#ifndef CLMDB_SHIM_H
#define CLMDB_SHIM_H
// The system's LMDB (Debian: liblmdb-dev), reached through pkg-config `lmdb`.
#include <lmdb.h>
#endif
