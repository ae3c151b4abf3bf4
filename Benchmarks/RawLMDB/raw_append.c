/* The floor under the engine: append COUNT values of SIZE bytes to one LMDB
 * database with MDB_APPEND, BATCH per transaction, as ENGINEERING.md measured.
 * Usage: raw_append DIR BATCH COUNT SIZE durable|noMetaSync|noSync
 * Prints one JSON line with events per second. */
#include <lmdb.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHECK(call) do { int rc = (call); if (rc) { fprintf(stderr, "%s: %s\n", #call, mdb_strerror(rc)); exit(1); } } while (0)

int main(int argc, char **argv) {
    if (argc != 6) { fprintf(stderr, "usage: raw_append DIR BATCH COUNT SIZE durability\n"); return 2; }
    const char *dir = argv[1];
    long batch = atol(argv[2]), count = atol(argv[3]), size = atol(argv[4]);
    unsigned flags = 0;
    if (!strcmp(argv[5], "noSync")) flags = MDB_NOSYNC;
    else if (!strcmp(argv[5], "noMetaSync")) flags = MDB_NOMETASYNC;
    MDB_env *env; MDB_dbi dbi; MDB_txn *txn;
    CHECK(mdb_env_create(&env));
    CHECK(mdb_env_set_mapsize(env, (size_t)8 << 30));
    CHECK(mdb_env_set_maxdbs(env, 4));
    CHECK(mdb_env_open(env, dir, flags, 0644));
    CHECK(mdb_txn_begin(env, NULL, 0, &txn));
    CHECK(mdb_dbi_open(txn, "log", MDB_CREATE, &dbi));
    CHECK(mdb_txn_commit(txn));
    char *value = malloc(size);
    for (long i = 0; i < size; i++) value[i] = (char)i;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    uint64_t seq = 0;
    for (long done = 0; done < count;) {
        CHECK(mdb_txn_begin(env, NULL, 0, &txn));
        for (long j = 0; j < batch && done < count; j++, done++) {
            seq++;
            uint64_t be = __builtin_bswap64(seq);
            MDB_val k = { sizeof be, &be }, v = { (size_t)size, value };
            CHECK(mdb_put(txn, dbi, &k, &v, MDB_APPEND));
        }
        CHECK(mdb_txn_commit(txn));
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double seconds = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
    printf("{\"batchSize\":%ld,\"count\":%ld,\"durability\":\"%s\",\"seconds\":%f,\"eventsPerSecond\":%f}\n",
           batch, count, argv[5], seconds, count / seconds);
    mdb_env_close(env);
    return 0;
}
