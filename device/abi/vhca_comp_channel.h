/* A completion channel on a vHCA. libibverbs creates channels with a kernel
 * command our contexts cannot execute, so the preload shim (libvhca-preload)
 * makes them itself: a pipe whose read end is channel.fd, exactly where
 * ibv_get_cq_event reads struct vhca_comp_event. The write end stays here
 * until the provider hands a copy of it to fabricd with each CQ that uses the
 * channel. Shared by the shim and the provider; both are C. */
#ifndef VHCA_COMP_CHANNEL_H
#define VHCA_COMP_CHANNEL_H

#include <stdint.h>
#include <infiniband/verbs.h>

#define VHCA_COMP_CHANNEL_MAGIC 0x76636368u /* "vcch" */

struct vhca_comp_channel {
  struct ibv_comp_channel channel; /* must be first: the app only sees this */
  uint32_t magic;
  int write_fd; /* the pipe's write end (O_CLOEXEC | O_NONBLOCK) */
};

#endif /* VHCA_COMP_CHANNEL_H */
