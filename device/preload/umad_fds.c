/* Which fds are umad ports the shim opened. A port is its socket (device
 * and inode); every fd that refers to it -- dup, dup2, dup3, F_DUPFD --
 * shares its agents, as fds of one open file share ib_umad's. An fd number
 * whose file is no longer that socket (closed behind the shim's back, by
 * close_range or fclose of an fdopen) is forgotten at its next use, so a
 * pipe that reuses the number is never mistaken for a umad port. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/stat.h>

#include "shim.h"

#define MAX_FDS 4096
#define MAX_PORTS 256

static struct vhca_umad_port ports[MAX_PORTS];
static uint16_t fd_port[MAX_FDS]; /* port index + 1; 0: not a umad port */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

void vhca_umad_lock(void) { pthread_mutex_lock(&lock); }
void vhca_umad_unlock(void) { pthread_mutex_unlock(&lock); }

static int referenced(uint16_t idx) {
  for (int fd = 0; fd < MAX_FDS; ++fd)
    if (fd_port[fd] == idx) return 1;
  return 0;
}

/* Drops fd's reference; the port goes with its last fd. Under the lock. */
static void drop_locked(int fd) {
  const uint16_t idx = fd_port[fd];
  if (!idx) return;
  __atomic_store_n(&fd_port[fd], 0, __ATOMIC_RELEASE);
  if (!referenced(idx)) ports[idx - 1].ino = 0;
}

int vhca_umad_track(int fd) {
  struct stat st;
  if (fd < 0 || fd >= MAX_FDS || fstat(fd, &st) != 0) {
    errno = EMFILE;
    return -1;
  }
  vhca_umad_lock();
  drop_locked(fd);
  int idx = -1;
  for (int i = 0; i < MAX_PORTS && idx < 0; ++i)
    if (!ports[i].ino) idx = i;
  if (idx >= 0) {
    ports[idx] = (struct vhca_umad_port){.dev = st.st_dev, .ino = st.st_ino, .agents = 0};
    __atomic_store_n(&fd_port[fd], (uint16_t)(idx + 1), __ATOMIC_RELEASE);
  }
  vhca_umad_unlock();
  if (idx < 0) errno = EMFILE;
  return idx < 0 ? -1 : 0;
}

struct vhca_umad_port *vhca_umad_port(int fd) {
  if (fd < 0 || fd >= MAX_FDS) return 0;
  const uint16_t idx = __atomic_load_n(&fd_port[fd], __ATOMIC_ACQUIRE);
  if (!idx) return 0;  /* the common case: one load */
  struct stat st;
  struct vhca_umad_port *p = &ports[idx - 1];
  if (fstat(fd, &st) == 0 && st.st_ino == p->ino && st.st_dev == p->dev) return p;
  vhca_umad_forget(fd);
  return 0;
}

void vhca_umad_forget(int fd) {
  if (fd < 0 || fd >= MAX_FDS || !__atomic_load_n(&fd_port[fd], __ATOMIC_ACQUIRE)) return;
  vhca_umad_lock();
  drop_locked(fd);
  vhca_umad_unlock();
}

static int flagged(int fd) {
  return fd >= 0 && fd < MAX_FDS && __atomic_load_n(&fd_port[fd], __ATOMIC_ACQUIRE) != 0;
}

int vhca_umad_dup(int oldfd, int newfd) {
  /* Neither is a umad port: no lock, so dup2 in a forked child or a signal
   * handler never waits on one. */
  if (!flagged(oldfd) && !flagged(newfd)) return 0;
  if (newfd < 0 || newfd >= MAX_FDS) return -1;  /* a copy the shim could not track */
  vhca_umad_lock();
  drop_locked(newfd);
  if (flagged(oldfd)) __atomic_store_n(&fd_port[newfd], fd_port[oldfd], __ATOMIC_RELEASE);
  vhca_umad_unlock();
  return 0;
}

/* A child of fork() has one thread: a lock another thread of the parent
 * held is nobody's now. */
static void reset_lock_in_child(void) { pthread_mutex_init(&lock, NULL); }

__attribute__((constructor)) static void register_fork_handler(void) {
  pthread_atfork(NULL, NULL, reset_lock_in_child);
}
