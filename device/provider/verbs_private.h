/* The slice of libibverbs' private provider ABI (IBVERBS_PRIVATE_34,
 * rdma-core 44) that libvhca uses. libibverbs-dev does not ship driver.h, so
 * the layouts are declared here and pinned with static_asserts: if Debian
 * moves to a new private ABI, the build fails instead of the app crashing. */
#ifndef VHCA_VERBS_PRIVATE_H
#define VHCA_VERBS_PRIVATE_H

#include <infiniband/verbs.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <time.h>

struct vhca_list_node {
  struct vhca_list_node *next, *prev;
};

struct verbs_match_ent; /* we match with match_device, never a table */

struct verbs_sysfs_dev {
  struct vhca_list_node entry;
  void *provider_data;
  const struct verbs_match_ent *match;
  unsigned int flags;
  char sysfs_name[IBV_SYSFS_NAME_MAX];
  dev_t sysfs_cdev;
  char ibdev_name[IBV_SYSFS_NAME_MAX];
  char ibdev_path[IBV_SYSFS_PATH_MAX];
  char modalias[512];
  uint64_t node_guid;
  uint32_t driver_id;
  enum ibv_node_type node_type;
  int ibdev_idx;
  uint32_t num_ports;
  uint32_t abi_ver;
  struct timespec time_created;
};
_Static_assert(sizeof(struct verbs_sysfs_dev) == 992, "verbs_sysfs_dev layout (ABI 34)");

struct verbs_device;
struct verbs_device_ops {
  const char *name;
  uint32_t match_min_abi_version;
  uint32_t match_max_abi_version;
  const struct verbs_match_ent *match_table;
  const struct verbs_device_ops **static_providers;
  bool (*match_device)(struct verbs_sysfs_dev *sysfs_dev);
  struct verbs_context *(*alloc_context)(struct ibv_device *device, int cmd_fd, void *private_data);
  struct verbs_context *(*import_context)(struct ibv_device *device, int cmd_fd);
  struct verbs_device *(*alloc_device)(struct verbs_sysfs_dev *sysfs_dev);
  void (*uninit_device)(struct verbs_device *device);
};

struct verbs_device {
  struct ibv_device device; /* must be first */
  const struct verbs_device_ops *ops;
  atomic_int refcount;
  struct vhca_list_node entry;
  struct verbs_sysfs_dev *sysfs;
  uint64_t core_support;
};
_Static_assert(sizeof(struct verbs_device) == 712, "verbs_device layout (ABI 34)");
_Static_assert(offsetof(struct verbs_device, ops) == 664, "verbs_device.ops offset (ABI 34)");

enum ibv_mr_type { IBV_MR_TYPE_MR, IBV_MR_TYPE_NULL_MR, IBV_MR_TYPE_IMPORTED_MR, IBV_MR_TYPE_DMABUF_MR };
struct verbs_mr {
  struct ibv_mr ibv_mr;
  enum ibv_mr_type mr_type;
  int access;
};

/* verbs_qp.comp_mask: ibv_qp_to_qp_ex returns &qp_ex only with VERBS_QP_EX. */
enum verbs_qp_mask { VERBS_QP_XRCD = 1 << 0, VERBS_QP_EX = 1 << 1 };

struct verbs_xrcd;
struct verbs_qp {
  union {
    struct ibv_qp qp;
    struct ibv_qp_ex qp_ex;
  };
  uint32_t comp_mask;
  struct verbs_xrcd *xrcd;
};
_Static_assert(sizeof(struct verbs_qp) == 368, "verbs_qp layout (ABI 34)");

struct verbs_cq {
  union {
    struct ibv_cq cq;
    struct ibv_cq_ex cq_ex;
  };
};

/* 76 entry points in alphabetical order; we fill the ones we implement and
 * libibverbs' defaults answer EOPNOTSUPP for the rest. */
struct verbs_context_ops {
  void *advise_mr, *alloc_dm;
  struct ibv_mw *(*alloc_mw)(struct ibv_pd *pd, enum ibv_mw_type type);
  void *alloc_null_mr, *alloc_parent_domain;
  struct ibv_pd *(*alloc_pd)(struct ibv_context *context);
  void *alloc_td, *async_event, *attach_counters_point_flow;
  int (*attach_mcast)(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid);
  int (*bind_mw)(struct ibv_qp *qp, struct ibv_mw *mw, struct ibv_mw_bind *mw_bind);
  void *close_xrcd, *cq_event;
  struct ibv_ah *(*create_ah)(struct ibv_pd *pd, struct ibv_ah_attr *attr);
  void *create_counters;
  struct ibv_cq *(*create_cq)(struct ibv_context *context, int cqe,
                              struct ibv_comp_channel *channel, int comp_vector);
  struct ibv_cq_ex *(*create_cq_ex)(struct ibv_context *context, struct ibv_cq_init_attr_ex *init_attr);
  void *create_flow, *create_flow_action_esp;
  struct ibv_qp *(*create_qp)(struct ibv_pd *pd, struct ibv_qp_init_attr *attr);
  struct ibv_qp *(*create_qp_ex)(struct ibv_context *context, struct ibv_qp_init_attr_ex *qp_init_attr_ex);
  void *create_rwq_ind_table;
  struct ibv_srq *(*create_srq)(struct ibv_pd *pd, struct ibv_srq_init_attr *attr);
  void *create_srq_ex, *create_wq;
  int (*dealloc_mw)(struct ibv_mw *mw);
  int (*dealloc_pd)(struct ibv_pd *pd);
  void *dealloc_td;
  int (*dereg_mr)(struct verbs_mr *vmr);
  int (*destroy_ah)(struct ibv_ah *ah);
  void *destroy_counters;
  int (*destroy_cq)(struct ibv_cq *cq);
  void *destroy_flow, *destroy_flow_action;
  int (*destroy_qp)(struct ibv_qp *qp);
  void *destroy_rwq_ind_table;
  int (*destroy_srq)(struct ibv_srq *srq);
  void *destroy_wq;
  int (*detach_mcast)(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid);
  void (*free_context)(struct ibv_context *context);
  void *free_dm, *get_srq_num, *import_dm, *import_mr, *import_pd, *modify_cq,
      *modify_flow_action_esp;
  int (*modify_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask);
  void *modify_qp_rate_limit;
  int (*modify_srq)(struct ibv_srq *srq, struct ibv_srq_attr *attr, int attr_mask);
  void *modify_wq, *open_qp, *open_xrcd;
  int (*poll_cq)(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc);
  int (*post_recv)(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr);
  int (*post_send)(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr);
  void *post_srq_ops;
  int (*post_srq_recv)(struct ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr);
  int (*query_device_ex)(struct ibv_context *context,
                         const struct ibv_query_device_ex_input *input,
                         struct ibv_device_attr_ex *attr, size_t attr_size);
  void *query_ece;
  int (*query_port)(struct ibv_context *context, uint8_t port_num,
                    struct ibv_port_attr *port_attr);
  int (*query_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask,
                  struct ibv_qp_init_attr *init_attr);
  void *query_qp_data_in_order;
  int (*query_rt_values)(struct ibv_context *context, struct ibv_values_ex *values);
  int (*query_srq)(struct ibv_srq *srq, struct ibv_srq_attr *attr);
  void *read_counters, *reg_dm_mr, *reg_dmabuf_mr;
  struct ibv_mr *(*reg_mr)(struct ibv_pd *pd, void *addr, size_t length, uint64_t hca_va,
                           int access);
  int (*req_notify_cq)(struct ibv_cq *cq, int solicited_only);
  int (*rereg_mr)(struct verbs_mr *vmr, int flags, struct ibv_pd *pd, void *addr, size_t length, int access);
  int (*resize_cq)(struct ibv_cq *cq, int cqe);
  void *set_ece, *unimport_dm, *unimport_mr, *unimport_pd;
};
_Static_assert(sizeof(struct verbs_context_ops) == 608, "verbs_context_ops: 76 pointers (ABI 34)");
_Static_assert(offsetof(struct verbs_context_ops, poll_cq) == 8 * 53, "poll_cq slot");
_Static_assert(offsetof(struct verbs_context_ops, req_notify_cq) == 8 * 69, "req_notify_cq slot");
_Static_assert(offsetof(struct verbs_context_ops, query_device_ex) == 8 * 58, "query_device_ex slot");
_Static_assert(offsetof(struct verbs_context_ops, free_context) == 8 * 39, "free_context slot");
_Static_assert(offsetof(struct verbs_context_ops, create_ah) == 8 * 13, "create_ah slot");
_Static_assert(offsetof(struct verbs_context_ops, alloc_mw) == 8 * 2, "alloc_mw slot");
_Static_assert(offsetof(struct verbs_context_ops, query_rt_values) == 8 * 63, "query_rt_values slot");
_Static_assert(offsetof(struct verbs_context_ops, bind_mw) == 8 * 10, "bind_mw slot");
_Static_assert(offsetof(struct verbs_context_ops, dealloc_mw) == 8 * 25, "dealloc_mw slot");
_Static_assert(offsetof(struct verbs_context_ops, create_cq_ex) == 8 * 16, "create_cq_ex slot");
_Static_assert(offsetof(struct verbs_context_ops, resize_cq) == 8 * 71, "resize_cq slot");
_Static_assert(offsetof(struct verbs_context_ops, create_qp_ex) == 8 * 20, "create_qp_ex slot");
_Static_assert(offsetof(struct verbs_context_ops, create_srq) == 8 * 22, "create_srq slot");
_Static_assert(offsetof(struct verbs_context_ops, destroy_ah) == 8 * 29, "destroy_ah slot");
_Static_assert(offsetof(struct verbs_context_ops, destroy_srq) == 8 * 36, "destroy_srq slot");
_Static_assert(offsetof(struct verbs_context_ops, modify_srq) == 8 * 49, "modify_srq slot");
_Static_assert(offsetof(struct verbs_context_ops, post_srq_recv) == 8 * 57, "post_srq_recv slot");
_Static_assert(offsetof(struct verbs_context_ops, query_srq) == 8 * 64, "query_srq slot");

void verbs_register_driver_34(const struct verbs_device_ops *ops);
void *_verbs_init_and_alloc_context(struct ibv_device *device, int cmd_fd, size_t alloc_size,
                                    struct verbs_context *context_offset, uint32_t driver_id);
void verbs_uninit_context(struct verbs_context *context);
void verbs_set_ops(struct verbs_context *vctx, const struct verbs_context_ops *ops);
void verbs_init_cq(struct ibv_cq *cq, struct ibv_context *context,
                   struct ibv_comp_channel *channel, void *cq_context);

#endif
