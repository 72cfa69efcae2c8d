// fabricd's RDMA connection manager: what the kernel's rdma_cm, rdma_ucm and
// ib_cm do for an app, behind the /dev/infiniband/rdma_cm the preload shim
// gives librdmacm (device/abi/vhca_ucma.h).
//
// A channel is one open() of the device; an id is an rdma_cm_id. Commands
// arrive as the kernel's rdma_ucm structures and are checked as rdma_ucm
// checks them: an id another channel owns is EINVAL, an unknown one ENOENT,
// a command in the wrong state EINVAL. Address and route resolution run on
// the fabric (an IP belongs to a vHCA port; an InfiniBand route is the SA's
// PathRecord). Connections are set up by the two ends' CM agents exchanging
// the IBA's CM messages (REQ, REP, RTU, REJ, DREQ, DREP; SIDR_REQ/REP for
// UD), each end knowing only what the messages told it, with ib_cm's rules
// for timeouts and for an end that goes away: destroying an id -- or the
// process dying, which closes its channel -- rejects a pending request and
// disconnects an established connection, so the peer gets REJECTED or
// DISCONNECTED as from a real stack. Events queue per channel until the app
// fetches them. Control thread only.
#pragma once

#include <utility>  // before Asio (Boost 1.74 + g++ 12 in C++20)

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <map>
#include <set>
#include <unordered_map>
#include <memory>
#include <span>
#include <string>
#include <sys/types.h>
#include <vector>

#include "daemon/telemetry/cm_stats.hpp"
#include "daemon/cm/ports.hpp"
#include "daemon/cm/path.hpp"

namespace vf::cm {

struct Addr;
struct Id;
struct Channel;
struct Msg;

// One id as `fabricctl cm list` shows it (rdma-tool's `rdma resource show
// cm_id` for the vHCAs).
struct IdView {
  uint32_t handle = 0;
  std::string hca;        // "" until bound to a port
  std::string state;      // the kernel's names: LISTEN, CONNECT, ...
  uint16_t ps = 0;
  uint8_t qp_type = 0;
  std::string src, dst;   // "198.18.0.1:7174"
  uint32_t qpn = 0, remote_qpn = 0;
  pid_t pid = 0;
};

// How the CM messages get from one port's agent to another's: fabricd
// sends them as MADs on QP1 through the fabric (gsi_wire.hpp); without a
// wire (the unit tests) they go straight across, one io_context turn later.
class Wire {
 public:
  virtual ~Wire() = default;
  virtual void send(size_t from_vhca, size_t to_vhca, const Msg& m) = 0;
};

class Service {
 public:
  static constexpr size_t kMaxIdsPerChannel = 4096;
  static constexpr size_t kMaxIdsPerProcess = 65536;
  static constexpr size_t kMaxEventsPerChannel = 8192;
  static constexpr int kMaxBacklog = 1024;

  // `event_ready(channel)`: an event was queued on `channel`.
  Service(boost::asio::io_context& io, std::vector<Port> ports, RouteResolver& routes,
          std::function<void(uint64_t channel)> event_ready);
  ~Service();
  Service(const Service&) = delete;
  Service& operator=(const Service&) = delete;

  // A new channel of process `pid`: its number and the secret a migration
  // from it must name.
  std::pair<uint64_t, uint64_t> open_channel(pid_t pid = 0);
  // The channel's app closed it or died: its ids are destroyed as by DESTROY_ID.
  void close_channel(uint64_t channel);
  // One write() of the app: the command's bytes (header included), as the
  // shim forwards them. Returns 0 or the errno write() fails with; `out`
  // gets what the kernel copies to the command's response pointer.
  // VHCA_UCMA_STALE: GET_EVENT found no event (its wake-up byte was for one
  // since purged).
  int command(uint64_t channel, std::span<const uint8_t> cmd, std::vector<uint8_t>& out);

  // fabricd is stopping: RDMA_CM_EVENT_DEVICE_REMOVAL for every id on a
  // vHCA, each as the bytes of an rdma_ucm_event_resp, to `emit(channel, event)`.
  void device_removal(const std::function<void(uint64_t, std::span<const uint8_t>)>& emit) const;
  const CmStats& stats(size_t vhca) const { return counters_.at(vhca); }
  size_t ids() const { return ids_.size(); }
  std::vector<IdView> list() const;
  uint64_t rejected_commands() const { return rejected_commands_; }  // refused with an errno
  size_t queued_events(uint64_t channel) const;

  // How long a CM message waits for its answer before it is sent again
  // (rdma_cm's CM response timeout, 2^20 x 4.096 us; 15 retries). Tests
  // shorten it.
  void set_response_timeout(std::chrono::milliseconds t) { response_timeout_ = t; }

  // -- the wire between the CM agents (handshake.cpp)
  void set_wire(Wire* w) { wire_ = w; }
  // A CM message that arrived at vHCA `to_vhca`'s port (from_vhca filled).
  void receive(size_t to_vhca, const Msg& m);

 private:
  using Out = std::vector<uint8_t>;
  using In = std::span<const uint8_t>;
  // service.cpp: ids, channels, events
  Id* find(uint64_t channel, uint32_t handle, int& err);
  Id* create_id(Channel& ch, uint64_t uid, uint16_t ps, uint8_t qp_type);
  void release_process_id(pid_t pid);  // one id fewer for the process
  void destroy_id(Id& id);
  // `new_id`: a CONNECT_REQUEST's new id (the event counts against `id`, the listener).
  void queue_event(Id& id, uint32_t event, int32_t status, In param = {}, uint32_t new_id = 0);
  void purge_events(Channel& ch, uint32_t handle);
  int cmd_create_id(Channel& ch, In c, Out& out);
  int cmd_destroy_id(Channel& ch, In c, Out& out);
  int cmd_get_event(Channel& ch, In c, Out& out);
  int cmd_migrate(Channel& ch, In whole, Out& out);  // `whole`: with its header
  // addressing.cpp: binding, resolution, listening, queries, options
  int bind(Id& id, const Addr& a);
  int cmd_bind_ip(Channel& ch, In c);
  int cmd_resolve_ip(Channel& ch, In c);
  void finish_addr(uint32_t handle, std::optional<size_t> dst_dev, uint32_t timeout_ms);
  int cmd_resolve_route(Channel& ch, In c);
  int cmd_query_route(Channel& ch, In c, Out& out);
  int cmd_listen(Channel& ch, In c);
  int cmd_set_option(Channel& ch, In c);
  int cmd_init_qp_attr(Channel& ch, In c, Out& out);
  // handshake.cpp: the CM messages
  int cmd_connect(Channel& ch, In c);
  int cmd_accept(Channel& ch, In c);
  int cmd_reject(Channel& ch, In c);
  int cmd_disconnect(Channel& ch, In c);
  void send_msg(Id& from, Msg m);
  // Sends `m` and keeps sending it until answered (settle) or given up.
  void send_awaiting(Id& from, Msg m, std::function<void(Id&)> give_up);
  void retry_tick(Id& id);
  void settle(Id& id);
  void enter_timewait(Id& id);  // TIMEWAIT_EXIT after the packet lifetime
  void reply(Id& from, Msg m);  // sent once, kept for the peer's repeats
  void transmit(size_t from, size_t to, Msg m);
  void on_msg(size_t vhca, const Msg& m);
  void on_req(size_t vhca, const Msg& m);
  void on_sidr_req(size_t vhca, const Msg& m);
  bool repeated_request(size_t vhca, const Msg& m);
  void arm_timer(Id& id, std::chrono::milliseconds after, std::function<void(Id&)> fire);
  // Indexes kept beside ids_ so that no message or bind scans every id.
  Id* by_comm(uint32_t comm);
  Id* by_remote_comm(size_t peer_vhca, uint32_t comm);
  void assign_comm(Id& id);
  void set_remote_comm(Id& id, uint32_t comm);  // after peer_dev is set
  Id* listener_for(const Msg& req, bool ud);
  void unindex(const Id& id);

  boost::asio::io_context& io_;
  std::vector<Port> ports_;
  RouteResolver& routes_;
  Wire* wire_ = nullptr;
  std::chrono::milliseconds response_timeout_{4295};
  std::function<void(uint64_t)> event_ready_;
  std::map<uint64_t, std::unique_ptr<Channel>> channels_;
  std::map<uint32_t, std::unique_ptr<Id>> ids_;
  std::unordered_map<uint32_t, uint32_t> by_local_comm_;                   // communication ID -> id
  std::map<std::pair<size_t, uint32_t>, uint32_t> by_remote_comm_;        // (peer vHCA, its ID) -> id
  std::multimap<std::pair<uint16_t, uint16_t>, uint32_t> port_owners_;    // (port space, port) -> ids bound
  std::set<uint32_t> listeners_;
  std::unordered_map<pid_t, size_t> ids_per_process_;  // by the owning channel's process
  std::vector<CmStats> counters_;
  uint64_t next_channel_ = 1;
  uint32_t next_handle_ = 1;
  uint32_t next_comm_id_;
  uint64_t rejected_commands_ = 0;
  uint32_t psn_seed_;
  std::shared_ptr<Service*> alive_ = std::make_shared<Service*>(this);
};

}  // namespace vf::cm
