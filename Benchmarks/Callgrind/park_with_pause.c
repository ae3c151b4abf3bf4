/* LD_PRELOAD shim for running a release `eventlog` under valgrind 3.19.
   libdispatch parks the main thread of an async main in sigsuspend
   (_dispatch_sig_thread), and callgrind dies there with an internal SIGSEGV.
   This parks it with pause() instead; the work runs on other threads and
   the process ends with exit(), as before. Build:
   cc -shared -fPIC -O2 -o park_with_pause.so park_with_pause.c */
#include <signal.h>
#include <unistd.h>

int sigsuspend(const sigset_t *mask) {
    (void)mask;
    for (;;) pause();
    return -1;
}
