/* The engine dies with the scope process that launched it.  A rank that outlives it (scope
 * killed with SIGKILL, a closed terminal on a login node) would busy-poll its core for the
 * rest of the job, and nothing would read what it measures.  scope passes its own pid, its
 * start time and its host (SCOPE_WATCH_PID, SCOPE_WATCH_START, SCOPE_WATCH_HOST); every rank
 * on that host runs a thread that looks every WATCH_PERIOD_MS whether that process is still
 * there (the start time tells a reused pid apart).  When it is gone the rank removes what the
 * job would leave behind (rank 0: the run's fresh --io-dir; every rank: the shared-memory
 * segments it has mapped, MPICH's /dev/shm/mpich_shm_* among them) and exits at once.
 * Ranks on other hosts are ended by their launcher, which scope's death ends
 * (PR_SET_PDEATHSIG, run/launcher.py). */
#include "watchdog.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#define WATCH_PERIOD_MS 200

static pid_t watched;
static unsigned long long watched_start;
static const char *scratch; /* rank 0: the run's --io-dir, a directory scope made for it */

/* Field 22 of /proc/PID/stat: when the process started, in clock ticks since boot (0: unknown). */
static unsigned long long start_time(pid_t pid) {
  char path[64], buf[1024];
  snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
  FILE *f = fopen(path, "r");
  if (!f)
    return 0;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  char *p = strrchr(buf, ')'); /* the command name may hold spaces and parentheses */
  unsigned long long v = 0;
  if (p && sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu", &v) != 1)
    v = 0;
  return v;
}

static int watched_gone(void) {
  if (kill(watched, 0) == -1 && errno == ESRCH)
    return 1;
  return watched_start && start_time(watched) != watched_start; /* the pid was reused */
}

/* The files of a directory scope made for this run, then the directory (one level: the io
 * tests write their files directly into it). */
static void remove_scratch(const char *dir) {
  DIR *d = opendir(dir);
  if (!d)
    return;
  struct dirent *e;
  char path[4096];
  while ((e = readdir(d)))
    if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
      snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
      unlink(path);
    }
  closedir(d);
  rmdir(dir);
}

/* Shared-memory segments this rank has mapped whose path starts with `prefix` (/dev/shm/...):
 * the job's own, which a killed job would leave in memory until reboot. */
static void remove_segments(const char *prefix) {
  FILE *f = fopen("/proc/self/maps", "r");
  if (!f)
    return;
  char line[4352];
  while (fgets(line, sizeof line, f)) {
    char *p = strstr(line, " /dev/shm/");
    if (!p || strncmp(p + 1, prefix, strlen(prefix)) != 0)
      continue;
    p[strcspn(p, "\n")] = '\0';
    char *del = strstr(p, " (deleted)");
    if (!del)
      unlink(p + 1);
  }
  fclose(f);
}

static void *watch(void *arg) {
  (void)arg;
  struct timespec t = {0, WATCH_PERIOD_MS * 1000000L};
  for (;;) {
    nanosleep(&t, NULL);
    if (!watched_gone())
      continue;
    if (scratch)
      remove_scratch(scratch);
    remove_segments("/dev/shm/");
    fprintf(stderr, "scope-engine: the scope process %d that launched this job is gone: exiting\n", (int)watched);
    _exit(137);
  }
  return NULL;
}

void watchdog_start(int rank, const char *io_dir) {
  const char *pid = getenv("SCOPE_WATCH_PID"), *host = getenv("SCOPE_WATCH_HOST");
  const char *start = getenv("SCOPE_WATCH_START");
  char me[256] = "";
  if (!pid || !host || gethostname(me, sizeof me - 1) != 0 || strcmp(me, host) != 0)
    return; /* not launched by scope, or on another host: its launcher ends it */
  watched = (pid_t)atol(pid);
  watched_start = start ? strtoull(start, NULL, 10) : 0;
  if (watched <= 1)
    return;
  scratch = rank == 0 ? io_dir : NULL;
  pthread_t th;
  pthread_attr_t at;
  pthread_attr_init(&at);
  /* the default stack: a small one fails where a library brings large thread-local storage
   * (OpenBLAS's is placed in every thread's stack), and an idle thread commits little of it */
  pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
  if (pthread_create(&th, &at, watch, NULL) != 0)
    fprintf(stderr, "scope-engine: warning: no watchdog thread: this job may outlive a killed scope\n");
  pthread_attr_destroy(&at);
}

void watchdog_unlink_mpi_segments(void) {
  /* Once every rank has mapped MPICH's node segment (the caller's barrier), its name is no
   * longer needed: the mappings keep the memory until the last rank unmaps it.  Unlinked now,
   * a job killed outright leaves nothing in /dev/shm (issue 58: ranks that hydra's proxy
   * killed with SIGKILL when scope was killed never reached the watch above, and their
   * segment stayed until the next run). */
  if (watched > 1)
    remove_segments("/dev/shm/mpich_shm_");
}
