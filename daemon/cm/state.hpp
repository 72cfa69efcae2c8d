// The connection manager's own records: ids with their rdma_cm state,
// channels with their event queues, and the CM messages the two ends of a
// connection exchange (IBA 12.6; the rdma_cm IP header of the REQ's private
// data carried as fields).
#pragma once

#include <utility>  // before Asio (Boost 1.74 + g++ 12 in C++20)

#include <boost/asio/steady_timer.hpp>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <sys/types.h>
#include <vector>

#include "daemon/cm/path.hpp"

namespace vf::cm {

// An IP endpoint as rdma_cm keeps it (sockaddr_in / sockaddr_in6).
struct Addr {
  uint16_t family = 0;  // 0: none yet
  uint32_t ip = 0;      // IPv4, host order; also an IPv6 address's mapped IPv4
  bool v6_any = false;  // AF_INET6 :: (both families unless AFONLY)
  uint16_t port = 0;    // host order
  bool any() const { return ip == 0; }
  bool loopback() const { return ip >> 24 == 127; }
};

enum class St {
  kIdle, kAddrQuery, kAddrBound, kAddrResolved, kRouteQuery, kRouteResolved,
  kListen, kConnect, kReqRcvd, kRepSent, kRepRcvd, kEstablished, kDreqSent, kDreqRcvd, kDisconnected,
};

enum class MsgType : uint8_t { kReq, kMra, kRej, kRep, kRtu, kDreq, kDrep, kSidrReq, kSidrRep };

// IBA 12.6: REJ reasons and SIDR_REP statuses rdma_cm apps see as the
// REJECTED / UNREACHABLE event's status.
inline constexpr uint16_t kRejTimeout = 1;
inline constexpr uint16_t kRejInvalidServiceId = 8;
inline constexpr uint16_t kRejConsumerDefined = 28;
inline constexpr uint8_t kSidrSuccess = 0;
inline constexpr uint8_t kSidrUnsupported = 1;
inline constexpr uint8_t kSidrReject = 2;

struct Msg {
  MsgType type = MsgType::kReq;
  size_t from_vhca = 0;
  uint32_t local_comm = 0, remote_comm = 0;  // the sender's and the receiver's
  uint64_t service_id = 0;
  Addr src, dst;          // the rdma_cm header: the active side's and the listener's
  uint32_t qpn = 0, psn = 0, qkey = 0;
  uint8_t responder_resources = 0, initiator_depth = 0;
  uint8_t retry = 7, rnr_retry = 7, srq = 0, flow_control = 0;
  uint8_t qp_type = 2;    // IBV_QPT_RC
  uint16_t reason = 0;    // REJ; SIDR_REP status
  Path path;              // REQ: from the active side to the passive
  std::vector<uint8_t> private_data;
};

struct Id {
  uint32_t handle = 0;
  uint64_t channel = 0;
  uint64_t uid = 0;
  uint16_t ps = 0;
  uint8_t qp_type = 2;
  St st = St::kIdle;
  Addr src, dst;
  std::optional<size_t> dev;       // the vHCA port it is bound or resolved to
  bool owns_port = false;          // bound (a request's id shares its listener's)
  size_t peer_dev = 0;
  bool reuseaddr = false, afonly = false;
  std::optional<uint8_t> tos, ack_timeout;
  std::optional<Path> path;        // resolved, or taken from the REQ
  // listen
  int backlog = 0, pending = 0;    // CONNECT_REQUESTs queued and not fetched
  // connection
  uint32_t local_comm = 0, remote_comm = 0;
  uint32_t qpn = 0, psn = 0, remote_qpn = 0, remote_psn = 0, qkey = 0;
  uint8_t responder_resources = 0, initiator_depth = 0;
  uint8_t retry = 7, rnr_retry = 7, srq = 0;
  uint32_t events_reported = 0;
  std::unique_ptr<boost::asio::steady_timer> timer;  // resolution or handshake
  // The message sent that awaits an answer (REQ, REP, DREQ, SIDR_REQ), sent
  // again at each CM response timeout while retries are left (ib_cm's
  // rule: a MAD may be lost), then given up; and the last reply sent (RTU,
  // DREP, REJ, SIDR_REP), sent again when the peer repeats what it answers.
  std::optional<Msg> awaiting;
  int retries_left = 0;
  std::function<void(Id&)> give_up;
  std::optional<Msg> last_reply;
};

struct Event {
  uint32_t handle = 0;     // the id it is counted against
  bool conn_request = false;
  std::vector<uint8_t> resp;  // rdma_ucm_event_resp
};

struct Channel {
  uint64_t number = 0, secret = 0;
  pid_t pid = 0;
  std::set<uint32_t> ids;
  std::deque<Event> events;
  bool overflowed = false;  // an event was dropped (warned once)
};

}  // namespace vf::cm
