/* What the preload shim's files share. */
#ifndef VHCA_PRELOAD_SHIM_H
#define VHCA_PRELOAD_SHIM_H

#include <stddef.h>
#include <sys/types.h>

#define VHCA_EXPORT __attribute__((visibility("default")))
#define VHCA_NOT_OURS (-2)

/* The next definition of libc symbol `name` (dlsym RTLD_NEXT), cached. */
void *vhca_next(const char *name);

/* The same, cached at the call site: one load on the hot paths (read,
 * write, close) every program under the preload takes. */
#define VHCA_REAL(type, name)                                   \
  ({                                                            \
    static type real_;                                          \
    type f_ = __atomic_load_n(&real_, __ATOMIC_ACQUIRE);        \
    if (!f_) {                                                  \
      f_ = (type)vhca_next(#name);                              \
      __atomic_store_n(&real_, f_, __ATOMIC_RELEASE);           \
    }                                                           \
    f_;                                                         \
  })

/* `path` under /sys/class/infiniband or /sys/class/infiniband_mad, moved
 * under SYSFS_PATH (into `buf`); any other path is returned as it is. */
const char *vhca_sysfs_redirect(const char *path, char *buf, size_t len);

/* The first line of $SYSFS_PATH/`rel` (a socket fabricd serves) into
 * `out`; 0 when there is none or it is not an absolute path. */
int vhca_socket_attr(const char *rel, char *out, size_t len);

/* open() of a vHCA's /dev/infiniband/umadN: the connected socket, or -1
 * with errno; VHCA_NOT_OURS for every other path. */
int vhca_umad_open(const char *path, int flags);

/* ucma.c: /dev/infiniband/rdma_cm. open: as vhca_umad_open. flagged: fd
 * may be a channel (one load; write and close then ask ucma.c). */
int vhca_ucma_open(const char *path, int flags);
int vhca_ucma_flagged(int fd);
ssize_t vhca_ucma_write(int fd, const void *buf, size_t count);
void vhca_ucma_forget(int fd);

/* umad_fds.c: the umad ports the shim opened, by fd. */
#include <stdint.h>
#include <sys/types.h>
struct vhca_umad_port {
  dev_t dev;
  ino_t ino;        /* 0: a free entry */
  uint32_t agents;  /* registered agent ids; change under vhca_umad_lock() */
};
int vhca_umad_track(int fd);                    /* a new port; -1 EMFILE */
struct vhca_umad_port *vhca_umad_port(int fd);  /* NULL: fd is not one */
void vhca_umad_forget(int fd);                  /* fd was closed */
/* newfd now refers to oldfd's file; -1: newfd is a umad port the shim
 * cannot track (beyond its table), which the caller closes (EMFILE). */
int vhca_umad_dup(int oldfd, int newfd);
void vhca_umad_lock(void);
void vhca_umad_unlock(void);

#endif
