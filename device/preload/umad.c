/* /dev/infiniband/umadN of a vHCA port (device/abi/vhca_umad.h). open()
 * connects to fabricd's socket for the port, named in the port's sysfs
 * entry; poll() is the socket's own, read() too but for ENOSPC and EOF.
 * The agent ioctls and write() are checked here as ib_umad checks them (so
 * a bad call fails with the kernel's errno in the caller) and then
 * forwarded, in order, on the same socket; fabricd checks everything again.
 * Which fds are umad ports is umad_fds.c's business. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include "device/abi/vhca_umad.h"
#include "shim.h"

#define RMPP_HDR 36 /* ib_umad's shortest write: MAD header + RMPP header */

typedef ssize_t (*write_fn)(int, const void *, size_t);
typedef ssize_t (*read_fn)(int, void *, size_t);
typedef int (*open_fn)(const char *, int, ...);
typedef int (*close_fn)(int);
typedef int (*ioctl_fn)(int, unsigned long, ...);
typedef int (*dup_fn)(int);
typedef int (*dup2_fn)(int, int);
typedef int (*dup3_fn)(int, int, int);
typedef int (*fcntl_fn)(int, int, ...);

/* "umadN" of /dev/infiniband/umadN, or -1. */
static int umad_number(const char *path) {
  static const char kDev[] = "/dev/infiniband/umad";
  if (!path || strncmp(path, kDev, sizeof(kDev) - 1) != 0) return -1;
  const char *p = path + sizeof(kDev) - 1;
  if (*p < '0' || *p > '9') return -1;
  char *end = NULL;
  long n = strtol(p, &end, 10);
  if (*end != '\0' || n < 0 || n > 1023) return -1;
  return (int)n;
}

/* The socket fabricd serves umadN on, from its sysfs entry; 0 if umadN is
 * not a vHCA's. */
static int socket_path(int n, char *out, size_t len) {
  char rel[64];
  snprintf(rel, sizeof(rel), "class/infiniband_mad/umad%d/vfabric_socket", n);
  return vhca_socket_attr(rel, out, len);
}

int vhca_umad_open(const char *path, int flags) {
  int n = umad_number(path);
  if (n < 0) return VHCA_NOT_OURS;
  char sock[sizeof(((struct sockaddr_un *)0)->sun_path)];
  if (!socket_path(n, sock, sizeof(sock))) return VHCA_NOT_OURS;
  int type = SOCK_SEQPACKET | ((flags & O_CLOEXEC) ? SOCK_CLOEXEC : 0);
  int fd = socket(AF_UNIX, type, 0);
  if (fd < 0) return -1;
  struct sockaddr_un a = {.sun_family = AF_UNIX};
  memcpy(a.sun_path, sock, strlen(sock) + 1);
  if (connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0 || vhca_umad_track(fd) != 0) {
    int e = errno;
    VHCA_REAL(close_fn, close)(fd);
    /* The daemon is gone: so is the port, as far as the app can tell. */
    errno = (e == ECONNREFUSED || e == ENOENT) ? ENODEV : e;
    return -1;
  }
  if (flags & O_NONBLOCK) fcntl(fd, F_SETFL, O_NONBLOCK);
  return fd;
}

/* Sends one message, waiting for room even on a non-blocking socket: the
 * kernel's write() and ioctls never return EAGAIN either. */
static int send_all(int fd, const struct iovec *iov, int n) {
  struct msghdr m = {.msg_iov = (struct iovec *)iov, .msg_iovlen = (size_t)n};
  for (;;) {
    ssize_t r = sendmsg(fd, &m, MSG_NOSIGNAL);
    if (r >= 0) return 0;
    if (errno == EINTR) continue;
    if (errno != EAGAIN) return errno == EPIPE || errno == ECONNRESET ? EIO : errno;
    struct pollfd p = {.fd = fd, .events = POLLOUT};
    if (poll(&p, 1, -1) < 0 && errno != EINTR) return errno;
  }
}

static int send_op(int fd, uint32_t op, uint32_t agent, const void *body, size_t len) {
  struct vhca_umad_msg m = {.op = op, .agent = agent};
  struct iovec iov[2] = {{&m, sizeof(m)}, {(void *)body, len}};
  return send_all(fd, iov, body ? 2 : 1);
}

static int is_smi_class(uint8_t c) { return c == 0x01 || c == 0x81; }

/* ib_umad_reg_agent2 + ib_register_mad_agent's checks on what is asked. */
static int check_agent(const struct vhca_umad_agent *a, int unsolicited) {
  if (a->qpn > 1) return EINVAL;
  if (a->rmpp_version > 1) return EINVAL;
  if (is_smi_class(a->mgmt_class) && a->qpn != 0) return EINVAL;
  if (unsolicited) {
    if (a->mgmt_class_version >= 8) return EINVAL;
    if (a->qpn == 0 && !is_smi_class(a->mgmt_class)) return EINVAL;
    if (a->rmpp_version && is_smi_class(a->mgmt_class)) return EINVAL;
  }
  if (a->oui & 0xff000000u) return EINVAL;
  return 0;
}

static int register_agent(int fd, struct vhca_umad_port *port, const struct vhca_umad_agent *a, uint32_t *id) {
  int unsolicited = a->method_mask[0] || a->method_mask[1];
  int e = check_agent(a, unsolicited);
  if (e) return e;
  vhca_umad_lock();
  uint32_t free_ids = ~port->agents;
  if (!free_ids) {
    vhca_umad_unlock();
    return ENOMEM;
  }
  uint32_t slot = (uint32_t)__builtin_ctz(free_ids);
  e = send_op(fd, VHCA_UMAD_OP_REGISTER, slot, a, sizeof(*a));
  if (!e) port->agents |= 1u << slot;
  vhca_umad_unlock();
  if (!e) *id = slot;
  return e;
}

/* The umad ioctls; ENOTTY for anything else (the caller asks the kernel). */
static int umad_ioctl(int fd, struct vhca_umad_port *port, unsigned long req, void *arg) {
  if (req == VHCA_UMAD_ENABLE_PKEY) return 0;
  if (!arg) return EFAULT;
  if (req == VHCA_UMAD_REGISTER_AGENT2) {
    struct vhca_umad_reg_req2 r;
    memcpy(&r, arg, sizeof(r));
    if (r.flags) { /* no user RMPP: say which flags there are (none) */
      ((struct vhca_umad_reg_req2 *)arg)->flags = 0;
      return EINVAL;
    }
    if (r.qpn > 1) return EINVAL;
    struct vhca_umad_agent a = {.qpn = r.qpn, .mgmt_class = r.mgmt_class,
                                .mgmt_class_version = r.mgmt_class_version,
                                .rmpp_version = r.rmpp_version, .oui = r.oui};
    memcpy(a.method_mask, r.method_mask, sizeof(a.method_mask));
    uint32_t id = 0;
    int e = register_agent(fd, port, &a, &id);
    if (!e) ((struct vhca_umad_reg_req2 *)arg)->id = id;
    return e;
  }
  if (req == VHCA_UMAD_REGISTER_AGENT) {
    struct vhca_umad_reg_req r;
    memcpy(&r, arg, sizeof(r));
    struct vhca_umad_agent a = {.qpn = r.qpn, .mgmt_class = r.mgmt_class,
                                .mgmt_class_version = r.mgmt_class_version,
                                .rmpp_version = r.rmpp_version,
                                .oui = (uint32_t)r.oui[0] << 16 | (uint32_t)r.oui[1] << 8 | r.oui[2]};
    memcpy(a.method_mask, r.method_mask, sizeof(a.method_mask));
    uint32_t id = 0;
    int e = register_agent(fd, port, &a, &id);
    if (!e) ((struct vhca_umad_reg_req *)arg)->id = id;
    return e;
  }
  if (req == VHCA_UMAD_UNREGISTER_AGENT) {
    uint32_t id;
    memcpy(&id, arg, sizeof(id));
    vhca_umad_lock();
    int e = (id < VHCA_UMAD_MAX_AGENTS && (port->agents & (1u << id))) ? 0 : EINVAL;
    if (!e) e = send_op(fd, VHCA_UMAD_OP_UNREGISTER, id, NULL, 0);
    if (!e) port->agents &= ~(1u << id);
    vhca_umad_unlock();
    return e;
  }
  return ENOTTY;
}

VHCA_EXPORT int ioctl(int fd, unsigned long req, ...) {
  va_list ap;
  va_start(ap, req);
  void *arg = va_arg(ap, void *);
  va_end(ap);
  struct vhca_umad_port *port = vhca_umad_port(fd);
  /* The file-level ioctls (FIONBIO, FIOCLEX, ...) are the socket's. */
  if (port && _IOC_TYPE(req) == VHCA_UMAD_IOCTL_MAGIC) {
    int e = umad_ioctl(fd, port, req, arg);
    if (!e) return 0;
    errno = e;
    return -1;
  }
  ioctl_fn f = VHCA_REAL(ioctl_fn, ioctl);
  if (!f) {
    errno = ENOSYS;
    return -1;
  }
  return f(fd, req, arg);
}

static ssize_t umad_write(int fd, struct vhca_umad_port *port, const void *buf, size_t count) {
  if (count < sizeof(struct vhca_umad_hdr) + RMPP_HDR ||
      count > sizeof(struct vhca_umad_hdr) + VHCA_MAD_SIZE) {
    errno = EINVAL;
    return -1;
  }
  struct vhca_umad_hdr h;
  memcpy(&h, buf, sizeof(h));
  uint32_t mine = __atomic_load_n(&port->agents, __ATOMIC_RELAXED);
  if (h.id >= VHCA_UMAD_MAX_AGENTS || !(mine & (1u << h.id))) {
    errno = EINVAL;
    return -1;
  }
  int e = send_op(fd, VHCA_UMAD_OP_SEND, h.id, buf, count);
  if (e) {
    errno = e;
    return -1;
  }
  return (ssize_t)count;
}

VHCA_EXPORT ssize_t write(int fd, const void *buf, size_t count) {
  if (vhca_ucma_flagged(fd)) return vhca_ucma_write(fd, buf, count);
  struct vhca_umad_port *port = vhca_umad_port(fd);
  if (port) return umad_write(fd, port, buf, count);
  write_fn f = VHCA_REAL(write_fn, write);
  if (!f) {
    errno = ENOSYS;
    return -1;
  }
  return f(fd, buf, count);
}

/* ib_umad's read(): a buffer too small for the next MAD (an SA table
 * longer than 256 bytes) gets its header, whose length says how much room
 * it needs, and ENOSPC; the MAD stays queued for the next read. A port
 * fabricd closed (it stopped) reads EIO, as a port whose device went away
 * does -- never 0, which libibmad would take for an empty MAD forever. */
static ssize_t umad_read(int fd, void *buf, size_t count) {
  if (count < sizeof(struct vhca_umad_hdr)) {
    errno = EINVAL;
    return -1;
  }
  ssize_t n = recv(fd, buf, count, MSG_PEEK | MSG_TRUNC);
  if (n == 0) {
    errno = EIO;
    return -1;
  }
  if (n < 0) return n;
  if ((size_t)n > count) {
    errno = ENOSPC;
    return -1;
  }
  return recv(fd, buf, count, 0);
}

VHCA_EXPORT ssize_t read(int fd, void *buf, size_t count) {
  if (vhca_umad_port(fd)) return umad_read(fd, buf, count);
  read_fn f = VHCA_REAL(read_fn, read);
  if (!f) {
    errno = ENOSYS;
    return -1;
  }
  return f(fd, buf, count);
}

VHCA_EXPORT int close(int fd) {
  vhca_umad_forget(fd);
  vhca_ucma_forget(fd);
  close_fn f = VHCA_REAL(close_fn, close);
  if (!f) {
    errno = ENOSYS;
    return -1;
  }
  return f(fd);
}

/* A new fd that refers to oldfd's file: tracked if oldfd is a umad port,
 * or closed with EMFILE when it cannot be (an untracked copy would send
 * unframed writes to fabricd, which would close the port for every fd). */
static int tracked_copy(int fd, int oldfd) {
  if (fd < 0 || fd == oldfd || vhca_umad_dup(oldfd, fd) == 0) return fd;
  VHCA_REAL(close_fn, close)(fd);
  errno = EMFILE;
  return -1;
}

VHCA_EXPORT int dup(int oldfd) {
  dup_fn f = VHCA_REAL(dup_fn, dup);
  if (!f) {
    errno = ENOSYS;
    return -1;
  }
  return tracked_copy(f(oldfd), oldfd);
}

VHCA_EXPORT int dup2(int oldfd, int newfd) {
  dup2_fn f = VHCA_REAL(dup2_fn, dup2);
  if (!f) {
    errno = ENOSYS;
    return -1;
  }
  return tracked_copy(f(oldfd, newfd), oldfd);
}

VHCA_EXPORT int dup3(int oldfd, int newfd, int flags) {
  dup3_fn f = VHCA_REAL(dup3_fn, dup3);
  if (!f) {
    errno = ENOSYS;
    return -1;
  }
  return tracked_copy(f(oldfd, newfd, flags), oldfd);
}

static int fcntl_common(fcntl_fn f, int fd, int cmd, void *arg) {
  if (!f) {
    errno = ENOSYS;
    return -1;
  }
  const int r = f(fd, cmd, arg);
  return cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC ? tracked_copy(r, fd) : r;
}

VHCA_EXPORT int fcntl(int fd, int cmd, ...) {
  va_list ap;
  va_start(ap, cmd);
  void *arg = va_arg(ap, void *); /* int or pointer: one register either way */
  va_end(ap);
  return fcntl_common(VHCA_REAL(fcntl_fn, fcntl), fd, cmd, arg);
}

VHCA_EXPORT int fcntl64(int fd, int cmd, ...) {
  va_list ap;
  va_start(ap, cmd);
  void *arg = va_arg(ap, void *);
  va_end(ap);
  return fcntl_common(VHCA_REAL(fcntl_fn, fcntl64), fd, cmd, arg);
}
