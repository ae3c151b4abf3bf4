/* Stand-in for a single-item durable commit under several layouts of the
 * command views, committed in rotation (one commit to each environment in
 * turn), so that the disk's changing load falls on every layout alike.
 * Usage: layout_pages DIR ROUNDS PREFILL LAYOUT...   (the first layout is the reference)
 * LAYOUT: raw (the log alone) | meta (+ head, one checkpoint) | mainmeta (head and
 * checkpoint as keys of the main database) | one1, one2main, one3, one3main (+ one
 * view database with 1, 2 or 3 keys an item: record, expiration, domain) |
 * sep3meta7 (+ three view databases and 7 meta keys: the item store today).
 * Prints commits/s, the ratio to the first layout, and pages written a commit
 * (wchar / 4096). Build: cc -O2 -o layout_pages layout_pages.c -llmdb */
#include <lmdb.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHECK(call) do { int rc = (call); if (rc) { fprintf(stderr, "%s: %s\n", #call, mdb_strerror(rc)); exit(1); } } while (0)
static long wchar(void) {
    FILE *f = fopen("/proc/self/io", "r"); char line[256]; long v = 0;
    while (fgets(line, sizeof line, f)) if (!strncmp(line, "wchar:", 6)) v = atol(line + 6);
    fclose(f); return v;
}
typedef struct { const char *layout; MDB_env *env; MDB_dbi log, meta, views, items, domains, exps, main; uint64_t pos, exp, rnd; double secs; long bytes; } L;
static char value[300], rec[60];
static void put(MDB_txn *t, MDB_dbi d, void *k, size_t kl, void *v, size_t vl, unsigned fl) { MDB_val K = {kl, k}, V = {vl, v}; CHECK(mdb_put(t, d, &K, &V, fl)); }
static uint64_t next(L *l) { l->rnd ^= l->rnd << 13; l->rnd ^= l->rnd >> 7; l->rnd ^= l->rnd << 17; return l->rnd; }
static int has(L *l, const char *s) { return strstr(l->layout, s) != NULL; }
static void item(L *l, MDB_txn *t) {
    if (!strcmp(l->layout, "raw") || !strcmp(l->layout, "meta") || !strcmp(l->layout, "mainmeta")) return;
    uint64_t id = next(l);
    unsigned char k1[25] = {0}, k2[38] = {0}, k3[33] = {0};
    k1[4] = 'i'; snprintf((char *)k1 + 5, 20, "item-%014llu", (unsigned long long)(id % 100000000000000ULL));
    k2[4] = 'd'; snprintf((char *)k2 + 5, 12, "domain.%03d", (int)(id % 37)); memcpy(k2 + 18, k1 + 5, 20);
    k3[4] = 'e'; uint64_t e = __builtin_bswap64(++l->exp); memcpy(k3 + 5, &e, 8); memcpy(k3 + 13, k1 + 5, 20);
    if (has(l, "one")) {
        put(t, l->views, k1, sizeof k1, rec, sizeof rec, 0);
        if (has(l, "3")) { put(t, l->views, k2, sizeof k2, "", 0, 0); put(t, l->views, k3, sizeof k3, "", 0, 0); }
        if (has(l, "2")) { put(t, l->views, k3, sizeof k3, "", 0, 0); }
    } else {
        put(t, l->items, k1, sizeof k1, rec, sizeof rec, 0);
        put(t, l->domains, k2, sizeof k2, "", 0, 0); put(t, l->exps, k3, sizeof k3, "", 0, 0);
    }
}
static void head(L *l, MDB_txn *t) {
    unsigned char h[40] = {0}, cp[12] = {0}; uint64_t be = __builtin_bswap64(l->pos); memcpy(h, &be, 8); memcpy(cp, &be, 8);
    if (!strcmp(l->layout, "raw")) return;
    if (has(l, "main")) { put(t, l->main, "\x01head", 5, h, 40, 0); put(t, l->main, "\x01views", 6, cp, 12, 0); return; }
    put(t, l->meta, "head", 4, h, 40, 0);
    int n = has(l, "meta7") ? 7 : 1;
    for (int i = 0; i < n; i++) { char k[32]; snprintf(k, sizeof k, "checkpoint:%d", i); put(t, l->meta, k, strlen(k), cp, 12, 0); }
}
static void commit(L *l) {
    MDB_txn *t; CHECK(mdb_txn_begin(l->env, NULL, 0, &t));
    l->pos++; uint64_t be = __builtin_bswap64(l->pos); put(t, l->log, &be, 8, value, sizeof value, MDB_APPEND);
    item(l, t); head(l, t); CHECK(mdb_txn_commit(t));
}
int main(int argc, char **argv) {
    if (argc < 5) { fprintf(stderr, "usage: interleave DIR ROUNDS PREFILL LAYOUT...\n"); return 2; }
    long rounds = atol(argv[2]), prefill = atol(argv[3]); int n = argc - 4;
    L *ls = calloc(n, sizeof(L)); memset(value, 7, sizeof value); memset(rec, 3, sizeof rec);
    for (int i = 0; i < n; i++) {
        L *l = &ls[i]; l->layout = argv[4 + i]; l->rnd = 88172645463325252ULL;
        char dir[512]; snprintf(dir, sizeof dir, "%s/%d-%s", argv[1], i, l->layout);
        char cmd[600]; snprintf(cmd, sizeof cmd, "rm -rf %s && mkdir -p %s", dir, dir); if (system(cmd)) return 1;
        CHECK(mdb_env_create(&l->env)); CHECK(mdb_env_set_mapsize(l->env, (size_t)4 << 30)); CHECK(mdb_env_set_maxdbs(l->env, 64));
        CHECK(mdb_env_open(l->env, dir, 0, 0644));
        MDB_txn *t; CHECK(mdb_txn_begin(l->env, NULL, 0, &t));
        CHECK(mdb_dbi_open(t, "log", MDB_CREATE, &l->log)); CHECK(mdb_dbi_open(t, "meta", MDB_CREATE, &l->meta));
        CHECK(mdb_dbi_open(t, "views", MDB_CREATE, &l->views)); CHECK(mdb_dbi_open(t, "items", MDB_CREATE, &l->items));
        CHECK(mdb_dbi_open(t, "domains", MDB_CREATE, &l->domains)); CHECK(mdb_dbi_open(t, "exps", MDB_CREATE, &l->exps));
        CHECK(mdb_dbi_open(t, NULL, 0, &l->main));
        for (int k = 0; k < 20; k++) { char nm[16]; MDB_dbi d; snprintf(nm, sizeof nm, "other%d", k); CHECK(mdb_dbi_open(t, nm, MDB_CREATE, &d)); }
        CHECK(mdb_txn_commit(t));
        for (long done = 0; done < prefill;) {
            CHECK(mdb_txn_begin(l->env, NULL, 0, &t));
            for (int j = 0; j < 1000 && done < prefill; j++, done++) {
                l->pos++; uint64_t be = __builtin_bswap64(l->pos); put(t, l->log, &be, 8, value, sizeof value, MDB_APPEND); item(l, t);
            }
            head(l, t); CHECK(mdb_txn_commit(t));
        }
        for (int k = 0; k < 20; k++) commit(l);
    }
    for (long r = 0; r < rounds; r++) {
        for (int k = 0; k < n; k++) {
            L *l = &ls[(r + k) % n];
            struct timespec t0, t1; long w0 = wchar(); clock_gettime(CLOCK_MONOTONIC, &t0);
            commit(l);
            clock_gettime(CLOCK_MONOTONIC, &t1); l->bytes += wchar() - w0;
            l->secs += (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
        }
    }
    for (int i = 0; i < n; i++) {
        L *l = &ls[i];
        printf("%-10s %8.0f commits/s  %5.2f x %s  %6.2f pages a commit\n", l->layout, rounds / l->secs,
               ls[0].secs / l->secs, ls[0].layout, (double)l->bytes / rounds / 4096.0);
        mdb_env_close(l->env);
    }
    return 0;
}
