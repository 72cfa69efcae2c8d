/* Provider registration, device matching and context lifetime. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "vhca.h"

/* A vHCA is recognised by the socket attribute fabricd writes into its sysfs
 * directory; real HCAs never have it, so we never claim hardware. */
static int read_socket_attr(const char *ibdev_path, char *out, size_t len) {
  char path[IBV_SYSFS_PATH_MAX + 32];
  snprintf(path, sizeof(path), "%s/%s", ibdev_path, VHCA_SYSFS_SOCKET_ATTR);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  ssize_t n = read(fd, out, len - 1);
  close(fd);
  if (n <= 0) return -1;
  out[n] = '\0';
  while (n > 0 && (out[n - 1] == '\n' || out[n - 1] == ' ')) out[--n] = '\0';
  return out[0] == '/' ? 0 : -1;
}

static bool vhca_match_device(struct verbs_sysfs_dev *sysfs_dev) {
  char path[108];
  return read_socket_attr(sysfs_dev->ibdev_path, path, sizeof(path)) == 0;
}

static struct verbs_device *vhca_alloc_device(struct verbs_sysfs_dev *sysfs_dev) {
  struct vhca_device *dev = calloc(1, sizeof(*dev));
  if (!dev) return NULL;
  if (read_socket_attr(sysfs_dev->ibdev_path, dev->socket_path, sizeof(dev->socket_path))) {
    free(dev);
    return NULL;
  }
  return &dev->vdev;
}

static void vhca_uninit_device(struct verbs_device *vdev) { free(vdev); }

void vhca_free_context(struct ibv_context *ibctx) {
  struct vhca_context *ctx = to_vctx(ibctx);
  vhca_stop_watcher(ctx); /* before the socket it polls is closed */
  if (ctx->status) munmap((void *)ctx->status, sizeof(*ctx->status));
  if (ctx->doorbell_fd >= 0) close(ctx->doorbell_fd);
  if (ctx->sock >= 0) close(ctx->sock);
  if (ctx->async_pipe[1] >= 0) close(ctx->async_pipe[1]);
  /* async_pipe[0] is context.async_fd: verbs_uninit_context closes it. */
  pthread_mutex_destroy(&ctx->cmd_lock);
  pthread_mutex_destroy(&ctx->obj_lock);
  verbs_uninit_context(&ctx->vctx);
  free(ctx);
}

static int open_engine(struct vhca_context *ctx, const char *socket_path, const char *name) {
  ctx->sock = vhca_connect(socket_path);
  if (ctx->sock < 0) {
    int err = errno;
    fprintf(stderr,
            VHCA_PFX "cannot open %s: fabricd is not reachable at %s (%s). Is fabricd running? "
                     "Start it with 'systemctl start fabricd' and check 'fabricctl status'.\n",
            name, socket_path, strerror(err));
    return err;
  }
  struct vhca_open_context_req req = {0};
  struct vhca_open_context_rsp rsp;
  int fds[2] = {-1, -1};
  /* fabricd writes async events into the pipe's write end; we keep no copy,
   * so the app's reads see EOF rather than block forever if fabricd dies.
   * /proc/self/mem is how fabricd reaches our memory, and only ours: the
   * kernel binds it to this address space, which an exec ends. */
  int mem_fd = open("/proc/self/mem", O_RDWR | O_CLOEXEC);
  if (mem_fd < 0) {
    int err = errno;
    if (err == EACCES && prctl(PR_GET_DUMPABLE) == 0)
      fprintf(stderr,
              VHCA_PFX "cannot open %s: this process is not dumpable (it changed its user or "
                       "group, or is set-uid), so it cannot open its own /proc/self/mem, through "
                       "which fabricd reaches its memory. Call prctl(PR_SET_DUMPABLE, 1) first.\n",
              name);
    else
      fprintf(stderr, VHCA_PFX "cannot open %s: /proc/self/mem: %s\n", name, strerror(err));
    return err;
  }
  int daemon_rd = vhca_daemon_read_end(ctx->async_pipe[0]);
  if (daemon_rd < 0) {
    int err = errno;
    fprintf(stderr, VHCA_PFX "cannot open %s: reopening its event pipe through /proc/self/fd: %s\n",
            name, strerror(err));
    close(mem_fd);
    return err;
  }
  const int send[3] = {ctx->async_pipe[1], mem_fd, daemon_rd};
  int ret = vhca_cmd_fds(ctx, VHCA_CMD_OPEN_CONTEXT, &req, sizeof(req), send, 3, &rsp,
                         sizeof(rsp), fds, 2);
  close(mem_fd);
  close(daemon_rd);
  close(ctx->async_pipe[1]);
  ctx->async_pipe[1] = -1;
  if (!ret && (fds[0] < 0 || fds[1] < 0)) {
    if (fds[0] >= 0) close(fds[0]);
    if (fds[1] >= 0) close(fds[1]);
    ret = EPROTO;
  }
  if (ret) {
    fprintf(stderr, VHCA_PFX "fabricd refused to open %s: %s\n", name, strerror(ret));
    return ret;
  }
  ctx->doorbell_fd = fds[0];
  void *status = mmap(NULL, sizeof(*ctx->status), PROT_READ, MAP_SHARED, fds[1], 0);
  close(fds[1]);
  if (status == MAP_FAILED) return errno;
  ctx->status = status;
  ctx->vctx.context.num_comp_vectors = (int)rsp.num_comp_vectors;
  return 0;
}

static struct verbs_context *vhca_alloc_context(struct ibv_device *ibdev, int cmd_fd,
                                                void *private_data) {
  struct vhca_context *ctx = _verbs_init_and_alloc_context(
      ibdev, cmd_fd, sizeof(*ctx), (struct verbs_context *)offsetof(struct vhca_context, vctx), 0);
  if (!ctx) return NULL;
  ctx->sock = ctx->doorbell_fd = -1;
  ctx->async_pipe[0] = ctx->async_pipe[1] = -1;
  ctx->watch_stop[0] = ctx->watch_stop[1] = -1;
  pthread_mutex_init(&ctx->cmd_lock, NULL);
  pthread_mutex_init(&ctx->obj_lock, NULL);

  /* Generic libibverbs code writes kernel commands to cmd_fd; give it a
   * descriptor those writes fail on (EBADF) rather than the /dev/null node. */
  int null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (null_fd < 0) goto err;
  close(ctx->vctx.context.cmd_fd);
  ctx->vctx.context.cmd_fd = null_fd;

  /* Async events arrive on async_fd; a pipe keeps ibv_get_async_event
   * blocking (no events yet) instead of failing. */
  if (pipe2(ctx->async_pipe, O_CLOEXEC)) goto err;
  ctx->vctx.context.async_fd = ctx->async_pipe[0];

  int ret = open_engine(ctx, to_vdev(ibdev)->socket_path, ibdev->name);
  if (!ret) ret = vhca_start_watcher(ctx);
  if (ret) {
    errno = ret;
    goto err;
  }
  verbs_set_ops(&ctx->vctx, &vhca_ctx_ops);
  return &ctx->vctx;
err:;
  int saved = errno;
  vhca_free_context(&ctx->vctx.context);
  errno = saved;
  return NULL;
}

static const struct verbs_device_ops vhca_dev_ops = {
    .name = "vhca",
    .match_min_abi_version = 0,
    .match_max_abi_version = 0x7fffffff,
    .match_device = vhca_match_device,
    .alloc_device = vhca_alloc_device,
    .uninit_device = vhca_uninit_device,
    .alloc_context = vhca_alloc_context,
};

__attribute__((constructor)) static void vhca_register(void) {
  verbs_register_driver_34(&vhca_dev_ops);
}
