/* libibumad 44 (and so ibstat, perfquery, ibnetdiscover, ...) reads
 * /sys/class/infiniband and /sys/class/infiniband_mad by those compiled-in
 * names; unlike libibverbs it has no SYSFS_PATH. In a process fabricctl
 * exec starts (SYSFS_PATH is set), the opens of those two classes go to
 * fabricd's tree instead, so the tools see the vHCAs as libibverbs does.
 * Nothing else is redirected; without SYSFS_PATH this file does nothing.
 * The calls covered are those libibumad and the tools make, and those of
 * the shell and coreutils ibstatus runs (open, opendir, scandir, fopen,
 * chdir, access, stat). */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shim.h"

static const char kClass[] = "/sys/class/infiniband";
typedef int (*open_fn_t)(const char *, int, ...);

/* Writes the redirected name of `path` into `buf` and returns it, or returns
 * `path` unchanged when it is not one of the two classes. */
const char *vhca_sysfs_redirect(const char *path, char *buf, size_t len) {
  if (!path || strncmp(path, kClass, sizeof(kClass) - 1) != 0) return path;
  const char *rest = path + sizeof(kClass) - 1;
  if (*rest != '\0' && *rest != '/' && strncmp(rest, "_mad", 4) != 0) return path;
  if (strncmp(rest, "_mad", 4) == 0 && rest[4] != '\0' && rest[4] != '/') return path;
  const char *root = getenv("SYSFS_PATH");
  if (!root || root[0] != '/') return path;
  int n = snprintf(buf, len, "%s%s", root, path + 4); /* keep "/class/..." */
  if (n < 0 || (size_t)n >= len) return path;
  return buf;
}

int vhca_socket_attr(const char *rel, char *out, size_t len) {
  const char *root = getenv("SYSFS_PATH");
  if (!root || root[0] != '/') return 0;
  char attr[PATH_MAX];
  int k = snprintf(attr, sizeof(attr), "%s/%s", root, rel);
  if (k < 0 || (size_t)k >= sizeof(attr)) return 0;
  open_fn_t real_open = (open_fn_t)vhca_next("open");
  int fd = real_open ? real_open(attr, O_RDONLY | O_CLOEXEC) : -1;
  if (fd < 0) return 0;
  ssize_t got = read(fd, out, len - 1);
  close(fd);
  if (got <= 0) return 0;
  out[got] = '\0';
  char *nl = strchr(out, '\n');
  if (nl) *nl = '\0';
  return out[0] == '/';
}

#define REDIRECT(p) \
  char redirected_[PATH_MAX]; \
  const char *p##_r = vhca_sysfs_redirect(p, redirected_, sizeof(redirected_))

static int mode_arg(int flags, va_list ap) {
  return (flags & (O_CREAT | __O_TMPFILE)) ? va_arg(ap, int) : 0;
}

typedef int (*open_fn)(const char *, int, ...);
typedef int (*openat_fn)(int, const char *, int, ...);
typedef DIR *(*opendir_fn)(const char *);
typedef int (*scandir_fn)(const char *, struct dirent ***, int (*)(const struct dirent *),
                          int (*)(const struct dirent **, const struct dirent **));
typedef FILE *(*fopen_fn)(const char *, const char *);

static int open_common(const char *sym, const char *path, int flags, int mode) {
  int fd = vhca_umad_open(path, flags);
  if (fd != VHCA_NOT_OURS) return fd;
  fd = vhca_ucma_open(path, flags);
  if (fd != VHCA_NOT_OURS) return fd;
  REDIRECT(path);
  open_fn f = (open_fn)vhca_next(sym);
  if (!f) {
    errno = ENOSYS;
    return -1;
  }
  return f(path_r, flags, mode);
}

VHCA_EXPORT int open(const char *path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  int mode = mode_arg(flags, ap);
  va_end(ap);
  return open_common("open", path, flags, mode);
}

VHCA_EXPORT int open64(const char *path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  int mode = mode_arg(flags, ap);
  va_end(ap);
  return open_common("open64", path, flags, mode);
}

static int openat_common(const char *sym, int dirfd, const char *path, int flags, int mode) {
  if (path && path[0] == '/') {
    int fd = vhca_umad_open(path, flags);
    if (fd != VHCA_NOT_OURS) return fd;
  }
  REDIRECT(path);
  openat_fn f = (openat_fn)vhca_next(sym);
  if (!f) {
    errno = ENOSYS;
    return -1;
  }
  return f(dirfd, path_r, flags, mode);
}

VHCA_EXPORT int openat(int dirfd, const char *path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  int mode = mode_arg(flags, ap);
  va_end(ap);
  return openat_common("openat", dirfd, path, flags, mode);
}

VHCA_EXPORT int openat64(int dirfd, const char *path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  int mode = mode_arg(flags, ap);
  va_end(ap);
  return openat_common("openat64", dirfd, path, flags, mode);
}

VHCA_EXPORT DIR *opendir(const char *path) {
  REDIRECT(path);
  opendir_fn f = (opendir_fn)vhca_next("opendir");
  if (!f) {
    errno = ENOSYS;
    return NULL;
  }
  return f(path_r);
}

VHCA_EXPORT int scandir(const char *path, struct dirent ***list, int (*filter)(const struct dirent *),
                        int (*cmp)(const struct dirent **, const struct dirent **)) {
  REDIRECT(path);
  scandir_fn f = (scandir_fn)vhca_next("scandir");
  if (!f) {
    errno = ENOSYS;
    return -1;
  }
  return f(path_r, list, filter, cmp);
}

VHCA_EXPORT FILE *fopen(const char *path, const char *mode) {
  REDIRECT(path);
  fopen_fn f = (fopen_fn)vhca_next("fopen");
  if (!f) {
    errno = ENOSYS;
    return NULL;
  }
  return f(path_r, mode);
}

/* ibstatus is a shell script: dash's cd, test -d / -r and glob, cat. */
typedef int (*chdir_fn)(const char *);
typedef int (*faccessat_fn)(int, const char *, int, int);
typedef int (*access_fn)(const char *, int);
typedef int (*stat_fn)(const char *, struct stat *);
typedef int (*stat64_fn)(const char *, struct stat64 *);

VHCA_EXPORT int chdir(const char *path) {
  REDIRECT(path);
  chdir_fn f = (chdir_fn)vhca_next("chdir");
  if (!f) {
    errno = ENOSYS;
    return -1;
  }
  return f(path_r);
}

VHCA_EXPORT int access(const char *path, int mode) {
  REDIRECT(path);
  access_fn f = (access_fn)vhca_next("access");
  if (!f) {
    errno = ENOSYS;
    return -1;
  }
  return f(path_r, mode);
}

VHCA_EXPORT int faccessat(int dirfd, const char *path, int mode, int flags) {
  REDIRECT(path);
  faccessat_fn f = (faccessat_fn)vhca_next("faccessat");
  if (!f) {
    errno = ENOSYS;
    return -1;
  }
  return f(dirfd, path_r, mode, flags);
}

#define STAT_LIKE(name, fn_t, buf_t) \
  VHCA_EXPORT int name(const char *path, buf_t *buf) { \
    REDIRECT(path); \
    fn_t f = (fn_t)vhca_next(#name); \
    if (!f) { \
      errno = ENOSYS; \
      return -1; \
    } \
    return f(path_r, buf); \
  }

STAT_LIKE(stat, stat_fn, struct stat)
STAT_LIKE(lstat, stat_fn, struct stat)
STAT_LIKE(stat64, stat64_fn, struct stat64)
STAT_LIKE(lstat64, stat64_fn, struct stat64)
