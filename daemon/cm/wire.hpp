// Small helpers for the kernel ABI structures the connection manager reads
// from commands and writes into responses: a command shorter than its
// structure reads as zeros past its end (never past the buffer).
#pragma once

#include <rdma/ib_user_verbs.h>
#include <rdma/rdma_user_cm.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <type_traits>
#include <vector>

namespace vf::cm {

// The events rdma_cm reports (the kernel's enum rdma_cm_event_type, which
// librdmacm shares; named as there).
enum CmEvent : uint32_t {
  RDMA_CM_EVENT_ADDR_RESOLVED, RDMA_CM_EVENT_ADDR_ERROR, RDMA_CM_EVENT_ROUTE_RESOLVED,
  RDMA_CM_EVENT_ROUTE_ERROR, RDMA_CM_EVENT_CONNECT_REQUEST, RDMA_CM_EVENT_CONNECT_RESPONSE,
  RDMA_CM_EVENT_CONNECT_ERROR, RDMA_CM_EVENT_UNREACHABLE, RDMA_CM_EVENT_REJECTED,
  RDMA_CM_EVENT_ESTABLISHED, RDMA_CM_EVENT_DISCONNECTED, RDMA_CM_EVENT_DEVICE_REMOVAL,
  RDMA_CM_EVENT_MULTICAST_JOIN, RDMA_CM_EVENT_MULTICAST_ERROR, RDMA_CM_EVENT_ADDR_CHANGE,
  RDMA_CM_EVENT_TIMEWAIT_EXIT,
};

inline constexpr uint8_t kQptRc = 2, kQptUc = 3, kQptUd = 4;  // enum ibv_qp_type
inline constexpr uint32_t kUdpQkey = 0x01234567;              // RDMA_UDP_QKEY
// rdma_cm's private data room after its IP header (IBA sizes - 36 bytes).
inline constexpr size_t kReqPrivate = 56, kRepPrivate = 196, kRejPrivate = 148;
inline constexpr size_t kSidrReqPrivate = 180, kSidrRepPrivate = 136;

template <class T>
T load(std::span<const uint8_t> in, size_t at = 0) {
  static_assert(std::is_trivially_copyable_v<T>);
  T v{};
  if (at < in.size()) std::memcpy(&v, in.data() + at, std::min(sizeof(T), in.size() - at));
  return v;
}

// The first bytes of `src` that fit in `room` bytes at `dst` (an empty
// vector's data() may be null, which memcpy may not be given).
inline void copy_prefix(void* dst, std::span<const uint8_t> src, size_t room) {
  if (!src.empty() && room) std::memcpy(dst, src.data(), std::min(src.size(), room));
}

template <class T>
void put(std::vector<uint8_t>& out, const T& v) {
  static_assert(std::is_trivially_copyable_v<T>);
  out.resize(sizeof(T));
  std::memcpy(out.data(), &v, sizeof(T));
}

// The shortest response buffer each command accepts (ENOSPC below it).
inline size_t min_response(uint32_t cmd) {
  switch (cmd) {
    case RDMA_USER_CM_CMD_CREATE_ID: return sizeof(rdma_ucm_create_id_resp);
    case RDMA_USER_CM_CMD_DESTROY_ID: return sizeof(rdma_ucm_destroy_id_resp);
    case RDMA_USER_CM_CMD_MIGRATE_ID: return sizeof(rdma_ucm_migrate_resp);
    case RDMA_USER_CM_CMD_QUERY_ROUTE: return offsetof(rdma_ucm_query_route_resp, ibdev_index);
    case RDMA_USER_CM_CMD_INIT_QP_ATTR: return sizeof(ib_uverbs_qp_attr);
    case RDMA_USER_CM_CMD_GET_EVENT: return offsetof(rdma_ucm_event_resp, reserved);
    default: return 0;
  }
}

}  // namespace vf::cm
