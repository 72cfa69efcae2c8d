/* Slow path: SOCK_SEQPACKET request/reply with fabricd. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "vhca.h"

int vhca_connect(const char *path) {
  struct sockaddr_un addr = {.sun_family = AF_UNIX};
  if (strlen(path) >= sizeof(addr.sun_path)) {
    errno = ENAMETOOLONG;
    return -1;
  }
  strcpy(addr.sun_path, path);
  int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  if (connect(fd, (struct sockaddr *)&addr, sizeof(addr))) {
    int err = errno;
    close(fd);
    errno = err;
    return -1;
  }
  return fd;
}

static void close_fds(int *fds, int nfds) {
  for (int i = 0; i < nfds; i++) {
    if (fds[i] >= 0) close(fds[i]);
    fds[i] = -1;
  }
}

static int recv_reply(int sock, void *rsp, size_t rsp_len, int *fds, int nfds) {
  union {
    char buf[CMSG_SPACE(sizeof(int) * 4)];
    struct cmsghdr align;
  } control;
  struct iovec iov = {.iov_base = rsp, .iov_len = rsp_len};
  struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf,
                       .msg_controllen = sizeof(control.buf)};
  ssize_t n;
  do n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
  while (n < 0 && errno == EINTR);
  if (n <= 0) return EIO; /* daemon gone */

  int got = 0;
  for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    int count = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
    int *in = (int *)CMSG_DATA(c);
    for (int i = 0; i < count; i++) {
      if (got < nfds)
        fds[got++] = in[i];
      else
        close(in[i]);
    }
  }
  for (int i = got; i < nfds; i++) fds[i] = -1;
  const struct vhca_rsp_hdr *hdr = rsp;
  if ((size_t)n < sizeof(*hdr) || (msg.msg_flags & MSG_TRUNC)) goto bad;
  if (hdr->status) goto status; /* errors carry only the header */
  if ((size_t)n != rsp_len) goto bad;
  return 0;
status:
  close_fds(fds, nfds);
  return hdr->status > 0 ? hdr->status : EIO;
bad:
  close_fds(fds, nfds);
  return EPROTO;
}

static ssize_t send_request(int sock, void *req, size_t req_len, const int *send_fds,
                            int nsend) {
  union {
    char buf[CMSG_SPACE(sizeof(int) * 3)];
    struct cmsghdr align;
  } control;
  struct iovec iov = {.iov_base = req, .iov_len = req_len};
  struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
  if (nsend > 0 && nsend <= 3) {
    memset(&control, 0, sizeof(control));
    msg.msg_control = control.buf;
    msg.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)nsend);
    struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)nsend);
    memcpy(CMSG_DATA(c), send_fds, sizeof(int) * (size_t)nsend);
  }
  ssize_t n;
  do n = sendmsg(sock, &msg, MSG_NOSIGNAL);
  while (n < 0 && errno == EINTR);
  return n;
}

int vhca_cmd(struct vhca_context *ctx, uint32_t cmd, void *req, size_t req_len, void *rsp,
             size_t rsp_len, int *fds, int nfds) {
  return vhca_cmd_fds(ctx, cmd, req, req_len, NULL, 0, rsp, rsp_len, fds, nfds);
}

int vhca_cmd_fds(struct vhca_context *ctx, uint32_t cmd, void *req, size_t req_len,
                 const int *send_fds, int nsend, void *rsp, size_t rsp_len, int *fds, int nfds) {
  struct vhca_req_hdr *hdr = req;
  pthread_mutex_lock(&ctx->cmd_lock);
  hdr->cmd = cmd;
  hdr->seq = ++ctx->seq;
  hdr->length = (uint32_t)req_len;
  hdr->abi_version = VHCA_ABI_VERSION;
  int ret;
  ssize_t n = send_request(ctx->sock, req, req_len, send_fds, nsend);
  if (n != (ssize_t)req_len) {
    for (int i = 0; i < nfds; i++) fds[i] = -1;
    ret = EIO;
  } else {
    ret = recv_reply(ctx->sock, rsp, rsp_len, fds, nfds);
    const struct vhca_rsp_hdr *rh = rsp;
    if (!ret && (rh->seq != hdr->seq || rh->cmd != cmd)) {
      close_fds(fds, nfds);
      ret = EPROTO;
    }
  }
  pthread_mutex_unlock(&ctx->cmd_lock);
  return ret;
}

int vhca_daemon_read_end(int read_fd) {
  char path[32];
  snprintf(path, sizeof(path), "/proc/self/fd/%d", read_fd);
  return open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
}
