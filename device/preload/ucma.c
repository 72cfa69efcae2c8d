/* /dev/infiniband/rdma_cm of a process under the preload shim: librdmacm
 * talks to fabricd's connection manager as it would to the kernel's rdma_ucm
 * (device/abi/vhca_ucma.h says how). open() connects, write() runs one
 * command, fstat() says "character device" (librdmacm checks), close() lets
 * go of the channel. The fd the app holds is the event socket, so poll(),
 * O_NONBLOCK and select() behave as on the kernel's file. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <rdma/rdma_user_cm.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include "device/abi/vhca_ucma.h"
#include "shim.h"

#define MAX_FDS 4096

struct ucma_chan {
  int cmd_fd;
  dev_t dev;
  ino_t ino; /* of the event socket: the app's fd */
  uint64_t channel, secret;
  pthread_mutex_t mu; /* one command at a time on the command socket */
  int closed;         /* the app closed the fd */
  int users;          /* calls inside the channel now; under table_lock */
};

static struct ucma_chan *chans[MAX_FDS];
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;

typedef int (*open_fn)(const char *, int, ...);
typedef ssize_t (*read_fn)(int, void *, size_t);
typedef int (*close_fn)(int);
typedef int (*fstat_fn)(int, struct stat *);

static void close_locked(int fd);

static int real_fstat(int fd, struct stat *st) {
  fstat_fn f = VHCA_REAL(fstat_fn, fstat);
  if (!f) {
    errno = ENOSYS;
    return -1;
  }
  return f(fd, st);
}

/* The OPEN handshake: the channel's name and its event socket. */
static int handshake(int cmd_fd, struct vhca_ucma_open_reply *rep, int *event_fd) {
  const uint32_t op = VHCA_UCMA_OPEN;
  if (send(cmd_fd, &op, sizeof(op), MSG_NOSIGNAL) != (ssize_t)sizeof(op)) return -1;
  union {
    char buf[CMSG_SPACE(sizeof(int))];
    struct cmsghdr align;
  } ctl;
  struct iovec iov = {rep, sizeof(*rep)};
  struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf, .msg_controllen = sizeof(ctl.buf)};
  ssize_t n = recvmsg(cmd_fd, &m, MSG_CMSG_CLOEXEC);
  if (n != (ssize_t)sizeof(*rep)) return -1;
  if (rep->error) {
    errno = rep->error;
    return -1;
  }
  struct cmsghdr *c = CMSG_FIRSTHDR(&m);
  if (!c || c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) return -1;
  memcpy(event_fd, CMSG_DATA(c), sizeof(int));
  return 0;
}

int vhca_ucma_open(const char *path, int flags) {
  if (!path || strcmp(path, "/dev/infiniband/rdma_cm") != 0) return VHCA_NOT_OURS;
  char sock[sizeof(((struct sockaddr_un *)0)->sun_path)];
  if (!vhca_socket_attr("class/misc/rdma_cm/vfabric_socket", sock, sizeof(sock))) return VHCA_NOT_OURS;
  int cmd_fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  if (cmd_fd < 0) return -1;
  struct sockaddr_un a = {.sun_family = AF_UNIX};
  memcpy(a.sun_path, sock, strlen(sock) + 1);
  struct vhca_ucma_open_reply rep;
  int event_fd = -1;
  if (connect(cmd_fd, (struct sockaddr *)&a, sizeof(a)) != 0 || handshake(cmd_fd, &rep, &event_fd) != 0) {
    int e = errno;
    VHCA_REAL(close_fn, close)(cmd_fd);
    errno = (e == ECONNREFUSED || e == ENOENT || e == 0) ? ENODEV : e;
    return -1;
  }
  struct stat st;
  struct ucma_chan *c = calloc(1, sizeof(*c));
  if (!c || event_fd >= MAX_FDS || real_fstat(event_fd, &st) != 0) {
    free(c);
    VHCA_REAL(close_fn, close)(cmd_fd);
    VHCA_REAL(close_fn, close)(event_fd);
    errno = EMFILE;
    return -1;
  }
  if (!(flags & O_CLOEXEC)) fcntl(event_fd, F_SETFD, 0);
  if (flags & O_NONBLOCK) fcntl(event_fd, F_SETFL, O_NONBLOCK);
  *c = (struct ucma_chan){.cmd_fd = cmd_fd, .dev = st.st_dev, .ino = st.st_ino,
                          .channel = rep.channel, .secret = rep.secret};
  pthread_mutex_init(&c->mu, NULL);
  pthread_mutex_lock(&table_lock);
  close_locked(event_fd); /* an fd number closed behind the shim's back */
  __atomic_store_n(&chans[event_fd], c, __ATOMIC_RELEASE);
  pthread_mutex_unlock(&table_lock);
  return event_fd;
}

/* The last one out of a closed channel lets go of its command socket
 * (fabricd then destroys the channel's ids). Under table_lock. */
static void release_locked(struct ucma_chan *c) {
  if (--c->users > 0 || !c->closed) return;
  VHCA_REAL(close_fn, close)(c->cmd_fd);
  pthread_mutex_destroy(&c->mu);
  free(c);
}

static void release(struct ucma_chan *c) {
  pthread_mutex_lock(&table_lock);
  release_locked(c);
  pthread_mutex_unlock(&table_lock);
}

/* Marks the table's entry for fd closed. Under table_lock. */
static void close_locked(int fd) {
  struct ucma_chan *c = chans[fd];
  if (!c) return;
  __atomic_store_n(&chans[fd], NULL, __ATOMIC_RELEASE);
  c->closed = 1;
  /* A thread still inside a call on it gets an error, never another fd's data. */
  shutdown(c->cmd_fd, SHUT_RDWR);
  ++c->users;
  release_locked(c);
}

/* The channel fd is, held until release(), or NULL. The number may have
 * been closed and reused behind the shim's back (close_range): the inode
 * tells. */
static struct ucma_chan *acquire(int fd) {
  if (fd < 0 || fd >= MAX_FDS || !__atomic_load_n(&chans[fd], __ATOMIC_ACQUIRE)) return NULL;
  struct stat st;
  int ok = real_fstat(fd, &st) == 0;
  pthread_mutex_lock(&table_lock);
  struct ucma_chan *c = chans[fd];
  if (c && (!ok || st.st_ino != c->ino || st.st_dev != c->dev)) {
    close_locked(fd);
    c = NULL;
  }
  if (c) ++c->users;
  pthread_mutex_unlock(&table_lock);
  return c;
}

int vhca_ucma_flagged(int fd) {
  return fd >= 0 && fd < MAX_FDS && __atomic_load_n(&chans[fd], __ATOMIC_ACQUIRE) != NULL;
}

void vhca_ucma_forget(int fd) {
  if (!vhca_ucma_flagged(fd)) return;
  pthread_mutex_lock(&table_lock);
  close_locked(fd);
  pthread_mutex_unlock(&table_lock);
}

/* One command and its reply; the reply's bytes go to `resp` (up to `cap`).
 * Returns 0 or an errno. */
static int transact(struct ucma_chan *c, const struct iovec *iov, int n, void *resp, size_t cap) {
  struct {
    struct vhca_ucma_reply h;
    uint8_t body[VHCA_UCMA_MAX_CMD];
  } r;
  struct msghdr m = {.msg_iov = (struct iovec *)iov, .msg_iovlen = (size_t)n};
  pthread_mutex_lock(&c->mu);
  ssize_t got;
  if (sendmsg(c->cmd_fd, &m, MSG_NOSIGNAL) < 0) {
    got = -1;
  } else {
    do got = recv(c->cmd_fd, &r, sizeof(r), 0);
    while (got < 0 && errno == EINTR);
  }
  pthread_mutex_unlock(&c->mu);
  if (got < (ssize_t)sizeof(r.h)) return ENODEV; /* fabricd is gone, and the device with it */
  if (r.h.error) return r.h.error;
  size_t len = r.h.len;
  if (len > (size_t)got - sizeof(r.h)) len = (size_t)got - sizeof(r.h);
  if (len > cap) len = cap;
  if (len && resp) memcpy(resp, r.body, len);
  return 0;
}

static void *response_ptr(const uint8_t *buf, uint32_t cmd) {
  uint64_t p;
  memcpy(&p, buf + (cmd == RDMA_USER_CM_CMD_CREATE_ID ? 16 : 8), sizeof(p));
  return (void *)(uintptr_t)p;
}

/* GET_EVENT: wait for an event's byte on the app's fd (blocking or not, as
 * the app set it), then fetch the event. */
static int get_event(struct ucma_chan *c, int fd, const uint8_t *buf, size_t n, void *resp, size_t cap) {
  for (;;) {
    char token;
    ssize_t r = recv(fd, &token, 1, 0);
    if (r == 0 && __atomic_load_n(&c->closed, __ATOMIC_RELAXED)) {
      /* Another thread closed the channel under this one: on the kernel's
       * file the call waits until the process exits, and so does this. */
      for (;;) pause();
    }
    if (r == 0) return ENODEV; /* fabricd stopped: the device is gone */
    if (r < 0) return errno;
    if (token == VHCA_UCMA_REMOVAL) {
      struct rdma_ucm_event_resp ev;
      if (recv(fd, &ev, sizeof(ev), MSG_WAITALL) != (ssize_t)sizeof(ev)) return ENODEV;
      if (resp) memcpy(resp, &ev, cap < sizeof(ev) ? cap : sizeof(ev));
      return 0;
    }
    struct iovec iov = {(void *)buf, n};
    int e = transact(c, &iov, 1, resp, cap);
    if (e == ENODEV && __atomic_load_n(&c->closed, __ATOMIC_RELAXED)) {
      /* Woken for an event, then the channel was closed under this call
       * (rping's teardown: its DISCONNECTED races rdma_destroy_event_channel
       * in main): the kernel's read would wait on, as above. */
      for (;;) pause();
    }
    if (e != (int)VHCA_UCMA_STALE) return e;
  }
}

typedef ssize_t (*write_fn)(int, const void *, size_t);

static ssize_t ucma_write(struct ucma_chan *c, int fd, const void *data, size_t count);

ssize_t vhca_ucma_write(int fd, const void *data, size_t count) {
  struct ucma_chan *c = acquire(fd);
  if (!c) return VHCA_REAL(write_fn, write)(fd, data, count);
  ssize_t r = ucma_write(c, fd, data, count);
  int e = errno;
  release(c);
  errno = e;
  return r;
}

static ssize_t ucma_write(struct ucma_chan *c, int fd, const void *data, size_t count) {
  const uint8_t *buf = data;
  struct rdma_ucm_cmd_hdr h;
  if (count < sizeof(h)) {
    errno = EINVAL;
    return -1;
  }
  memcpy(&h, buf, sizeof(h));
  size_t n = sizeof(h) + h.in;
  if (n > count || n > VHCA_UCMA_MAX_CMD) {
    errno = EINVAL;
    return -1;
  }
  void *resp = NULL;
  if (h.out && n >= (h.cmd == RDMA_USER_CM_CMD_CREATE_ID ? 24u : 16u)) resp = response_ptr(buf, h.cmd);
  int e;
  if (h.cmd == RDMA_USER_CM_CMD_GET_EVENT) {
    e = get_event(c, fd, buf, n, resp, h.out);
  } else if (h.cmd == RDMA_USER_CM_CMD_SET_OPTION && n >= sizeof(h) + sizeof(struct rdma_ucm_set_option)) {
    struct rdma_ucm_set_option o;
    memcpy(&o, buf + sizeof(h), sizeof(o));
    if (o.optlen > VHCA_UCMA_MAX_OPTLEN || (o.optlen && !o.optval)) {
      errno = EINVAL;
      return -1;
    }
    struct iovec iov[2] = {{(void *)buf, n}, {(void *)(uintptr_t)o.optval, o.optlen}};
    e = transact(c, iov, o.optlen ? 2 : 1, NULL, 0);
  } else if (h.cmd == RDMA_USER_CM_CMD_MIGRATE_ID && n >= sizeof(h) + sizeof(struct rdma_ucm_migrate_id)) {
    /* Written to the destination channel; cmd.fd names the id's current one. */
    struct rdma_ucm_migrate_id mig;
    memcpy(&mig, buf + sizeof(h), sizeof(mig));
    struct ucma_chan *from = acquire((int)mig.fd);
    if (!from) {
      errno = fcntl((int)mig.fd, F_GETFD) < 0 ? ENOENT : EINVAL; /* the kernel's answers */
      return -1;
    }
    struct vhca_ucma_migrate fwd = {.cmd = h.cmd, .in = sizeof(fwd) - sizeof(h), .out = h.out,
                                    .response = mig.response, .id = mig.id,
                                    .channel = from->channel, .secret = from->secret};
    release(from);
    struct iovec iov = {&fwd, sizeof(fwd)};
    e = transact(c, &iov, 1, resp, h.out);
  } else {
    struct iovec iov = {(void *)buf, n};
    e = transact(c, &iov, 1, resp, h.out);
  }
  if (e) {
    errno = e;
    return -1;
  }
  return (ssize_t)count;
}

/* librdmacm opens the device only if fstat() says it is a character device. */
VHCA_EXPORT int fstat(int fd, struct stat *st) {
  int r = real_fstat(fd, st);
  struct ucma_chan *c = r == 0 ? acquire(fd) : NULL;
  if (c) {
    release(c);
    st->st_mode = S_IFCHR | 0666;
    st->st_rdev = makedev(10, 58); /* a misc device, as rdma_cm is */
  }
  return r;
}

VHCA_EXPORT int fstat64(int fd, struct stat64 *st) { return fstat(fd, (struct stat *)st); }

static void reset_lock_in_child(void) { pthread_mutex_init(&table_lock, NULL); }

__attribute__((constructor)) static void register_ucma_fork_handler(void) {
  pthread_atfork(NULL, NULL, reset_lock_in_child);
}
