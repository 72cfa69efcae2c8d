// fabricd's connection manager driven as librdmacm drives it through the
// shim: rdma_ucm commands in the kernel's format on channels, events fetched
// with GET_EVENT. Two channels play the two processes; the CM messages
// between their ends go through the service's own wire. Hostile commands
// fail with the kernel's errnos and cost nobody else anything.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/rdma_user_cm.h>

#include <gtest/gtest.h>

#include <boost/asio/post.hpp>
#include <cstring>
#include <map>
#include <optional>
#include <random>
#include <vector>

#include "daemon/cm/fabric_routes.hpp"
#include "daemon/cm/service.hpp"
#include "daemon/cm/state.hpp"
#include "daemon/cm/wire.hpp"
#include "device/abi/vhca_ucma.h"

namespace vf::cm {
namespace {

using namespace std::chrono_literals;

Port port(size_t i, const char* name, size_t fabric, bool ib, const char* ip) {
  Port p;
  p.vhca = i;
  p.name = name;
  p.fabric = fabric;
  p.infiniband = ib;
  in_addr a{};
  inet_pton(AF_INET, ip, &a);
  p.ipv4 = ntohl(a.s_addr);
  p.node_guid = 0x1000 + i;
  p.gid[0] = uint8_t(0xfe);
  p.gid[15] = uint8_t(i + 1);
  p.gid_index = ib ? 0 : 1;
  p.lid = ib ? uint16_t(i + 1) : 0;
  p.mtu = 3;
  return p;
}

// RoCE paths for every pair, or none at all when `fail` is set.
class Routes : public RouteResolver {
 public:
  Routes(boost::asio::io_context& io, const std::vector<Port>& ports) : io_(io), ports_(ports) {}
  void resolve(size_t s, size_t d, std::function<void(std::optional<Path>)> done) override {
    std::optional<Path> p;
    if (!fail) p = roce_path(ports_[s], ports_[d]);
    if (p && packet_life) p->packet_life = *packet_life;
    boost::asio::post(io_, [done, p] { done(p); });
  }
  bool fail = false;
  std::optional<uint8_t> packet_life;

 private:
  boost::asio::io_context& io_;
  const std::vector<Port>& ports_;
};

sockaddr_in6 ip4(const char* ip, uint16_t port) {
  sockaddr_in v4{};
  v4.sin_family = AF_INET;
  v4.sin_port = htons(port);
  inet_pton(AF_INET, ip, &v4.sin_addr);
  sockaddr_in6 s{};
  std::memcpy(&s, &v4, sizeof(v4));
  return s;
}

class CmServiceTest : public ::testing::Test {
 protected:
  CmServiceTest()
      : ports_{port(0, "vroce0", 0, false, "198.18.0.1"), port(1, "vroce1", 0, false, "198.18.0.2"),
               port(2, "vib0", 1, true, "198.18.0.101")},
        routes_(io_, ports_),
        svc_(io_, ports_, routes_, [this](uint64_t ch) { ++woken_[ch]; }) {}

  // One write(): the header, then `body`; `out` is the response room.
  template <class T>
  int cmd(uint64_t ch, uint32_t op, const T& body, std::vector<uint8_t>* resp = nullptr, uint16_t out = 512) {
    std::vector<uint8_t> buf(sizeof(rdma_ucm_cmd_hdr) + sizeof(T));
    rdma_ucm_cmd_hdr h{op, uint16_t(sizeof(T)), out};
    std::memcpy(buf.data(), &h, sizeof(h));
    std::memcpy(buf.data() + sizeof(h), &body, sizeof(T));
    std::vector<uint8_t> local;
    return svc_.command(ch, buf, resp ? *resp : local);
  }

  uint32_t create(uint64_t ch, uint64_t uid, uint16_t ps = RDMA_PS_TCP, uint8_t qpt = kQptRc) {
    rdma_ucm_create_id c{};
    c.uid = uid;
    c.ps = ps;
    c.qp_type = qpt;
    std::vector<uint8_t> out;
    EXPECT_EQ(cmd(ch, RDMA_USER_CM_CMD_CREATE_ID, c, &out), 0);
    return out.size() >= 4 ? load<rdma_ucm_create_id_resp>(out).id : 0;
  }

  int bind(uint64_t ch, uint32_t id, const char* ip, uint16_t p) {
    rdma_ucm_bind_ip b{};
    b.addr = ip4(ip, p);
    b.id = id;
    return cmd(ch, RDMA_USER_CM_CMD_BIND_IP, b);
  }

  int listen(uint64_t ch, uint32_t id, uint32_t backlog = 0) {
    return cmd(ch, RDMA_USER_CM_CMD_LISTEN, rdma_ucm_listen{id, backlog});
  }

  std::optional<rdma_ucm_event_resp> event(uint64_t ch) {
    io_.run_for(5ms);
    io_.restart();
    std::vector<uint8_t> out;
    rdma_ucm_get_event g{};
    if (cmd(ch, RDMA_USER_CM_CMD_GET_EVENT, g, &out) != 0) return std::nullopt;
    return load<rdma_ucm_event_resp>(out);
  }

  // A client id on `ch` resolved to 198.18.0.2:`p` from 198.18.0.1.
  uint32_t routed_client(uint64_t ch, uint64_t uid, uint16_t p, uint16_t ps = RDMA_PS_TCP, uint8_t qpt = kQptRc) {
    const uint32_t id = create(ch, uid, ps, qpt);
    rdma_ucm_resolve_ip r{};
    r.src_addr = ip4("198.18.0.1", 0);
    r.dst_addr = ip4("198.18.0.2", p);
    r.id = id;
    r.timeout_ms = 1000;
    EXPECT_EQ(cmd(ch, RDMA_USER_CM_CMD_RESOLVE_IP, r), 0);
    auto e = event(ch);
    EXPECT_TRUE(e && e->event == RDMA_CM_EVENT_ADDR_RESOLVED);
    EXPECT_EQ(cmd(ch, RDMA_USER_CM_CMD_RESOLVE_ROUTE, rdma_ucm_resolve_route{id, 1000}), 0);
    e = event(ch);
    EXPECT_TRUE(e && e->event == RDMA_CM_EVENT_ROUTE_RESOLVED);
    return id;
  }

  int connect(uint64_t ch, uint32_t id, uint32_t qpn, const char* pdata = "", size_t plen = 0) {
    rdma_ucm_connect c{};
    c.id = id;
    c.conn_param.valid = 1;
    c.conn_param.qp_num = qpn;
    c.conn_param.responder_resources = 4;
    c.conn_param.initiator_depth = 2;
    c.conn_param.retry_count = 7;
    c.conn_param.rnr_retry_count = 7;
    c.conn_param.private_data_len = uint8_t(plen);
    std::memcpy(c.conn_param.private_data, pdata, std::min<size_t>(plen, RDMA_MAX_PRIVATE_DATA));
    return cmd(ch, RDMA_USER_CM_CMD_CONNECT, c);
  }

  int accept(uint64_t ch, uint32_t id, uint64_t uid, uint32_t qpn, bool valid = true) {
    rdma_ucm_accept a{};
    a.uid = uid;
    a.id = id;
    a.conn_param.valid = valid;
    a.conn_param.qp_num = qpn;
    a.conn_param.responder_resources = 2;
    a.conn_param.initiator_depth = 4;
    a.conn_param.rnr_retry_count = 7;
    return cmd(ch, RDMA_USER_CM_CMD_ACCEPT, a);
  }

  ib_uverbs_qp_attr qp_attr(uint64_t ch, uint32_t id, uint32_t state) {
    std::vector<uint8_t> out;
    rdma_ucm_init_qp_attr q{};
    q.id = id;
    q.qp_state = state;
    EXPECT_EQ(cmd(ch, RDMA_USER_CM_CMD_INIT_QP_ATTR, q, &out), 0);
    return load<ib_uverbs_qp_attr>(out);
  }

  // A listener on 198.18.0.2:`p` (channel srv) and a client connected to it
  // through REQ/REP/RTU; returns {listener, server's id, client's id}.
  struct Conn {
    uint32_t listener, server, client;
  };
  Conn establish(uint64_t srv, uint64_t cli, uint16_t p) {
    Conn c{};
    c.listener = create(srv, 0x51);
    EXPECT_EQ(bind(srv, c.listener, "198.18.0.2", p), 0);
    EXPECT_EQ(listen(srv, c.listener), 0);
    c.client = routed_client(cli, 0xC1, p);
    EXPECT_EQ(connect(cli, c.client, 11), 0);
    auto req = event(srv);
    EXPECT_TRUE(req && req->event == RDMA_CM_EVENT_CONNECT_REQUEST);
    c.server = req ? req->id : 0;
    EXPECT_EQ(accept(srv, c.server, 0x52, 22), 0);
    auto rep = event(cli);
    EXPECT_TRUE(rep && rep->event == RDMA_CM_EVENT_CONNECT_RESPONSE);
    EXPECT_EQ(accept(cli, c.client, 0, 0, false), 0);  // librdmacm's RTU
    auto est = event(srv);
    EXPECT_TRUE(est && est->event == RDMA_CM_EVENT_ESTABLISHED && est->uid == 0x52);
    return c;
  }

  boost::asio::io_context io_;
  std::vector<Port> ports_;
  Routes routes_;
  Service svc_;
  std::map<uint64_t, int> woken_;
};

TEST_F(CmServiceTest, TheHandshakeGivesEachEndTheOthersQpAndPsns) {
  const uint64_t srv = svc_.open_channel().first, cli = svc_.open_channel().first;
  const uint32_t l = create(srv, 0x51);
  ASSERT_EQ(bind(srv, l, "198.18.0.2", 7000), 0);
  ASSERT_EQ(listen(srv, l), 0);
  const uint32_t c = routed_client(cli, 0xC1, 7000);
  EXPECT_EQ(qp_attr(cli, c, 1).qp_access_flags, 0u) << "before the handshake rdma_cm grants nothing";
  ASSERT_EQ(connect(cli, c, 11, "hello", 5), 0);

  auto req = event(srv);
  ASSERT_TRUE(req);
  EXPECT_EQ(req->event, RDMA_CM_EVENT_CONNECT_REQUEST);
  EXPECT_EQ(req->uid, 0x51u);
  EXPECT_NE(req->id, l) << "a request comes with a new id";
  EXPECT_EQ(req->param.conn.qp_num, 11u);
  EXPECT_EQ(req->param.conn.private_data_len, kReqPrivate) << "rdma_cm reports the whole field";
  EXPECT_EQ(std::memcmp(req->param.conn.private_data, "hello", 5), 0);
  // ib_cm reports the requester's resources from the receiver's side.
  EXPECT_EQ(req->param.conn.responder_resources, 2);
  EXPECT_EQ(req->param.conn.initiator_depth, 4);
  EXPECT_GE(woken_[srv], 1);

  ASSERT_EQ(accept(srv, req->id, 0x52, 22), 0);
  auto rep = event(cli);
  ASSERT_TRUE(rep);
  EXPECT_EQ(rep->event, RDMA_CM_EVENT_CONNECT_RESPONSE);
  EXPECT_EQ(rep->param.conn.qp_num, 22u);

  const auto c_rtr = qp_attr(cli, c, 2), c_rts = qp_attr(cli, c, 3);
  const auto s_rtr = qp_attr(srv, req->id, 2), s_rts = qp_attr(srv, req->id, 3);
  EXPECT_EQ(c_rtr.dest_qp_num, 22u);
  EXPECT_EQ(s_rtr.dest_qp_num, 11u);
  EXPECT_EQ(c_rtr.rq_psn, s_rts.sq_psn);
  EXPECT_EQ(s_rtr.rq_psn, c_rts.sq_psn);
  EXPECT_EQ(c_rtr.ah_attr.is_global, 1) << "RoCE: a GRH";
  EXPECT_EQ(std::memcmp(c_rtr.ah_attr.grh.dgid, ports_[1].gid.data(), 16), 0);
  EXPECT_EQ(c_rtr.ah_attr.grh.sgid_index, 1);
  EXPECT_EQ(c_rtr.path_mtu, 3u);
  EXPECT_EQ(qp_attr(srv, req->id, 1).qp_access_flags, 2u | 4u | 8u) << "remote write, and read/atomic: resources";

  EXPECT_EQ(accept(cli, c, 0, 0, false), 0);
  auto est = event(srv);
  ASSERT_TRUE(est);
  EXPECT_EQ(est->event, RDMA_CM_EVENT_ESTABLISHED);
  EXPECT_EQ(est->uid, 0x52u);

  ASSERT_EQ(cmd(cli, RDMA_USER_CM_CMD_DISCONNECT, rdma_ucm_disconnect{c}), 0);
  auto d1 = event(srv);
  ASSERT_TRUE(d1);
  EXPECT_EQ(d1->event, RDMA_CM_EVENT_DISCONNECTED);
  ASSERT_EQ(cmd(srv, RDMA_USER_CM_CMD_DISCONNECT, rdma_ucm_disconnect{req->id}), 0);  // the DREP
  auto d2 = event(cli);
  ASSERT_TRUE(d2);
  EXPECT_EQ(d2->event, RDMA_CM_EVENT_DISCONNECTED);

  const CmStats& s0 = svc_.stats(0);
  EXPECT_EQ(s0.req_sent, 1u);
  EXPECT_EQ(s0.rep_received, 1u);
  EXPECT_EQ(s0.rtu_sent, 1u);
  EXPECT_EQ(s0.dreq_sent, 1u);
  EXPECT_EQ(s0.drep_received, 1u);
  EXPECT_EQ(svc_.stats(1).req_received, 1u);
}

// ib_cm's time-wait: 4.096 us x 2^(lifetime + 1), about 32 ms for a
// lifetime of 12. Timers never fire early, so the lower bound is exact.
TEST_F(CmServiceTest, BothEndsHearTimewaitExitAPacketLifetimeAfterTheDisconnection) {
  routes_.packet_life = 12;
  const uint64_t srv = svc_.open_channel().first, cli = svc_.open_channel().first;
  const Conn c = establish(srv, cli, 7010);
  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_EQ(cmd(cli, RDMA_USER_CM_CMD_DISCONNECT, rdma_ucm_disconnect{c.client}), 0);
  auto d = event(srv);
  ASSERT_TRUE(d && d->event == RDMA_CM_EVENT_DISCONNECTED);
  ASSERT_EQ(cmd(srv, RDMA_USER_CM_CMD_DISCONNECT, rdma_ucm_disconnect{c.server}), 0);  // the DREP
  d = event(cli);
  ASSERT_TRUE(d && d->event == RDMA_CM_EVENT_DISCONNECTED);
  for (const auto& [ch, id] : {std::pair{srv, c.server}, std::pair{cli, c.client}}) {
    std::optional<rdma_ucm_event_resp> e;
    for (int i = 0; i < 400 && !e; ++i) e = event(ch);
    ASSERT_TRUE(e) << "no TIMEWAIT_EXIT";
    EXPECT_EQ(e->event, RDMA_CM_EVENT_TIMEWAIT_EXIT);
    EXPECT_EQ(e->id, id);
    EXPECT_EQ(e->status, 0u);
    EXPECT_GE(std::chrono::steady_clock::now() - t0, 32ms);
  }
  EXPECT_FALSE(event(srv)) << "one TIMEWAIT_EXIT per connection";
  EXPECT_FALSE(event(cli));

  // A rejected connection never reached rdma_cm's DISCONNECT state: no time-wait event.
  const uint32_t again = routed_client(cli, 0xC2, 7010);
  ASSERT_EQ(connect(cli, again, 12), 0);
  auto req = event(srv);
  ASSERT_TRUE(req && req->event == RDMA_CM_EVENT_CONNECT_REQUEST);
  rdma_ucm_reject rj{};
  rj.id = req->id;
  ASSERT_EQ(cmd(srv, RDMA_USER_CM_CMD_REJECT, rj), 0);
  auto rejected = event(cli);
  ASSERT_TRUE(rejected && rejected->event == RDMA_CM_EVENT_REJECTED);
  io_.run_for(100ms);
  io_.restart();
  EXPECT_FALSE(event(cli));
  EXPECT_FALSE(event(srv));
}

TEST_F(CmServiceTest, EventsBeyondAChannelsBoundAreDroppedAndCountedOnThePort) {
  const uint64_t ch = svc_.open_channel().first;
  constexpr int kIds = 2800;  // three events each: 8400 > 8192
  for (int i = 0; i < kIds; ++i) {
    const uint32_t id = create(ch, 0x1000 + i);
    rdma_ucm_resolve_ip r{};
    r.src_addr = ip4("198.18.0.1", 0);
    r.dst_addr = ip4("198.18.0.2", 7020);
    r.id = id;
    r.timeout_ms = 1000;
    ASSERT_EQ(cmd(ch, RDMA_USER_CM_CMD_RESOLVE_IP, r), 0);
    io_.poll();
    io_.restart();
    ASSERT_EQ(cmd(ch, RDMA_USER_CM_CMD_RESOLVE_ROUTE, rdma_ucm_resolve_route{id, 1000}), 0);
    io_.poll();
    io_.restart();
    ASSERT_EQ(connect(ch, id, 11), 0);  // nobody listens: REJECTED
    io_.poll();
    io_.restart();
  }
  io_.run_for(20ms);
  io_.restart();
  EXPECT_EQ(svc_.queued_events(ch), Service::kMaxEventsPerChannel);
  EXPECT_EQ(svc_.stats(0).events_dropped, 3u * kIds - Service::kMaxEventsPerChannel);
  EXPECT_EQ(svc_.stats(1).events_dropped, 0u);
  // The first events are the ones kept, in order.
  auto first = event(ch);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->event, RDMA_CM_EVENT_ADDR_RESOLVED);
  EXPECT_EQ(first->uid, 0x1000u);
}

// One process may hold kMaxIdsPerProcess ids over all its channels, and
// the count follows an id that migrates to another process's channel.
TEST_F(CmServiceTest, AProcessHoldsABoundedNumberOfIdsOverAllItsChannels) {
  std::vector<std::pair<uint64_t, uint64_t>> mine;  // (channel, secret)
  for (size_t i = 0; i < Service::kMaxIdsPerProcess / Service::kMaxIdsPerChannel; ++i)
    mine.push_back(svc_.open_channel(77));
  uint32_t first = 0;
  for (const auto& [ch, secret] : mine)
    for (size_t i = 0; i < Service::kMaxIdsPerChannel; ++i) {
      const uint32_t id = create(ch, 1);
      ASSERT_NE(id, 0u);
      if (!first) first = id;
    }
  const uint64_t spare = svc_.open_channel(77).first;
  rdma_ucm_create_id c{};
  c.uid = 1;
  c.ps = RDMA_PS_TCP;
  c.qp_type = kQptRc;
  EXPECT_EQ(cmd(spare, RDMA_USER_CM_CMD_CREATE_ID, c), ENOMEM) << "the process's bound, on a fresh channel";
  const uint64_t other = svc_.open_channel(78).first;
  EXPECT_NE(create(other, 2), 0u) << "another process is not affected";

  // One of 77's ids migrates to 78's channel: 77 may create one more, not two.
  struct Body {  // vhca_ucma_migrate after its header
    uint64_t response;
    uint32_t id, reserved;
    uint64_t channel, secret;
  };
  ASSERT_EQ(cmd(other, RDMA_USER_CM_CMD_MIGRATE_ID, Body{0, first, 0, mine[0].first, mine[0].second}), 0);
  EXPECT_NE(create(spare, 3), 0u);
  EXPECT_EQ(cmd(spare, RDMA_USER_CM_CMD_CREATE_ID, c), ENOMEM);
  svc_.close_channel(mine.back().first);  // 4096 of 77's ids go
  EXPECT_NE(create(spare, 4), 0u);
  EXPECT_EQ(svc_.ids(), Service::kMaxIdsPerProcess - Service::kMaxIdsPerChannel + 3);
}

TEST_F(CmServiceTest, NobodyListeningIsARejectForAnInvalidServiceId) {
  const uint64_t cli = svc_.open_channel().first;
  const uint32_t c = routed_client(cli, 0xC1, 7001);
  ASSERT_EQ(connect(cli, c, 11), 0);
  auto e = event(cli);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->event, RDMA_CM_EVENT_REJECTED);
  EXPECT_EQ(e->status, 8u);
  EXPECT_EQ(svc_.stats(1).rej_sent, 1u);
}

TEST_F(CmServiceTest, AServerThatDiesBeforeAnsweringRejectsTheRequest) {
  const uint64_t srv = svc_.open_channel().first, cli = svc_.open_channel().first;
  const uint32_t l = create(srv, 0x51);
  ASSERT_EQ(bind(srv, l, "198.18.0.2", 7002), 0);
  ASSERT_EQ(listen(srv, l), 0);
  const uint32_t c = routed_client(cli, 0xC1, 7002);
  ASSERT_EQ(connect(cli, c, 11), 0);
  io_.run_for(5ms);
  io_.restart();
  svc_.close_channel(srv);  // the process died with the request pending
  auto e = event(cli);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->event, RDMA_CM_EVENT_REJECTED);
  EXPECT_EQ(e->status, 28u);
  EXPECT_EQ(svc_.ids(), 1u) << "only the client's id is left";
}

TEST_F(CmServiceTest, AClientThatDiesWhenConnectedDisconnectsTheServer) {
  const uint64_t srv = svc_.open_channel().first, cli = svc_.open_channel().first;
  const Conn c = establish(srv, cli, 7003);
  svc_.close_channel(cli);
  auto e = event(srv);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->event, RDMA_CM_EVENT_DISCONNECTED);
  EXPECT_EQ(e->id, c.server);
  // The server's answer (its DREP) finds nobody, and that is fine.
  EXPECT_EQ(cmd(srv, RDMA_USER_CM_CMD_DISCONNECT, rdma_ucm_disconnect{c.server}), 0);
  io_.run_for(5ms);
}

TEST_F(CmServiceTest, DestroyingAnIdPurgesItsUndeliveredEventsAndCountsTheDeliveredOnes) {
  const uint64_t ch = svc_.open_channel().first;
  const uint32_t id = routed_client(ch, 0xC1, 7004);  // two events fetched
  rdma_ucm_resolve_route r{id, 1000};
  EXPECT_EQ(cmd(ch, RDMA_USER_CM_CMD_RESOLVE_ROUTE, r), EINVAL) << "the route is resolved already";
  // An event queued and not fetched:
  const uint32_t other = create(ch, 0xC2);
  rdma_ucm_resolve_ip ri{};
  ri.dst_addr = ip4("198.18.0.2", 1);
  ri.id = other;
  ri.timeout_ms = 100;
  ASSERT_EQ(cmd(ch, RDMA_USER_CM_CMD_RESOLVE_IP, ri), 0);
  io_.run_for(5ms);
  io_.restart();
  EXPECT_EQ(svc_.queued_events(ch), 1u);
  std::vector<uint8_t> out;
  rdma_ucm_destroy_id d{};
  d.id = other;
  ASSERT_EQ(cmd(ch, RDMA_USER_CM_CMD_DESTROY_ID, d, &out), 0);
  EXPECT_EQ(load<rdma_ucm_destroy_id_resp>(out).events_reported, 0u);
  EXPECT_EQ(svc_.queued_events(ch), 0u);
  rdma_ucm_get_event g{};
  EXPECT_EQ(cmd(ch, RDMA_USER_CM_CMD_GET_EVENT, g), int(VHCA_UCMA_STALE)) << "its wake-up byte is stale";
  d.id = id;
  ASSERT_EQ(cmd(ch, RDMA_USER_CM_CMD_DESTROY_ID, d, &out), 0);
  EXPECT_EQ(load<rdma_ucm_destroy_id_resp>(out).events_reported, 2u);
}

TEST_F(CmServiceTest, AddressesNobodyHasTimeOutAndOtherFabricsAreUnreachable) {
  const uint64_t ch = svc_.open_channel().first;
  const uint32_t a = create(ch, 0xA);
  rdma_ucm_resolve_ip r{};
  r.src_addr = ip4("198.18.0.1", 0);
  r.dst_addr = ip4("198.18.0.77", 1);
  r.id = a;
  r.timeout_ms = 20;
  ASSERT_EQ(cmd(ch, RDMA_USER_CM_CMD_RESOLVE_IP, r), 0);
  EXPECT_FALSE(event(ch)) << "ARP is still asking";
  io_.run_for(60ms);
  io_.restart();
  auto e = event(ch);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->event, RDMA_CM_EVENT_ADDR_ERROR);
  EXPECT_EQ(int32_t(e->status), -ETIMEDOUT);

  const uint32_t b = create(ch, 0xB);
  r.dst_addr = ip4("198.18.0.101", 1);  // vib0: another fabric
  r.id = b;
  ASSERT_EQ(cmd(ch, RDMA_USER_CM_CMD_RESOLVE_IP, r), 0);
  e = event(ch);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->event, RDMA_CM_EVENT_ADDR_ERROR);
  EXPECT_EQ(int32_t(e->status), -ENETUNREACH);
}

TEST_F(CmServiceTest, ARouteTheFabricCannotGiveIsARouteError) {
  const uint64_t ch = svc_.open_channel().first;
  const uint32_t id = create(ch, 0xA);
  rdma_ucm_resolve_ip r{};
  r.dst_addr = ip4("198.18.0.2", 1);
  r.id = id;
  r.timeout_ms = 100;
  ASSERT_EQ(cmd(ch, RDMA_USER_CM_CMD_RESOLVE_IP, r), 0);
  ASSERT_TRUE(event(ch));
  routes_.fail = true;
  ASSERT_EQ(cmd(ch, RDMA_USER_CM_CMD_RESOLVE_ROUTE, rdma_ucm_resolve_route{id, 100}), 0);
  auto e = event(ch);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->event, RDMA_CM_EVENT_ROUTE_ERROR);
  EXPECT_EQ(int32_t(e->status), -EHOSTUNREACH);
}

TEST_F(CmServiceTest, PortsAreSharedOnlyAsTheKernelSharesThem) {
  const uint64_t ch = svc_.open_channel().first;
  const uint32_t a = create(ch, 1), b = create(ch, 2), c = create(ch, 3), e = create(ch, 4);
  EXPECT_EQ(bind(ch, a, "198.18.0.2", 7100), 0);
  EXPECT_EQ(bind(ch, b, "198.18.0.2", 7100), EADDRINUSE);
  EXPECT_EQ(bind(ch, b, "0.0.0.0", 7100), EADDRNOTAVAIL) << "a wildcard overlaps every address";
  EXPECT_EQ(bind(ch, b, "198.18.0.1", 7100), 0) << "another address, same port";
  EXPECT_EQ(bind(ch, c, "198.18.0.9", 7100), EADDRNOTAVAIL) << "nobody has that address";
  EXPECT_EQ(bind(ch, c, "198.18.0.1", 0), 0);
  EXPECT_EQ(bind(ch, c, "198.18.0.1", 0), EINVAL) << "bound already";
  rdma_ucm_bind_ip v6{};
  v6.addr.sin6_family = AF_INET6;
  v6.addr.sin6_addr.s6_addr[15] = 1;  // ::1: no vHCA has IPv6
  v6.id = e;
  EXPECT_EQ(cmd(ch, RDMA_USER_CM_CMD_BIND_IP, v6), EADDRNOTAVAIL);
  v6.addr.sin6_family = 27;  // AF_IB through the old command
  EXPECT_EQ(cmd(ch, RDMA_USER_CM_CMD_BIND_IP, v6), EAFNOSUPPORT);
  std::vector<uint8_t> out;
  rdma_ucm_query q{};
  q.id = c;
  ASSERT_EQ(cmd(ch, RDMA_USER_CM_CMD_QUERY_ROUTE, q, &out), 0);
  const auto route = load<rdma_ucm_query_route_resp>(out);
  sockaddr_in src;
  std::memcpy(&src, &route.src_addr, sizeof(src));
  EXPECT_GE(ntohs(src.sin_port), 32768) << "an ephemeral port";
  EXPECT_EQ(be64toh(route.node_guid), ports_[0].node_guid);
}

TEST_F(CmServiceTest, TheBacklogBoundsRequestsNobodyFetchedYet) {
  const uint64_t srv = svc_.open_channel().first, cli = svc_.open_channel().first;
  const uint32_t l = create(srv, 0x51);
  ASSERT_EQ(bind(srv, l, "0.0.0.0", 7005), 0);
  ASSERT_EQ(listen(srv, l, 1), 0);
  const uint32_t c1 = routed_client(cli, 0xC1, 7005), c2 = routed_client(cli, 0xC2, 7005);
  ASSERT_EQ(connect(cli, c1, 11), 0);
  io_.run_for(5ms);
  io_.restart();
  ASSERT_EQ(connect(cli, c2, 12), 0);
  auto e = event(cli);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->event, RDMA_CM_EVENT_REJECTED);
  EXPECT_EQ(e->uid, 0xC2u);
  EXPECT_EQ(e->status, 28u);
  auto req = event(srv);
  ASSERT_TRUE(req);
  EXPECT_EQ(req->param.conn.qp_num, 11u);
}

TEST_F(CmServiceTest, MigrationMovesAnIdAndItsEventsToTheCallersChannel) {
  const auto [a, a_secret] = svc_.open_channel();
  const uint64_t b = svc_.open_channel().first;
  const uint32_t id = create(a, 0xA);
  rdma_ucm_resolve_ip r{};
  r.dst_addr = ip4("198.18.0.2", 1);
  r.id = id;
  r.timeout_ms = 100;
  ASSERT_EQ(cmd(a, RDMA_USER_CM_CMD_RESOLVE_IP, r), 0);
  io_.run_for(5ms);
  io_.restart();
  struct Body {  // vhca_ucma_migrate after its header
    uint64_t response;
    uint32_t id, reserved;
    uint64_t channel, secret;
  };
  static_assert(sizeof(Body) + sizeof(rdma_ucm_cmd_hdr) == sizeof(vhca_ucma_migrate));
  Body body{0, id, 0, a, a_secret + 1};
  EXPECT_EQ(cmd(b, RDMA_USER_CM_CMD_MIGRATE_ID, body), EINVAL) << "a wrong secret";
  body.secret = a_secret;
  ASSERT_EQ(cmd(b, RDMA_USER_CM_CMD_MIGRATE_ID, body), 0);
  EXPECT_EQ(svc_.queued_events(a), 0u);
  auto e = event(b);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->event, RDMA_CM_EVENT_ADDR_RESOLVED);
  rdma_ucm_disconnect d{id};
  EXPECT_EQ(cmd(a, RDMA_USER_CM_CMD_DISCONNECT, d), EINVAL) << "the id is b's now";
}

TEST_F(CmServiceTest, UdServicesResolveWithSidr) {
  const uint64_t srv = svc_.open_channel().first, cli = svc_.open_channel().first;
  const uint32_t l = create(srv, 0x51, RDMA_PS_UDP, kQptUd);
  ASSERT_EQ(bind(srv, l, "198.18.0.2", 7006), 0);
  ASSERT_EQ(listen(srv, l), 0);
  const uint32_t c = routed_client(cli, 0xC1, 7006, RDMA_PS_UDP, kQptUd);
  EXPECT_EQ(qp_attr(cli, c, 1).qkey, kUdpQkey);
  ASSERT_EQ(connect(cli, c, 11), 0);
  auto req = event(srv);
  ASSERT_TRUE(req);
  EXPECT_EQ(req->event, RDMA_CM_EVENT_CONNECT_REQUEST);
  EXPECT_EQ(req->param.ud.private_data_len, kSidrReqPrivate);
  ASSERT_EQ(accept(srv, req->id, 0x52, 33), 0);
  auto est = event(cli);
  ASSERT_TRUE(est);
  EXPECT_EQ(est->event, RDMA_CM_EVENT_ESTABLISHED);
  EXPECT_EQ(est->param.ud.qp_num, 33u);
  EXPECT_EQ(est->param.ud.qkey, kUdpQkey);
  EXPECT_EQ(est->param.ud.ah_attr.is_global, 1);
  EXPECT_EQ(svc_.stats(0).sidr_req_sent, 1u);
  EXPECT_EQ(svc_.stats(1).sidr_rep_sent, 1u);
}

TEST_F(CmServiceTest, BadCommandsFailAsTheKernelFailsThem) {
  const uint64_t a = svc_.open_channel().first, b = svc_.open_channel().first;
  const uint32_t id = create(a, 1);
  std::vector<uint8_t> out;
  EXPECT_EQ(svc_.command(a, std::vector<uint8_t>{1, 2, 3}, out), EINVAL) << "shorter than the header";
  {
    std::vector<uint8_t> buf(8);
    rdma_ucm_cmd_hdr h{RDMA_USER_CM_CMD_LISTEN, 200, 0};
    std::memcpy(buf.data(), &h, sizeof(h));
    EXPECT_EQ(svc_.command(a, buf, out), EINVAL) << "`in` beyond what was written";
  }
  EXPECT_EQ(cmd(a, 999, rdma_ucm_listen{id, 0}), EINVAL) << "no such command";
  EXPECT_EQ(cmd(a, RDMA_USER_CM_CMD_GET_OPTION, rdma_ucm_listen{id, 0}), ENOSYS);
  EXPECT_EQ(listen(b, id), EINVAL) << "another channel's id";
  EXPECT_EQ(listen(a, 4242), ENOENT) << "no such id";
  rdma_ucm_create_id c{};
  c.ps = RDMA_PS_TCP;
  c.qp_type = kQptRc;
  EXPECT_EQ(cmd(a, RDMA_USER_CM_CMD_CREATE_ID, c, &out, 2), ENOSPC) << "no room for the response";
  c.qp_type = 9;
  EXPECT_EQ(cmd(a, RDMA_USER_CM_CMD_CREATE_ID, c, &out), EINVAL) << "no such QP type";
  EXPECT_EQ(connect(a, id, 1), EINVAL) << "no route yet";
  const uint32_t routed = routed_client(a, 7, 7007);
  const char big[RDMA_MAX_PRIVATE_DATA] = {};
  EXPECT_EQ(connect(a, routed, 1, big, kReqPrivate + 1), EINVAL) << "private data beyond the REQ's room";
  EXPECT_EQ(accept(a, routed, 1, 1), EINVAL) << "nothing to accept";
  rdma_ucm_set_option o{};
  o.id = id;
  o.level = RDMA_OPTION_ID;
  o.optname = RDMA_OPTION_ID_TOS;
  o.optlen = 4;
  EXPECT_EQ(cmd(a, RDMA_USER_CM_CMD_SET_OPTION, o), EINVAL) << "optlen beyond the command";
  EXPECT_EQ(svc_.rejected_commands(), 12u);
}

TEST_F(CmServiceTest, RandomBytesNeverHurtTheServiceOrOtherChannels) {
  const uint64_t srv = svc_.open_channel().first, cli = svc_.open_channel().first;
  const uint64_t hostile = svc_.open_channel().first;
  std::mt19937 rng(13);
  std::vector<uint8_t> out;
  for (int i = 0; i < 20000; ++i) {
    std::vector<uint8_t> buf(rng() % 400);
    for (auto& b : buf) b = uint8_t(rng());
    if (buf.size() >= 8) {
      rdma_ucm_cmd_hdr h{uint32_t(rng() % 24), uint16_t(buf.size() - 8), uint16_t(rng() % 600)};
      std::memcpy(buf.data(), &h, sizeof(h));
      if (i % 3 == 0 && buf.size() >= 12) {
        const uint32_t small_id = rng() % 8;  // an id that may exist, where most commands name it
        std::memcpy(buf.data() + 8, &small_id, 4);
      }
    }
    svc_.command(hostile, buf, out);
    if (i % 500 == 0) {
      io_.run_for(1ms);
      io_.restart();
    }
  }
  svc_.close_channel(hostile);
  io_.run_for(5ms);
  io_.restart();
  establish(srv, cli, 7008);  // everyone else is served as before
}

}  // namespace
}  // namespace vf::cm

namespace vf::cm {
namespace {

// A wire that loses the first `lose` messages of each type it is told to,
// then delivers, as a lossy link would.
class LossyWire : public Wire {
 public:
  LossyWire(boost::asio::io_context& io, Service& s) : io_(io), svc_(s) {}
  void send(size_t, size_t to, const Msg& m) override {
    ++sent[m.type];
    if (lose[m.type] > 0) {
      --lose[m.type];
      return;
    }
    boost::asio::post(io_, [this, to, m] { svc_.receive(to, m); });
  }
  std::map<MsgType, int> lose, sent;

 private:
  boost::asio::io_context& io_;
  Service& svc_;
};

class CmRetryTest : public CmServiceTest {
 protected:
  CmRetryTest() : wire_(io_, svc_) {
    svc_.set_wire(&wire_);
    svc_.set_response_timeout(10ms);
  }
  std::optional<rdma_ucm_event_resp> event_within(uint64_t ch, std::chrono::milliseconds t) {
    io_.run_for(t);
    io_.restart();
    return event(ch);
  }
  LossyWire wire_;
};

TEST_F(CmRetryTest, LostHandshakeMessagesAreSentAgainUntilAnswered) {
  wire_.lose[MsgType::kReq] = 2;  // the first two REQs
  wire_.lose[MsgType::kRep] = 1;  // the first REP
  wire_.lose[MsgType::kRtu] = 1;  // the first RTU: the REP comes again, and the RTU with it
  const uint64_t srv = svc_.open_channel().first, cli = svc_.open_channel().first;
  const uint32_t l = create(srv, 0x51);
  ASSERT_EQ(bind(srv, l, "198.18.0.2", 7300), 0);
  ASSERT_EQ(listen(srv, l), 0);
  const uint32_t c = routed_client(cli, 0xC1, 7300);
  ASSERT_EQ(connect(cli, c, 11), 0);
  auto req = event_within(srv, 50ms);
  ASSERT_TRUE(req);
  EXPECT_EQ(req->event, RDMA_CM_EVENT_CONNECT_REQUEST);
  EXPECT_GE(wire_.sent[MsgType::kReq], 3) << "two lost, then repeated while the app thinks";
  EXPECT_GE(wire_.sent[MsgType::kMra], 1) << "each repeat draws an MRA: wait";
  ASSERT_EQ(accept(srv, req->id, 0x52, 22), 0);
  auto rep = event_within(cli, 50ms);
  ASSERT_TRUE(rep);
  EXPECT_EQ(rep->event, RDMA_CM_EVENT_CONNECT_RESPONSE);
  EXPECT_EQ(accept(cli, c, 0, 0, false), 0);
  auto est = event_within(srv, 50ms);
  ASSERT_TRUE(est);
  EXPECT_EQ(est->event, RDMA_CM_EVENT_ESTABLISHED);
  EXPECT_EQ(wire_.sent[MsgType::kRtu], 2);
  EXPECT_FALSE(event_within(srv, 30ms)) << "one request, one connection: no second CONNECT_REQUEST";
}

TEST_F(CmRetryTest, AServerSlowToAcceptKeepsItsClientWaitingWithMras) {
  const uint64_t srv = svc_.open_channel().first, cli = svc_.open_channel().first;
  const uint32_t l = create(srv, 0x51);
  ASSERT_EQ(bind(srv, l, "198.18.0.2", 7303), 0);
  ASSERT_EQ(listen(srv, l), 0);
  const uint32_t c = routed_client(cli, 0xC1, 7303);
  ASSERT_EQ(connect(cli, c, 11), 0);
  auto req = event_within(srv, 5ms);
  ASSERT_TRUE(req);
  // Longer than 16 response timeouts: without the MRAs the client gives up.
  EXPECT_FALSE(event_within(cli, 300ms));
  ASSERT_EQ(accept(srv, req->id, 0x52, 22), 0);
  auto rep = event_within(cli, 20ms);
  ASSERT_TRUE(rep);
  EXPECT_EQ(rep->event, RDMA_CM_EVENT_CONNECT_RESPONSE);
}

TEST_F(CmRetryTest, ARequestNobodyAnswersIsUnreachableAfterItsRetries) {
  wire_.lose[MsgType::kReq] = 100;
  const uint64_t cli = svc_.open_channel().first;
  const uint32_t c = routed_client(cli, 0xC1, 7301);
  ASSERT_EQ(connect(cli, c, 11), 0);
  auto e = event_within(cli, 400ms);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->event, RDMA_CM_EVENT_UNREACHABLE);
  EXPECT_EQ(int32_t(e->status), -ETIMEDOUT);
  EXPECT_EQ(wire_.sent[MsgType::kReq], 16) << "the first try and 15 retries";
}

TEST_F(CmRetryTest, ALostDrepIsSentAgainWhenTheDreqRepeats) {
  const uint64_t srv = svc_.open_channel().first, cli = svc_.open_channel().first;
  const Conn c = establish(srv, cli, 7302);
  wire_.lose[MsgType::kDrep] = 1;
  ASSERT_EQ(cmd(cli, RDMA_USER_CM_CMD_DISCONNECT, rdma_ucm_disconnect{c.client}), 0);
  auto d = event_within(srv, 20ms);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->event, RDMA_CM_EVENT_DISCONNECTED);
  ASSERT_EQ(cmd(srv, RDMA_USER_CM_CMD_DISCONNECT, rdma_ucm_disconnect{c.server}), 0);
  auto back = event_within(cli, 60ms);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->event, RDMA_CM_EVENT_DISCONNECTED);
  EXPECT_EQ(back->status, 0u) << "answered, not timed out";
  EXPECT_EQ(wire_.sent[MsgType::kDrep], 2);
}

TEST_F(CmRetryTest, ADreqNobodyAnswersDisconnectsAfterItsRetriesAndThenLeavesTimewait) {
  routes_.packet_life = 12;
  const uint64_t srv = svc_.open_channel().first, cli = svc_.open_channel().first;
  const Conn c = establish(srv, cli, 7304);
  wire_.lose[MsgType::kDreq] = 100;
  ASSERT_EQ(cmd(cli, RDMA_USER_CM_CMD_DISCONNECT, rdma_ucm_disconnect{c.client}), 0);
  auto d = event_within(cli, 400ms);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->event, RDMA_CM_EVENT_DISCONNECTED);
  EXPECT_EQ(int32_t(d->status), -ETIMEDOUT) << "IB_CM_DREQ_ERROR";
  EXPECT_EQ(wire_.sent[MsgType::kDreq], 16);
  auto tw = event_within(cli, 200ms);
  ASSERT_TRUE(tw);
  EXPECT_EQ(tw->event, RDMA_CM_EVENT_TIMEWAIT_EXIT);
  EXPECT_FALSE(event(srv)) << "the server heard nothing";
}

}  // namespace
}  // namespace vf::cm
