/* What the preload shim's files share. */
#ifndef VHCA_PRELOAD_SHIM_H
#define VHCA_PRELOAD_SHIM_H

#include <stddef.h>

#define VHCA_EXPORT __attribute__((visibility("default")))
#define VHCA_NOT_OURS (-2)

/* The next definition of libc symbol `name` (dlsym RTLD_NEXT), cached. */
void *vhca_next(const char *name);

/* `path` under /sys/class/infiniband or /sys/class/infiniband_mad, moved
 * under SYSFS_PATH (into `buf`); any other path is returned as it is. */
const char *vhca_sysfs_redirect(const char *path, char *buf, size_t len);

/* open() of a vHCA's /dev/infiniband/umadN: the connected socket, or -1
 * with errno; VHCA_NOT_OURS for every other path. */
int vhca_umad_open(const char *path, int flags);

#endif
