/* Completion channels for vHCAs. libibverbs' ibv_create_comp_channel asks
 * the kernel (uverbs) for an event file; a vHCA context has no kernel side,
 * so that fails (EBADF on its /dev/null cmd_fd). Then, and only for a vHCA,
 * we make the channel ourselves: a pipe whose read end is channel->fd, which
 * ibv_get_cq_event reads unchanged; the provider hands fabricd the write end
 * with each CQ created on the channel. Real HCAs never reach our code path:
 * the real function is always tried first. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "device/abi/vhca_abi.h"
#include "device/abi/vhca_comp_channel.h"

#define EXPORT __attribute__((visibility("default")))

typedef struct ibv_comp_channel *(*create_fn)(struct ibv_context *);
typedef int (*destroy_fn)(struct ibv_comp_channel *);

/* Both symbols exist only as IBVERBS_1.0 in libibverbs 44; ask for that
 * version so a future default version cannot change what we call. */
static void *next_symbol(const char *name) {
  void *f = dlvsym(RTLD_NEXT, name, "IBVERBS_1.0");
  return f ? f : dlsym(RTLD_NEXT, name);
}

/* The provider's own test: fabricd's socket attribute in the device's
 * sysfs directory. A channel on a vHCA context can only be one of ours. */
static int is_vhca(const struct ibv_context *context) {
  if (!context || !context->device) return 0;
  char path[IBV_SYSFS_PATH_MAX + 64];
  int n = snprintf(path, sizeof(path), "%s/%s", context->device->ibdev_path, VHCA_SYSFS_SOCKET_ATTR);
  return n > 0 && (size_t)n < sizeof(path) && access(path, F_OK) == 0;
}

EXPORT struct ibv_comp_channel *ibv_create_comp_channel(struct ibv_context *context) {
  create_fn real = (create_fn)next_symbol("ibv_create_comp_channel");
  if (real) {
    struct ibv_comp_channel *ch = real(context);
    if (ch || !is_vhca(context)) return ch;
  } else if (!is_vhca(context)) {
    errno = ENOSYS;
    return NULL;
  }
  struct vhca_comp_channel *vch = calloc(1, sizeof(*vch));
  if (!vch) {
    errno = ENOMEM;
    return NULL;
  }
  int p[2];
  if (pipe2(p, O_CLOEXEC)) { /* read end blocking: ibv_get_cq_event waits on it */
    int err = errno;
    free(vch);
    errno = err;
    return NULL;
  }
  vch->channel.context = context;
  vch->channel.fd = p[0];
  vch->channel.refcnt = 0;
  vch->magic = VHCA_COMP_CHANNEL_MAGIC;
  vch->write_fd = p[1];
  return &vch->channel;
}

EXPORT int ibv_destroy_comp_channel(struct ibv_comp_channel *channel) {
  if (!is_vhca(channel->context)) {
    destroy_fn real = (destroy_fn)next_symbol("ibv_destroy_comp_channel");
    return real ? real(channel) : ENOSYS;
  }
  struct vhca_comp_channel *vch = (struct vhca_comp_channel *)channel;
  if (vch->magic != VHCA_COMP_CHANNEL_MAGIC) return EINVAL;
  /* The same rule and lock as libibverbs: CQs still using it keep it. */
  pthread_mutex_lock(&channel->context->mutex);
  int busy = channel->refcnt != 0;
  pthread_mutex_unlock(&channel->context->mutex);
  if (busy) return EBUSY;
  close(channel->fd);
  /* The provider may have closed it already (fabricd went away): whoever
   * takes it closes it. */
  int wfd = __atomic_exchange_n(&vch->write_fd, -1, __ATOMIC_ACQ_REL);
  if (wfd >= 0) close(wfd);
  vch->magic = 0;
  free(vch);
  return 0;
}
