// An LD_PRELOAD shim that makes one write or sync on a store's files fail, as
// a failing disk (EIO) or a full one (ENOSPC) would. The fault-injection
// tests build it with the system's C compiler and run `eventlog` under it.
//
// It counts the calls to write, pwrite, pwrite64, writev, pwritev, fsync and
// fdatasync on file descriptors whose path starts with FAULT_PATH (other
// files, such as standard output, are neither counted nor failed), and:
//
//   FAULT_NTH=N       fails the Nth counted call (1-based; 0 or unset: none)
//   FAULT_ERRNO=EIO   or ENOSPC: the error the failed call returns
//   FAULT_PERSIST=1   fails every counted call from the Nth on, not just once
//   FAULT_REPORT=F    at exit, writes "calls C failed K first NAME PATH" to F
//   FAULT_KILL=1      kills with SIGKILL just before the Nth call, counting
//                     calls as a run without FAULT_KILL does.
//   FAULT_KILL=before or after: instead of failing the Nth call, the process
//                     kills itself with SIGKILL just before it or just after
//                     it returned (a crash at that exact point; no report).
//                     With FAULT_KILL set (to these or to "count", which
//                     kills nothing), unlink, unlinkat and remove of a path
//                     under FAULT_PATH count as calls too (never failed), so
//                     that a kill can fall just before or after a file's
//                     removal.
//   FAULT_EXCLUDE=S   leaves out files whose path contains S (such as
//                     "/index/": a store's index environment, which the
//                     indexer writes as its threads' timing has it)
//   FAULT_SOCKETS=1   also counts writes (write, writev, send, sendmsg) on
//                     sockets, such as a connection to PostgreSQL; a failed
//                     one returns ECONNRESET (the connection reset, as a
//                     crashed server or a broken network would), whatever
//                     FAULT_ERRNO says, and its PATH is "socket:[INODE]"
//
// A failed call writes nothing: it returns -1 with errno set before the real
// call is made.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

static const char *prefix;
static size_t prefix_length;
static const char *exclude;
static long nth;
static int fault_errno = EIO;
static int persist;
static int kill_before, kill_after, count_removals;
static int sockets;
static long calls;
static long failed;
static char first_name[32];
static char first_path[PATH_MAX];

__attribute__((constructor)) static void shim_init(void) {
    prefix = getenv("FAULT_PATH");
    prefix_length = prefix ? strlen(prefix) : 0;
    exclude = getenv("FAULT_EXCLUDE");
    if (exclude && !*exclude) exclude = NULL;
    const char *n = getenv("FAULT_NTH");
    nth = n ? atol(n) : 0;
    const char *e = getenv("FAULT_ERRNO");
    fault_errno = e && strcmp(e, "ENOSPC") == 0 ? ENOSPC : EIO;
    const char *p = getenv("FAULT_PERSIST");
    persist = p && strcmp(p, "1") == 0;
    const char *k = getenv("FAULT_KILL");
    kill_before = k && (strcmp(k, "before") == 0 || strcmp(k, "1") == 0);
    kill_after = k && strcmp(k, "after") == 0;
    // "1" (kill before, counting as FAULT_REPORT counts) leaves removals out.
    count_removals = k && (strcmp(k, "before") == 0 || strcmp(k, "after") == 0 || strcmp(k, "count") == 0);
    const char *so = getenv("FAULT_SOCKETS");
    sockets = so && strcmp(so, "1") == 0;
}

__attribute__((destructor)) static void shim_report(void) {
    const char *report = getenv("FAULT_REPORT");
    if (!report) return;
    FILE *f = fopen(report, "w");
    if (!f) return;
    fprintf(f, "calls %ld failed %ld first %s %s\n", calls, failed, failed ? first_name : "-", failed ? first_path : "-");
    fclose(f);
}

// True when `fd` is a socket.
static int is_socket(int fd) {
    struct stat st;
    return fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode);
}

// True when `fd` is a file under FAULT_PATH, or a socket with FAULT_SOCKETS.
static int watched(int fd) {
    if (sockets && is_socket(fd)) return 1;
    if (!prefix_length) return 0;
    char link[64], path[PATH_MAX];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t length = readlink(link, path, sizeof path - 1);
    if (length < 0) return 0;
    path[length] = 0;
    return strncmp(path, prefix, prefix_length) == 0 && !(exclude && strstr(path, exclude));
}

// Counts a call on `fd`; true when it must fail (errno is then set). With
// FAULT_KILL=before, the Nth call kills the process instead.
static int should_fail(const char *name, int fd) {
    if (!watched(fd)) return 0;
    calls += 1;
    if (nth <= 0 || calls < nth || (calls > nth && !persist)) return 0;
    if (kill_before) raise(SIGKILL);
    if (kill_after) return 0;
    if (!failed) {
        snprintf(first_name, sizeof first_name, "%s", name);
        char link[64];
        snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
        ssize_t length = readlink(link, first_path, sizeof first_path - 1);
        first_path[length < 0 ? 0 : length] = 0;
    }
    failed += 1;
    errno = sockets && is_socket(fd) ? ECONNRESET : fault_errno;
    return 1;
}

// With FAULT_KILL=after: kills the process once the Nth call has returned.
static void kill_if_after(long call) {
    if (kill_after && nth > 0 && call == nth) raise(SIGKILL);
}

// The libc function the shim stands in front of, looked up once.
#define REAL(name) static __typeof__(&name) real_##name; if (!real_##name) real_##name = (__typeof__(&name))dlsym(RTLD_NEXT, #name)

ssize_t write(int fd, const void *buffer, size_t count) {
    REAL(write);
    long before = calls;
    if (should_fail("write", fd)) return -1;
    ssize_t result = real_write(fd, buffer, count);
    if (calls > before) kill_if_after(calls);
    return result;
}

ssize_t pwrite(int fd, const void *buffer, size_t count, off_t offset) {
    REAL(pwrite);
    long before = calls;
    if (should_fail("pwrite", fd)) return -1;
    ssize_t result = real_pwrite(fd, buffer, count, offset);
    if (calls > before) kill_if_after(calls);
    return result;
}

ssize_t pwrite64(int fd, const void *buffer, size_t count, off64_t offset) {
    REAL(pwrite64);
    long before = calls;
    if (should_fail("pwrite64", fd)) return -1;
    ssize_t result = real_pwrite64(fd, buffer, count, offset);
    if (calls > before) kill_if_after(calls);
    return result;
}

ssize_t writev(int fd, const struct iovec *iov, int count) {
    REAL(writev);
    long before = calls;
    if (should_fail("writev", fd)) return -1;
    ssize_t result = real_writev(fd, iov, count);
    if (calls > before) kill_if_after(calls);
    return result;
}

ssize_t pwritev(int fd, const struct iovec *iov, int count, off_t offset) {
    REAL(pwritev);
    long before = calls;
    if (should_fail("pwritev", fd)) return -1;
    ssize_t result = real_pwritev(fd, iov, count, offset);
    if (calls > before) kill_if_after(calls);
    return result;
}

int fsync(int fd) {
    REAL(fsync);
    long before = calls;
    if (should_fail("fsync", fd)) return -1;
    int result = real_fsync(fd);
    if (calls > before) kill_if_after(calls);
    return result;
}

int fdatasync(int fd) {
    REAL(fdatasync);
    long before = calls;
    if (should_fail("fdatasync", fd)) return -1;
    int result = real_fdatasync(fd);
    if (calls > before) kill_if_after(calls);
    return result;
}

// The removals, counted only with FAULT_KILL (so that the fault sweeps'
// counts stay those of writes and syncs).
static int kill_point(const char *path) {
    if (!count_removals || !prefix_length || !path) return 0;
    return path[0] == '/' ? strncmp(path, prefix, prefix_length) == 0 && !(exclude && strstr(path, exclude)) : 0;
}

static void count_removal(const char *path) {
    if (!kill_point(path)) return;
    calls += 1;
    if (kill_before && nth > 0 && calls == nth) raise(SIGKILL);
}

int unlink(const char *path) {
    REAL(unlink);
    long before = calls;
    count_removal(path);
    int result = real_unlink(path);
    if (calls > before) kill_if_after(calls);
    return result;
}

int unlinkat(int dirfd, const char *path, int flags) {
    REAL(unlinkat);
    long before = calls;
    count_removal(path);
    int result = real_unlinkat(dirfd, path, flags);
    if (calls > before) kill_if_after(calls);
    return result;
}

int remove(const char *path) {
    REAL(remove);
    long before = calls;
    count_removal(path);
    int result = real_remove(path);
    if (calls > before) kill_if_after(calls);
    return result;
}

ssize_t send(int fd, const void *buffer, size_t count, int flags) {
    REAL(send);
    if (should_fail("send", fd)) return -1;
    return real_send(fd, buffer, count, flags);
}

ssize_t sendmsg(int fd, const struct msghdr *message, int flags) {
    REAL(sendmsg);
    if (should_fail("sendmsg", fd)) return -1;
    return real_sendmsg(fd, message, flags);
}
