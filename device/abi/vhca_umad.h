/* A umad port (/dev/infiniband/umadN) of a vHCA, without the kernel's
 * ib_umad. The preload shim turns open() of the node into a SOCK_SEQPACKET
 * connection to fabricd's socket for that port, so what the app read()s and
 * poll()s is the socket itself: every message fabricd sends is exactly what
 * the kernel's read() returns (struct vhca_umad_hdr, then the MAD). What the
 * app write()s and its agent ioctls reach fabricd wrapped in a
 * vhca_umad_msg. Shared by the shim (C) and fabricd (C++).
 *
 * The kernel's layouts (rdma/ib_user_mad.h, ABI 5 with P_Key indices) are
 * declared here rather than included: they are the contract, and the
 * static_asserts pin them. */
#ifndef VHCA_UMAD_H
#define VHCA_UMAD_H

#include <linux/ioctl.h>
#include <stdint.h>

#define VHCA_UMAD_ABI_VERSION 5 /* class/infiniband_mad/abi_version */
#define VHCA_UMAD_MAX_AGENTS 32 /* per open port, as ib_umad */
#define VHCA_MAD_SIZE 256       /* no RMPP: every MAD is one 256-byte datagram */

/* ib_user_mad_hdr: addresses and status of one MAD (network order where
 * the kernel's is). On receive, length is the header plus the MAD. */
struct vhca_umad_hdr {
  uint32_t id;         /* agent */
  uint32_t status;     /* 0, or ETIMEDOUT when a request got no response */
  uint32_t timeout_ms; /* send: how long to wait for the response */
  uint32_t retries;
  uint32_t length;
  uint32_t qpn;        /* big endian: 0 (SMI) or 1 (GSI) */
  uint32_t qkey;       /* big endian */
  uint16_t lid;        /* big endian: DLID on send, SLID on receive */
  uint8_t sl;
  uint8_t path_bits;
  uint8_t grh_present;
  uint8_t gid_index;
  uint8_t hop_limit;
  uint8_t traffic_class;
  uint8_t gid[16];
  uint32_t flow_label; /* big endian */
  uint16_t pkey_index;
  uint8_t reserved[6];
};

/* ib_user_mad_reg_req2 (IB_USER_MAD_REGISTER_AGENT2). */
struct vhca_umad_reg_req2 {
  uint32_t id;
  uint32_t qpn;
  uint8_t mgmt_class;
  uint8_t mgmt_class_version;
  uint16_t res;
  uint32_t flags;
  uint64_t method_mask[2];
  uint32_t oui;
  uint8_t rmpp_version;
  uint8_t reserved[3];
};

/* ib_user_mad_reg_req (IB_USER_MAD_REGISTER_AGENT, the original). */
struct vhca_umad_reg_req {
  uint32_t id;
  uint32_t method_mask[4];
  uint8_t qpn;
  uint8_t mgmt_class;
  uint8_t mgmt_class_version;
  uint8_t oui[3];
  uint8_t rmpp_version;
};

#define VHCA_UMAD_IOCTL_MAGIC 0x1b
#define VHCA_UMAD_REGISTER_AGENT _IOWR(VHCA_UMAD_IOCTL_MAGIC, 1, struct vhca_umad_reg_req)
#define VHCA_UMAD_UNREGISTER_AGENT _IOW(VHCA_UMAD_IOCTL_MAGIC, 2, uint32_t)
#define VHCA_UMAD_ENABLE_PKEY _IO(VHCA_UMAD_IOCTL_MAGIC, 3)
#define VHCA_UMAD_REGISTER_AGENT2 _IOWR(VHCA_UMAD_IOCTL_MAGIC, 4, struct vhca_umad_reg_req2)

/* Shim -> fabricd. */
enum vhca_umad_op {
  VHCA_UMAD_OP_REGISTER = 1,   /* body: struct vhca_umad_agent */
  VHCA_UMAD_OP_UNREGISTER = 2, /* no body */
  VHCA_UMAD_OP_SEND = 3,       /* body: the app's write(): vhca_umad_hdr + MAD */
};

struct vhca_umad_msg {
  uint32_t op;
  uint32_t agent; /* 0..VHCA_UMAD_MAX_AGENTS-1, chosen by the shim */
};

/* What an agent was registered for, as the shim checked it. */
struct vhca_umad_agent {
  uint32_t qpn; /* 0 or 1 */
  uint8_t mgmt_class;
  uint8_t mgmt_class_version;
  uint8_t rmpp_version;
  uint8_t reserved;
  uint64_t method_mask[2];
  uint32_t oui;
  uint32_t reserved2;
};

#ifdef __cplusplus
static_assert(sizeof(struct vhca_umad_hdr) == 64, "ib_user_mad_hdr");
static_assert(sizeof(struct vhca_umad_reg_req2) == 40, "ib_user_mad_reg_req2");
static_assert(sizeof(struct vhca_umad_reg_req) == 28, "ib_user_mad_reg_req");
static_assert(sizeof(struct vhca_umad_agent) == 32, "vhca_umad_agent");
#else
_Static_assert(sizeof(struct vhca_umad_hdr) == 64, "ib_user_mad_hdr");
_Static_assert(sizeof(struct vhca_umad_reg_req2) == 40, "ib_user_mad_reg_req2");
_Static_assert(sizeof(struct vhca_umad_reg_req) == 28, "ib_user_mad_reg_req");
#endif

#endif /* VHCA_UMAD_H */
