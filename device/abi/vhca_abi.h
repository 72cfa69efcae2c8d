/* The contract between the provider (libvhca, inside applications) and the
 * device engine (inside fabricd). One header for both sides; bump
 * VHCA_ABI_VERSION on any change. Everything here that crosses from the app to
 * the daemon is hostile input: the daemon copies it out and checks it first.
 *
 * Slow path: SOCK_SEQPACKET, one request -> one reply, fds by SCM_RIGHTS.
 * Fast path: shared-memory rings (memfds sealed against resize) + doorbell.
 */
#ifndef VHCA_ABI_H
#define VHCA_ABI_H

#include <stddef.h>
#include <stdint.h>
#include <infiniband/verbs.h>

#ifdef __cplusplus
extern "C" {
#define VHCA_STATIC_ASSERT(c, m) static_assert(c, m)
#else
#define VHCA_STATIC_ASSERT(c, m) _Static_assert(c, m)
#endif

#define VHCA_ABI_VERSION 9
#define VHCA_MAX_SGE 16
#define VHCA_MAX_INLINE (VHCA_MAX_SGE * 16)
#define VHCA_MAX_MSG 4096 /* largest slow-path message either way */
#define VHCA_DEFAULT_RUNTIME_DIR "/run/vfabric"
#define VHCA_RUNTIME_DIR_ENV "VFABRIC_RUNTIME_DIR"
/* File in class/infiniband/<ibdev>/ holding the absolute path of the device's
 * SEQPACKET socket; its presence is also how the provider recognises a vHCA. */
#define VHCA_SYSFS_SOCKET_ATTR "device/vfabric_socket"

/* ---------------------------------------------------------------- rings ---
 * Indices are free-running u32; slot = index & (entries - 1); entries is a
 * power of two. Each side owns one index and only ever reads the other. The
 * owner of an index publishes it with a release store after writing entries.
 */
struct vhca_ring_hdr { /* each side's index on its own cache line */
  uint32_t producer;
  uint32_t pad0[15];
  uint32_t consumer;
  uint32_t pad1[15];
  /* CQ: armed notification request (VHCA_CQ_ARM_*) written by the app; SQ/RQ: 0 */
  uint32_t arm;
  uint32_t arm_sn; /* bumped by the app on every arm so the engine sees re-arms */
  /* CQ: the arm_sn the engine last raised an event for (engine-written), so
   * the app knows whether an armed request is still pending. */
  uint32_t fired_sn;
  uint32_t pad2[13];
}; /* entries follow at offset sizeof(struct vhca_ring_hdr) */
VHCA_STATIC_ASSERT(sizeof(struct vhca_ring_hdr) == 192, "ring header layout");

enum { VHCA_CQ_ARM_NONE = 0, VHCA_CQ_ARM_NEXT = 1, VHCA_CQ_ARM_SOLICITED = 2 };

struct vhca_sge {
  uint64_t addr;
  uint32_t length;
  uint32_t lkey;
};
VHCA_STATIC_ASSERT(sizeof(struct vhca_sge) == 16, "sge layout");

/* Send WQE: mirrors ibv_send_wr without pointers. */
struct vhca_send_wqe {
  uint64_t wr_id;
  uint8_t opcode;      /* enum ibv_wr_opcode */
  uint8_t num_sge;     /* SGEs in sge[] (0 when inline) */
  uint16_t inline_len; /* bytes in inline_data when IBV_SEND_INLINE */
  uint32_t send_flags; /* enum ibv_send_flags */
  /* Network order, as the app gave it; LOCAL_INV and SEND_WITH_INV: the
   * R_Key to invalidate, host order (ibv_send_wr's invalidate_rkey). */
  uint32_t imm_data;
  uint32_t rkey;        /* BIND_MW: the window's new R_Key */
  uint64_t remote_addr; /* BIND_MW: the window's first address */
  uint64_t compare_add; /* BIND_MW: the window's length (0: unbind a type 1 window) */
  uint64_t swap;
  union {
    struct {
      uint32_t ah_handle; /* UD */
      uint32_t remote_qpn;
      uint32_t remote_qkey;
      uint32_t reserved;
    };
    struct {
      uint32_t mw_handle;
      uint32_t mr_lkey;   /* the region the window is bound to; 0 when unbinding */
      uint32_t access;    /* mw_access_flags */
      uint32_t reserved;
    } bind;
  };
  union {
    struct vhca_sge sge[VHCA_MAX_SGE];
    uint8_t inline_data[VHCA_MAX_INLINE];
  };
};
VHCA_STATIC_ASSERT(sizeof(struct vhca_send_wqe) == 320, "send wqe layout");

struct vhca_recv_wqe {
  uint64_t wr_id;
  uint32_t num_sge;
  uint32_t reserved;
  struct vhca_sge sge[VHCA_MAX_SGE];
};
VHCA_STATIC_ASSERT(sizeof(struct vhca_recv_wqe) == 272, "recv wqe layout");

/* CQE: what poll_cq copies into struct ibv_wc. */
struct vhca_cqe {
  uint64_t wr_id;
  uint32_t status; /* enum ibv_wc_status */
  uint32_t opcode; /* enum ibv_wc_opcode */
  uint32_t vendor_err;
  uint32_t byte_len;
  uint32_t imm_data; /* network order */
  uint32_t qp_num;
  uint32_t src_qp;
  uint32_t wc_flags;
  uint16_t pkey_index;
  uint16_t slid;
  uint8_t sl;
  uint8_t dlid_path_bits;
  uint8_t reserved[2];
  /* Emulated time (ns since fabricd started) when the engine wrote the CQE:
   * the device clock of ibv_wc_read_completion_ts (hca_core_clock 1 GHz). */
  uint64_t completion_ts;
  uint8_t reserved2[8];
};
VHCA_STATIC_ASSERT(sizeof(struct vhca_cqe) == 64, "cqe layout");
VHCA_STATIC_ASSERT(offsetof(struct vhca_cqe, completion_ts) == 48, "cqe timestamp alignment");

static inline uint64_t vhca_ring_bytes(uint32_t entries, uint32_t entry_size) {
  return sizeof(struct vhca_ring_hdr) + (uint64_t)entries * entry_size;
}

/* Engine status page, mapped read-only by every app. The engine sets
 * `sleeping` before it blocks; a producer that sees it set after publishing
 * its index (with a full fence in between) writes 1 to the doorbell eventfd. */
struct vhca_engine_status {
  uint32_t sleeping;
  uint32_t abi_version;
};

/* ------------------------------------------------------------ slow path --- */
enum vhca_cmd {
  VHCA_CMD_OPEN_CONTEXT = 1, /* reply fds: [doorbell eventfd, status memfd (ro)] */
  VHCA_CMD_QUERY_DEVICE,
  VHCA_CMD_QUERY_PORT,
  VHCA_CMD_ALLOC_PD,
  VHCA_CMD_DEALLOC_PD,
  VHCA_CMD_REG_MR,
  VHCA_CMD_DEREG_MR,
  VHCA_CMD_CREATE_CQ, /* reply fds: [ring memfd] */
  VHCA_CMD_DESTROY_CQ,
  VHCA_CMD_CREATE_QP, /* reply fds: [sq memfd, rq memfd] */
  VHCA_CMD_MODIFY_QP,
  VHCA_CMD_QUERY_QP,
  VHCA_CMD_DESTROY_QP,
  VHCA_CMD_CREATE_SRQ, /* reply fds: [srq ring memfd] (recv WQEs, like an RQ) */
  VHCA_CMD_MODIFY_SRQ,
  VHCA_CMD_QUERY_SRQ,
  VHCA_CMD_DESTROY_SRQ,
  VHCA_CMD_CREATE_AH,
  VHCA_CMD_DESTROY_AH,
  VHCA_CMD_RESIZE_CQ, /* reply fds: [new ring memfd] on PREPARE */
  VHCA_CMD_REREG_MR,
  VHCA_CMD_ALLOC_MW,
  VHCA_CMD_DEALLOC_MW, /* struct vhca_handle_req */
  VHCA_CMD_QUERY_CLOCK, /* struct vhca_req_hdr */
  VHCA_CMD_ATTACH_MCAST, /* struct vhca_mcast_req (ABI v7) */
  VHCA_CMD_DETACH_MCAST, /* struct vhca_mcast_req */
  VHCA_CMD_MAX
};

struct vhca_req_hdr {
  uint32_t cmd;
  uint32_t seq;
  uint32_t length; /* whole message, header included */
  uint32_t abi_version;
};
struct vhca_rsp_hdr {
  uint32_t cmd;
  uint32_t seq;
  uint32_t length;
  int32_t status; /* 0 or a positive errno, as the verb returns it */
};

/* Request fds: [async event pipe, write end; /proc/self/mem, O_RDWR; async
 * event pipe, a read end of the daemon's own]. The daemon writes one struct
 * vhca_async_event per affiliated/unaffiliated event into the pipe; the
 * provider's async_fd is the read end, so ibv_get_async_event reads them
 * unchanged. The mem file is the only way the daemon reaches the app's
 * memory: it is bound to the address space the app had when it opened it, and
 * dies with it at exec or exit (ABI v3). The second read end is a file
 * description of its own (opened through /proc/self/fd, O_NONBLOCK): when an
 * object is destroyed the daemon takes its unread events back out of the
 * pipe, as uverbs discards them, so the app never reads a record naming an
 * object it freed (ABI v9). */
struct vhca_open_context_req {
  struct vhca_req_hdr hdr;
};

/* Layout of the kernel's ib_uverbs_async_event_desc, which libibverbs'
 * ibv_get_async_event reads from async_fd: `element` is the user_handle given
 * when the QP/CQ/SRQ was created, or the port number for port events. */
struct vhca_async_event {
  uint64_t element;
  uint32_t event_type; /* enum ibv_event_type */
  uint32_t reserved;
};
VHCA_STATIC_ASSERT(sizeof(struct vhca_async_event) == 16, "async event layout");

/* Layout of ib_uverbs_comp_event_desc, which ibv_get_cq_event reads from a
 * completion channel fd: the user_handle of the CQ (its struct ibv_cq *). */
struct vhca_comp_event {
  uint64_t cq_handle;
};
struct vhca_open_context_rsp {
  struct vhca_rsp_hdr hdr;
  uint32_t num_comp_vectors;
  uint32_t reserved;
};

struct vhca_query_device_rsp {
  struct vhca_rsp_hdr hdr;
  struct ibv_device_attr attr;
};

struct vhca_query_port_req {
  struct vhca_req_hdr hdr;
  uint32_t port_num;
  uint32_t reserved;
};
struct vhca_query_port_rsp {
  struct vhca_rsp_hdr hdr;
  struct ibv_port_attr attr;
};

/* DEALLOC_PD, DEREG_MR, DESTROY_CQ, DESTROY_QP, QUERY_SRQ, DESTROY_SRQ, DESTROY_AH,
 * DEALLOC_MW */
struct vhca_handle_req {
  struct vhca_req_hdr hdr;
  uint32_t handle;
  uint32_t reserved;
};
/* DESTROY_QP, DESTROY_SRQ: async events written for the object, so the
 * provider can wait until the app has acknowledged them all (as uverbs does). */
struct vhca_destroy_qp_rsp {
  struct vhca_rsp_hdr hdr;
  uint32_t events_reported;
  uint32_t reserved;
};
struct vhca_destroy_cq_rsp {
  struct vhca_rsp_hdr hdr;
  uint32_t comp_events_reported;
  uint32_t async_events_reported;
};

/* The device clock of ibv_query_rt_values_ex: what CQE completion_ts holds. */
struct vhca_query_clock_rsp {
  struct vhca_rsp_hdr hdr;
  uint64_t now_ns;
};

struct vhca_alloc_pd_rsp {
  struct vhca_rsp_hdr hdr;
  uint32_t pd_handle;
  uint32_t reserved;
};

struct vhca_reg_mr_req {
  struct vhca_req_hdr hdr;
  uint32_t pd_handle;
  uint32_t access; /* enum ibv_access_flags */
  uint64_t addr;
  uint64_t length;
  uint64_t iova; /* the address keys name it by (ibv_reg_mr_iova); ZERO_BASED: ignored, 0 */
};
struct vhca_reg_mr_rsp {
  struct vhca_rsp_hdr hdr;
  uint32_t mr_handle;
  uint32_t lkey;
  uint32_t rkey;
  uint32_t reserved;
};

/* flags: IBV_REREG_MR_CHANGE_*; the MR keeps its handle and keys. */
struct vhca_rereg_mr_req {
  struct vhca_req_hdr hdr;
  uint32_t mr_handle;
  uint32_t flags;
  uint32_t pd_handle; /* with CHANGE_PD */
  uint32_t access;    /* with CHANGE_ACCESS */
  uint64_t addr;      /* with CHANGE_TRANSLATION */
  uint64_t length;
};
struct vhca_rereg_mr_rsp {
  struct vhca_rsp_hdr hdr;
  uint32_t lkey;
  uint32_t rkey;
};

/* A window starts unbound: a type 1 window valid with no memory, a type 2
 * window free (IBA 10.6.7). */
struct vhca_alloc_mw_req {
  struct vhca_req_hdr hdr;
  uint32_t pd_handle;
  uint32_t type; /* enum ibv_mw_type */
};
struct vhca_alloc_mw_rsp {
  struct vhca_rsp_hdr hdr;
  uint32_t mw_handle;
  uint32_t rkey;
};

/* Request fds: [completion channel pipe, write end; a read end of the
 * daemon's own, as for the async pipe] when has_channel. */
struct vhca_create_cq_req {
  struct vhca_req_hdr hdr;
  uint32_t cqe; /* requested entries */
  uint32_t comp_vector;
  uint64_t user_handle; /* the app's struct ibv_cq *, echoed in events */
  uint32_t has_channel;
  uint32_t reserved;
};
struct vhca_create_cq_rsp {
  struct vhca_rsp_hdr hdr;
  uint32_t cq_handle;
  uint32_t entries; /* ring entries (power of two); cqe reported = entries - 1 */
};

/* Two phases, so a provider that cannot map the new ring keeps the old one:
 * PREPARE makes the new ring (its fd in the reply), COMMIT copies the unread
 * CQEs into it at the same free-running indices with the arm state and makes
 * it the CQ's ring (the provider swaps mappings, keeps its consumer index),
 * ABORT drops it. */
enum { VHCA_RESIZE_CQ_PREPARE = 0, VHCA_RESIZE_CQ_COMMIT = 1, VHCA_RESIZE_CQ_ABORT = 2 };
struct vhca_resize_cq_req {
  struct vhca_req_hdr hdr;
  uint32_t cq_handle;
  uint32_t cqe;   /* requested entries (PREPARE) */
  uint32_t phase; /* VHCA_RESIZE_CQ_* */
  uint32_t reserved;
};
struct vhca_resize_cq_rsp {
  struct vhca_rsp_hdr hdr;
  uint32_t entries; /* the new ring's entries (power of two); cqe reported = entries - 1 */
  uint32_t reserved;
};

struct vhca_create_qp_req {
  struct vhca_req_hdr hdr;
  uint32_t pd_handle;
  uint32_t send_cq_handle;
  uint32_t recv_cq_handle;
  uint32_t srq_handle; /* 0 = none */
  uint32_t qp_type;    /* enum ibv_qp_type */
  uint32_t sq_sig_all;
  struct ibv_qp_cap cap;
  uint32_t create_flags; /* IBV_QP_CREATE_BLOCK_SELF_MCAST_LB only (ABI v7) */
  uint64_t user_handle; /* the app's struct ibv_qp *, echoed in async events */
};
VHCA_STATIC_ASSERT(sizeof(struct vhca_create_qp_req) == 72, "create_qp layout");
struct vhca_create_qp_rsp {
  struct vhca_rsp_hdr hdr;
  uint32_t qp_handle;
  uint32_t qp_num;
  uint32_t sq_entries; /* ring sizes (power of two) */
  uint32_t rq_entries;
  struct ibv_qp_cap cap; /* what was actually granted */
};

struct vhca_modify_qp_req {
  struct vhca_req_hdr hdr;
  uint32_t qp_handle;
  uint32_t attr_mask;
  struct ibv_qp_attr attr;
};

struct vhca_query_qp_req {
  struct vhca_req_hdr hdr;
  uint32_t qp_handle;
  uint32_t attr_mask;
};
struct vhca_query_qp_rsp {
  struct vhca_rsp_hdr hdr;
  struct ibv_qp_attr attr;
  struct ibv_qp_init_attr_caps {
    struct ibv_qp_cap cap;
    uint32_t sq_sig_all;
    uint32_t qp_type;
  } init;
};

struct vhca_create_srq_req {
  struct vhca_req_hdr hdr;
  uint32_t pd_handle;
  uint32_t reserved;
  uint64_t user_handle; /* the app's struct ibv_srq *, echoed in async events */
  struct ibv_srq_attr attr; /* max_wr, max_sge, srq_limit */
};
struct vhca_create_srq_rsp {
  struct vhca_rsp_hdr hdr;
  uint32_t srq_handle;
  uint32_t entries; /* ring size (power of two) */
  struct ibv_srq_attr attr; /* what was granted */
};

struct vhca_modify_srq_req {
  struct vhca_req_hdr hdr;
  uint32_t srq_handle;
  uint32_t attr_mask; /* enum ibv_srq_attr_mask */
  struct ibv_srq_attr attr;
};

struct vhca_query_srq_rsp {
  struct vhca_rsp_hdr hdr;
  struct ibv_srq_attr attr;
};

/* Address handles live in the engine (like rxe's AH pool): a UD WQE names
 * one by ah_handle, and the engine checks it belongs to the QP's PD. */
struct vhca_create_ah_req {
  struct vhca_req_hdr hdr;
  uint32_t pd_handle;
  uint32_t reserved;
  struct ibv_ah_attr attr;
};
struct vhca_create_ah_rsp {
  struct vhca_rsp_hdr hdr;
  uint32_t ah_handle;
  uint32_t reserved;
};

/* ibv_attach_mcast / ibv_detach_mcast: a UD QP joins or leaves the group
 * named by the multicast GID (and, on InfiniBand, its MLID). */
struct vhca_mcast_req {
  struct vhca_req_hdr hdr;
  uint32_t qp_handle;
  uint16_t lid;
  uint16_t reserved;
  uint8_t gid[16];
};

struct vhca_empty_rsp {
  struct vhca_rsp_hdr hdr;
};

VHCA_STATIC_ASSERT(sizeof(struct vhca_modify_qp_req) <= VHCA_MAX_MSG, "message fits");

#ifdef __cplusplus
}
#endif
#endif /* VHCA_ABI_H */
