/* /dev/infiniband/rdma_cm for unmodified librdmacm, without the kernel's
 * rdma_ucm: what the preload shim (device/preload/ucma.c) and fabricd's
 * connection manager (daemon/cm/) say to each other.
 *
 * librdmacm write()s commands in the kernel's format (rdma/rdma_user_cm.h:
 * a header {cmd, in, out} and `in` bytes) and expects the response copied to
 * the pointer inside the command; events are fetched with the GET_EVENT
 * command, and poll() on the fd says whether one is waiting. The shim keeps
 * that contract with two sockets per open():
 *
 *  - the command socket (SOCK_SEQPACKET, private to the shim): each write()
 *    becomes one message, the command's bytes as the app wrote them (header
 *    included); fabricd answers with one vhca_ucma_reply and the bytes the
 *    kernel would have copied to `response`. Two commands carry more than
 *    their own bytes: SET_OPTION is followed by its optval, and MIGRATE_ID
 *    names the destination channel by vhca_ucma_migrate, not by fd.
 *  - the event socket (SOCK_STREAM, the fd the app gets): fabricd writes one
 *    byte per queued event, so poll() and blocking are the socket's own. A
 *    GET_EVENT first takes a byte, then fetches the event on the command
 *    socket. The events stay queued in fabricd until fetched, so a
 *    DESTROY_ID purges the ones never delivered, as the kernel does (a byte
 *    whose event was purged fetches VHCA_UCMA_STALE: the shim waits again).
 *
 * When fabricd stops, it writes VHCA_UCMA_REMOVAL and then a whole
 * rdma_ucm_event_resp to the event socket for each id on a vHCA:
 * RDMA_CM_EVENT_DEVICE_REMOVAL, which the shim's GET_EVENT returns as it
 * reads it (the command socket is gone by then), as the kernel reports a
 * device that goes away.
 *
 * The shim's first message is VHCA_UCMA_OPEN; the reply carries the event
 * socket (SCM_RIGHTS) and the channel's name, which MIGRATE_ID needs.
 */
#ifndef VHCA_UCMA_H
#define VHCA_UCMA_H

#include <stdint.h>

#define VHCA_UCMA_ABI_VERSION 4u       /* class/misc/rdma_cm/abi_version */
#define VHCA_UCMA_OPEN 0x56460001u     /* not an rdma_ucm command number */
#define VHCA_UCMA_MAX_CMD 1024u        /* command bytes plus optval */
#define VHCA_UCMA_MAX_OPTLEN 512u
#define VHCA_UCMA_STALE 0x56460002u    /* reply.error: the event byte's event is gone */
#define VHCA_UCMA_EVENT 'e'            /* event socket: an event is queued in fabricd */
#define VHCA_UCMA_REMOVAL 'R'          /* event socket: a DEVICE_REMOVAL event follows */

struct vhca_ucma_reply {
  int32_t error; /* 0 or a positive errno, as the kernel's write() fails */
  uint32_t len;  /* response bytes that follow */
};

struct vhca_ucma_open_reply {
  int32_t error;
  uint32_t reserved;
  uint64_t channel;
  uint64_t secret; /* proves to fabricd that a MIGRATE_ID's caller owns the channel */
};

/* MIGRATE_ID as the shim forwards it, on the destination channel (the one
 * the app wrote to): the kernel's command names the id's current channel by
 * fd, which means nothing outside the process. */
struct vhca_ucma_migrate {
  uint32_t cmd; /* RDMA_USER_CM_CMD_MIGRATE_ID */
  uint16_t in;
  uint16_t out;
  uint64_t response;
  uint32_t id;
  uint32_t reserved;
  uint64_t channel;
  uint64_t secret;
};

#endif
