/* Slow path: SOCK_SEQPACKET request/reply with fabricd. */
#define _GNU_SOURCE
#include <errno.h>
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
  const struct vhca_rsp_hdr *hdr = rsp;
  if ((size_t)n < sizeof(*hdr) || (msg.msg_flags & MSG_TRUNC)) goto bad;
  if (hdr->status) goto status; /* errors carry only the header */
  if ((size_t)n != rsp_len || got != nfds) goto bad;
  return 0;
status:
  for (int i = 0; i < got; i++) close(fds[i]);
  return hdr->status > 0 ? hdr->status : EIO;
bad:
  for (int i = 0; i < got; i++) close(fds[i]);
  return EPROTO;
}

int vhca_cmd(struct vhca_context *ctx, uint32_t cmd, void *req, size_t req_len, void *rsp,
             size_t rsp_len, int *fds, int nfds) {
  struct vhca_req_hdr *hdr = req;
  pthread_mutex_lock(&ctx->cmd_lock);
  hdr->cmd = cmd;
  hdr->seq = ++ctx->seq;
  hdr->length = (uint32_t)req_len;
  hdr->abi_version = VHCA_ABI_VERSION;
  int ret;
  ssize_t n;
  do n = send(ctx->sock, req, req_len, MSG_NOSIGNAL);
  while (n < 0 && errno == EINTR);
  if (n != (ssize_t)req_len) {
    ret = EIO;
  } else {
    ret = recv_reply(ctx->sock, rsp, rsp_len, fds, nfds);
    const struct vhca_rsp_hdr *rh = rsp;
    if (!ret && (rh->seq != hdr->seq || rh->cmd != cmd)) ret = EPROTO;
  }
  pthread_mutex_unlock(&ctx->cmd_lock);
  return ret;
}
