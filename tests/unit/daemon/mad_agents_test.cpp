// The management agents against a small hand-built fabric model:
//   ca0 -- sw0/1   sw0/3 -- sw1/3   sw1/1 -- ca1      (sw0/2 cabled to nothing)
// LIDs: ca0 1, ca1 2, sw0 3 (runs the SM), sw1 4.
#include <gtest/gtest.h>

#include "daemon/mad/agents.hpp"
#include "daemon/mad/mad.hpp"
#include "daemon/mad/path_record.hpp"
#include "daemon/mad/route.hpp"
#include "daemon/mad/sa.hpp"
#include "daemon/mad/sa_mcast.hpp"

namespace vf::mad {
namespace {

ModelPort cable(int peer, uint8_t peer_port) {
  ModelPort p;
  p.linked = true;
  p.state = PortState::kActive;
  p.phys = PhysState::kLinkUp;
  p.width = 2;
  p.speed = 4;
  p.speed_ext = 2;
  p.mtu = 5;
  p.peer_node = peer;
  p.peer_port = peer_port;
  return p;
}

MadModel fabric() {
  MadModel m;
  auto ca = [](const char* name, uint64_t guid, uint16_t lid, int peer, uint8_t peer_port) {
    ModelNode n;
    n.name = name;
    n.desc = std::string("host ") + name;
    n.guid = guid;
    n.lid = lid;
    n.pkeys = {0xFFFF, 0x8001};
    n.pkey_table_len = 64;
    n.ports.push_back(cable(peer, peer_port));
    return n;
  };
  m.nodes.push_back(ca("ca0", 0x1000, 1, 2, 1));
  m.nodes.push_back(ca("ca1", 0x1001, 2, 3, 1));
  auto sw = [](const char* name, uint64_t guid, uint16_t lid) {
    ModelNode n;
    n.is_switch = true;
    n.name = name;
    n.desc = name;
    n.guid = guid;
    n.lid = lid;
    n.ports.resize(4);
    n.lft.assign(5, 0xFF);
    return n;
  };
  m.nodes.push_back(sw("sw0", 0x2000, 3));
  m.nodes.push_back(sw("sw1", 0x2001, 4));
  m.nodes[2].ports[0] = cable(0, 1);
  m.nodes[2].ports[2] = cable(3, 3);
  m.nodes[3].ports[0] = cable(1, 1);
  m.nodes[3].ports[2] = cable(2, 3);
  // sw0: 1 -> port 1, 2 and 4 -> port 3; sw1: 2 -> port 1, 1 and 3 -> port 3.
  m.nodes[2].lft[1] = 1, m.nodes[2].lft[2] = 3, m.nodes[2].lft[3] = 0, m.nodes[2].lft[4] = 3;
  m.nodes[3].lft[2] = 1, m.nodes[3].lft[1] = 3, m.nodes[3].lft[3] = 3, m.nodes[3].lft[4] = 0;
  m.sm_lid = 3;
  m.sm_node = 2;
  m.sm_activity = 7;
  return m;
}

Mad request(uint8_t cls, uint8_t meth, uint16_t attr, uint32_t mod = 0) {
  Mad m{};
  m[0] = 1;
  m[1] = cls;
  m[2] = 1;
  m[3] = meth;
  set_tid(m, 0x1234);
  put_be(&m[16], 2, attr);
  put_be(&m[20], 4, mod);
  if (cls == kClassSmiDr) {
    put_be(&m[32], 2, kPermissiveLid);
    put_be(&m[34], 2, kPermissiveLid);
  }
  return m;
}

Mad directed(uint16_t attr, std::initializer_list<uint8_t> path, uint32_t mod = 0) {
  Mad m = request(kClassSmiDr, kGet, attr, mod);
  m[7] = uint8_t(path.size());
  unsigned hop = 1;
  for (uint8_t p : path) m[kDrInitialPath + hop++] = p;
  return m;
}

const uint8_t* smp_data(const Mad& m) { return &m[kSmpData]; }

TEST(MadFields, BitsFollowTheIbaNumbering) {
  uint8_t b[8] = {};
  put_bits(b, 4, 4, 0xA);           // low nibble of byte 0
  put_bits(b, 8, 16, 0xBEEF);
  put_bits(b, 29, 3, 5);
  EXPECT_EQ(b[0], 0x0A);
  EXPECT_EQ(b[1], 0xBE);
  EXPECT_EQ(b[2], 0xEF);
  EXPECT_EQ(b[3], 0x05);
  EXPECT_EQ(get_bits(b, 8, 16), 0xBEEFu);
  EXPECT_EQ(get_bits(b, 4, 4), 0xAu);
  EXPECT_EQ(get_bits(b, 29, 3), 5u);
}

TEST(MadRoute, DirectedRouteWalksTheCablesAndFillsTheReturnPath) {
  const MadModel f = fabric();
  Mad m = directed(kAttrNodeInfo, {1, 3, 1});
  const auto at = walk_directed(f, 0, m);
  ASSERT_TRUE(at);
  EXPECT_EQ(at->node, 1u);
  EXPECT_EQ(at->in_port, 1);
  EXPECT_EQ(m[kDrReturnPath + 1], 1);  // entered sw0 by port 1
  EXPECT_EQ(m[kDrReturnPath + 2], 3);  // sw1 by port 3
  EXPECT_EQ(m[kDrReturnPath + 3], 1);  // ca1 by its port 1

  Mad self = directed(kAttrNodeInfo, {});
  ASSERT_TRUE(walk_directed(f, 0, self));
  EXPECT_EQ(walk_directed(f, 0, self)->node, 0u);

  Mad nowhere = directed(kAttrNodeInfo, {1, 2});  // sw0/2 has no cable
  EXPECT_FALSE(walk_directed(f, 0, nowhere));
  Mad through_ca = directed(kAttrNodeInfo, {1, 3, 1, 1});  // ca1 does not forward
  EXPECT_FALSE(walk_directed(f, 0, through_ca));
  Mad bad_port = directed(kAttrNodeInfo, {1, 200});
  EXPECT_FALSE(walk_directed(f, 0, bad_port));
}

TEST(MadRoute, ALinkThatIsDownCarriesNothingAndLidRoutingNeedsActivePorts) {
  MadModel f = fabric();
  EXPECT_TRUE(walk_lid(f, 0, 2, false));
  f.nodes[3].ports[2].state = PortState::kInit;  // trained, not yet activated
  EXPECT_FALSE(walk_lid(f, 0, 2, false));        // data VLs: no
  EXPECT_TRUE(walk_lid(f, 0, 2, true));          // VL15: yes
  Mad dr = directed(kAttrNodeInfo, {1, 3});
  EXPECT_TRUE(walk_directed(f, 0, dr));
  f.nodes[3].ports[2].phys = PhysState::kPolling;  // the cable is down
  EXPECT_FALSE(walk_lid(f, 0, 2, true));
  EXPECT_FALSE(walk_directed(f, 0, dr));
}

TEST(MadRoute, LidRoutingFollowsTheLftsAndStopsWhereTheyEnd) {
  MadModel f = fabric();
  const auto at = walk_lid(f, 0, 4, true);
  ASSERT_TRUE(at);
  EXPECT_EQ(at->node, 3u);
  EXPECT_EQ(at->in_port, 3);
  EXPECT_EQ(at->hops, 2u);
  EXPECT_FALSE(walk_lid(f, 0, 9, false));  // no such LID anywhere
  f.nodes[2].lft[2] = 0xFF;                // sw0 lost its route to ca1
  EXPECT_FALSE(walk_lid(f, 0, 2, false));
  f.nodes[2].lft[2] = 1;  // a loop back to ca0 ends there: a CA does not forward
  EXPECT_FALSE(walk_lid(f, 0, 2, false));
  EXPECT_FALSE(walk_lid(f, 0, 0xC001, false));  // multicast: not for MADs
}

TEST(MadSma, NodeInfoAndNodeDescriptionOfACaAndASwitch) {
  const MadModel f = fabric();
  MadOutcome o = answer_mad(f, 0, 0, 0, directed(kAttrNodeInfo, {1, 3}));
  ASSERT_TRUE(o.response);
  const Mad& r = *o.response;
  EXPECT_EQ(method(r), kGetResp);
  EXPECT_EQ(status(r), kStatusDrDirection);  // D set, status 0
  EXPECT_EQ(smp_data(r)[2], 2);                  // switch
  EXPECT_EQ(smp_data(r)[3], 4);                  // ports
  EXPECT_EQ(get_be(smp_data(r) + 12, 8), 0x2001u);
  EXPECT_EQ(smp_data(r)[36], 3);                 // came in by port 3
  EXPECT_EQ(tid(r), 0x1234u);

  o = answer_mad(f, 0, 0, 0, directed(kAttrNodeInfo, {}));
  ASSERT_TRUE(o.response);
  EXPECT_EQ(smp_data(*o.response)[2], 1);  // CA
  EXPECT_EQ(get_be(smp_data(*o.response) + 20, 8), 0x1000u);

  o = answer_mad(f, 0, 0, 0, directed(kAttrNodeDesc, {1, 3, 1}));
  ASSERT_TRUE(o.response);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(smp_data(*o.response))), "host ca1");
}

TEST(MadSma, PortInfoShowsTheLiveStateLidsAndSpeeds) {
  MadModel f = fabric();
  f.nodes[2].ports[2].state = PortState::kDown;
  f.nodes[2].ports[2].phys = PhysState::kPolling;
  MadOutcome o = answer_mad(f, 0, 0, 0, directed(kAttrPortInfo, {}, 0));
  ASSERT_TRUE(o.response);
  const uint8_t* d = smp_data(*o.response);
  EXPECT_EQ(get_be(d + 16, 2), 1u);  // LID
  EXPECT_EQ(get_be(d + 18, 2), 3u);  // SM LID
  EXPECT_EQ(get_bits(d, 260, 4), 4u);  // Active
  EXPECT_EQ(get_bits(d, 264, 4), 5u);  // LinkUp
  EXPECT_EQ(get_bits(d, 248, 8), 2u);  // 4x
  EXPECT_EQ(get_bits(d, 496, 4), 2u);  // EDR
  EXPECT_EQ(get_bits(d, 272, 2), 1u);  // M_Key protected

  o = answer_mad(f, 0, 0, 0, directed(kAttrPortInfo, {1}, 3));  // sw0's port 3
  ASSERT_TRUE(o.response);
  d = smp_data(*o.response);
  EXPECT_EQ(get_bits(d, 260, 4), 1u);  // Down
  EXPECT_EQ(get_bits(d, 264, 4), 2u);  // Polling
  EXPECT_EQ(d[28], 1);                 // asked through port 1

  o = answer_mad(f, 0, 0, 0, directed(kAttrPortInfo, {1}, 0));  // port 0 carries the LID and IsSM
  ASSERT_TRUE(o.response);
  EXPECT_EQ(get_be(smp_data(*o.response) + 16, 2), 3u);
  EXPECT_TRUE(get_be(smp_data(*o.response) + 20, 4) & 2u);

  o = answer_mad(f, 0, 0, 0, directed(kAttrPortInfo, {1}, 9));  // no port 9
  ASSERT_TRUE(o.response);
  EXPECT_EQ(status(*o.response), kStatusDrDirection | kStatusBadAttrOrModifier);
}

TEST(MadSma, SwitchInfoLftAndSmInfoReadWhatTheSmProgrammed) {
  const MadModel f = fabric();
  MadOutcome o = answer_mad(f, 0, 0, 0, directed(kAttrSwitchInfo, {1}));
  ASSERT_TRUE(o.response);
  EXPECT_EQ(get_be(smp_data(*o.response) + 6, 2), 4u);  // LinearFDBTop
  o = answer_mad(f, 0, 0, 0, directed(kAttrLft, {1}, 0));
  ASSERT_TRUE(o.response);
  EXPECT_EQ(smp_data(*o.response)[1], 1);
  EXPECT_EQ(smp_data(*o.response)[2], 3);
  EXPECT_EQ(smp_data(*o.response)[3], 0);
  EXPECT_EQ(smp_data(*o.response)[5], 0xFF);
  o = answer_mad(f, 0, 0, 3, request(kClassSmiLid, kGet, kAttrSmInfo));  // LID-routed to the SM
  ASSERT_TRUE(o.response);
  EXPECT_EQ(o.slid, 3);
  EXPECT_EQ(get_be(smp_data(*o.response), 8), 0x2000u);
  EXPECT_EQ(get_be(smp_data(*o.response) + 16, 4), 7u);
  EXPECT_EQ(get_bits(smp_data(*o.response), 164, 4), 3u);  // MASTER
  o = answer_mad(f, 0, 0, 4, request(kClassSmiLid, kGet, kAttrSmInfo));  // sw1 runs no SM
  ASSERT_TRUE(o.response);
  EXPECT_EQ(status(*o.response), kStatusMethodAttrUnsupported);
  o = answer_mad(f, 0, 0, 0, directed(kAttrSwitchInfo, {}));  // a CA is no switch
  ASSERT_TRUE(o.response);
  EXPECT_EQ(status(*o.response), kStatusDrDirection | kStatusMethodAttrUnsupported);
}

TEST(MadSma, SetIsRefusedSilentlyAndBadRequestsGetTheirStatus) {
  const MadModel f = fabric();
  Mad set = directed(kAttrPortInfo, {1}, 1);
  set[3] = kSet;
  MadOutcome o = answer_mad(f, 0, 0, 0, set);
  EXPECT_FALSE(o.response);
  EXPECT_EQ(o.why, NoAnswer::kRefused);

  Mad v2 = directed(kAttrNodeInfo, {});
  v2[2] = 2;
  o = answer_mad(f, 0, 0, 0, v2);
  ASSERT_TRUE(o.response);
  EXPECT_EQ(status(*o.response), kStatusDrDirection | kStatusBadVersion);

  o = answer_mad(f, 0, 0, 0, directed(0x7777, {}));
  ASSERT_TRUE(o.response);
  EXPECT_EQ(status(*o.response), kStatusDrDirection | kStatusMethodAttrUnsupported);

  Mad resp = directed(kAttrNodeInfo, {});
  resp[3] = kGetResp;  // a response sent as a request: nobody answers it
  EXPECT_FALSE(answer_mad(f, 0, 0, 0, resp).response);

  // SMPs only on QP0, GMPs only on QP1; the SA is where the SM runs, only.
  EXPECT_EQ(answer_mad(f, 0, 1, 0, directed(kAttrNodeInfo, {})).why, NoAnswer::kNoAgent);
  EXPECT_EQ(answer_mad(f, 0, 0, 2, request(kClassPerf, kGet, kAttrPortCounters)).why, NoAnswer::kNoAgent);
  EXPECT_EQ(answer_mad(f, 0, 1, 4, request(kClassSubnAdm, kGet, 0x11)).why, NoAnswer::kNoAgent);  // no SA on sw1
}

Mad pma(uint8_t meth, uint16_t attr, uint8_t port, uint16_t select = 0) {
  Mad m = request(kClassPerf, meth, attr);
  m[kPmaData + 1] = port;
  put_be(&m[kPmaData + 2], 2, select);
  return m;
}

TEST(MadPma, PortCountersSaturateAndTheExtendedOnesDoNot) {
  MadModel f = fabric();
  PortCounterValues& c = f.nodes[1].ports[0].counters;
  c.xmit_data = 0x1'0000'0005ULL;
  c.rcv_pkts = 42;
  c.link_downed = 300;
  c.xmit_wait_ticks = 1234;
  c.vl15_dropped = 2;
  MadOutcome o = answer_mad(f, 0, 1, 2, pma(kGet, kAttrPortCounters, 1));
  ASSERT_TRUE(o.response);
  EXPECT_EQ(o.slid, 2);
  const uint8_t* d = &(*o.response)[kPmaData];
  EXPECT_EQ(status(*o.response), 0);
  EXPECT_EQ(get_bits(d, 192, 32), 0xFFFFFFFFu);  // PortXmitData stops at its maximum
  EXPECT_EQ(get_bits(d, 288, 32), 42u);
  EXPECT_EQ(get_bits(d, 56, 8), 255u);
  EXPECT_EQ(get_bits(d, 320, 32), 1234u);
  EXPECT_EQ(get_bits(d, 176, 16), 2u);
  o = answer_mad(f, 0, 1, 2, pma(kGet, kAttrPortCountersExt, 1));
  ASSERT_TRUE(o.response);
  EXPECT_EQ(get_be(&(*o.response)[kPmaData + 8], 8), 0x1'0000'0005ULL);
  o = answer_mad(f, 0, 1, 4, pma(kGet, kAttrPortCounters, 3));  // sw1's port 3
  ASSERT_TRUE(o.response);
  EXPECT_EQ(status(*o.response), 0);
  o = answer_mad(f, 0, 1, 4, pma(kGet, kAttrPortCounters, 0xFF));  // AllPortSelect is not offered
  ASSERT_TRUE(o.response);
  EXPECT_EQ(status(*o.response), kStatusBadAttrOrModifier);
  o = answer_mad(f, 0, 1, 4, pma(kGet, kAttrPortCounters, 0));  // a switch's port 0: idle
  ASSERT_TRUE(o.response);
  EXPECT_EQ(status(*o.response), 0);
  EXPECT_EQ(get_bits(&(*o.response)[kPmaData], 256, 32), 0u);
  o = answer_mad(f, 0, 1, 2, pma(kGet, kAttrPortCounters, 0));  // a CA answers for its own port
  ASSERT_TRUE(o.response);
  EXPECT_EQ(status(*o.response), 0);
  EXPECT_EQ(get_bits(&(*o.response)[kPmaData], 288, 32), 42u);
  EXPECT_EQ((*o.response)[kPmaData + 1], 0);  // PortSelect echoed
  o = answer_mad(f, 0, 1, 2, pma(kGet, kAttrClassPortInfo, 0));
  ASSERT_TRUE(o.response);
  EXPECT_EQ(get_be(&(*o.response)[kPmaData + 2], 2), (1u << 9) | (1u << 12));
}

TEST(MadPma, SetClearsAPortOnlyWhenEveryCounterIsSelected) {
  const MadModel f = fabric();
  MadOutcome o = answer_mad(f, 0, 1, 4, pma(kSet, kAttrPortCounters, 3, 0xFFFF));
  ASSERT_TRUE(o.response);
  EXPECT_EQ(status(*o.response), 0);
  ASSERT_TRUE(o.reset);
  EXPECT_EQ(o.reset->node, 3u);
  EXPECT_EQ(o.reset->port, 3);
  o = answer_mad(f, 0, 1, 4, pma(kSet, kAttrPortCounters, 3, 0x1000));
  ASSERT_TRUE(o.response);
  EXPECT_EQ(status(*o.response), kStatusBadAttrOrModifier);
  EXPECT_FALSE(o.reset);
  o = answer_mad(f, 0, 1, 4, pma(kSet, kAttrPortCounters, 0, 0xFFFF));  // a switch's port 0 has nothing to clear
  ASSERT_TRUE(o.response);
  EXPECT_EQ(status(*o.response), kStatusBadAttrOrModifier);
  EXPECT_FALSE(o.reset);
  o = answer_mad(f, 0, 1, 1, pma(kSet, kAttrPortCountersExt, 1, 0xFF));  // its own port
  ASSERT_TRUE(o.reset);
  EXPECT_EQ(o.reset->node, 0u);
}

TEST(MadPma, AResponseWithNoWayBackIsLost) {
  MadModel f = fabric();
  f.nodes[3].lft[1] = 0xFF;  // sw1 cannot reach ca0
  const MadOutcome o = answer_mad(f, 0, 1, 2, pma(kGet, kAttrPortCounters, 1));
  EXPECT_FALSE(o.response);
  EXPECT_EQ(o.why, NoAnswer::kUnroutable);
}

Mad sa(uint8_t meth, uint16_t attr, uint64_t mask = 0, uint32_t mod = 0) {
  Mad m = request(kClassSubnAdm, meth, attr, mod);
  m[2] = kSaClassVersion;
  put_be(&m[48], 8, mask);
  return m;
}

// The SA's answer to `req` from ca0, through answer_mad as a tool's query goes.
MadOutcome ask_sa(const MadModel& f, const Mad& req) { return answer_mad(f, 0, 1, 3, req); }

std::vector<uint8_t> whole(const MadOutcome& o) {
  if (!o.table.empty()) return o.table;
  return o.response ? std::vector<uint8_t>(o.response->begin(), o.response->end()) : std::vector<uint8_t>{};
}

TEST(MadSa, GetTableReturnsEveryRecordAndNoMoreBytes) {
  const MadModel f = fabric();
  const auto r = whole(ask_sa(f, sa(kGetTable, kAttrNodeRecord)));
  ASSERT_EQ(r.size(), kSaData + 4 * 112);  // 4 nodes, 108-byte records padded to 112
  EXPECT_EQ(r[3], kGetTableResp);
  EXPECT_EQ(get_be(&r[4], 2), 0u);
  EXPECT_EQ(get_be(&r[44], 2), 14u);  // AttributeOffset, in 8-byte words
  EXPECT_EQ(r[24], 1);                 // RMPP version
  EXPECT_EQ(get_be(&r[kSaData], 2), 1u);            // ca0's LID
  EXPECT_EQ(r[kSaData + 4 + 2], 1);                 // NodeType CA
  EXPECT_EQ(r[kSaData + 3 * 112 + 4 + 2], 2);       // sw1: a switch
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(&r[kSaData + 112 + 44])), "host ca1");

  Mad by_lid = sa(kGetTable, kAttrNodeRecord, 1);  // component 0: LID
  put_be(&by_lid[kSaData], 2, 4);
  const auto one = whole(ask_sa(f, by_lid));
  ASSERT_EQ(one.size(), kSaData + 112);
  EXPECT_EQ(get_be(&one[kSaData + 4 + 12], 8), 0x2001u);  // sw1's NodeGUID

  Mad none = by_lid;
  put_be(&none[kSaData], 2, 9);
  EXPECT_EQ(whole(ask_sa(f, none)).size(), kSaData);  // zero records is a success
}

TEST(MadSa, GetWantsExactlyOneRecord) {
  const MadModel f = fabric();
  Mad get = sa(kGet, kAttrNodeRecord, 1);
  put_be(&get[kSaData], 2, 2);
  MadOutcome o = ask_sa(f, get);
  ASSERT_TRUE(o.response);
  EXPECT_TRUE(o.table.empty());  // a plain 256-byte MAD
  EXPECT_EQ(method(*o.response), kGetResp);
  EXPECT_EQ(status(*o.response), 0);
  EXPECT_EQ(get_be(&(*o.response)[kSaData + 4 + 12], 8), 0x1001u);
  EXPECT_EQ(status(*ask_sa(f, sa(kGet, kAttrNodeRecord)).response), kSaTooManyRecords);
  put_be(&get[kSaData], 2, 9);
  EXPECT_EQ(status(*ask_sa(f, get).response), kSaNoRecords);
}

TEST(MadSa, BadRequestsGetTheirStatus) {
  const MadModel f = fabric();
  Mad v1 = sa(kGetTable, kAttrNodeRecord);
  v1[2] = 1;
  EXPECT_EQ(status(*ask_sa(f, v1).response), kStatusBadVersion);
  EXPECT_EQ(status(*ask_sa(f, sa(kGetTable, 0x0038)).response), kStatusMethodAttrUnsupported);  // MCMemberRecord
  EXPECT_EQ(status(*ask_sa(f, sa(kSet, kAttrNodeRecord)).response), kStatusMethodUnsupported);
  EXPECT_EQ(status(*ask_sa(f, sa(kGetTable, kAttrLinkRecord, 1u << 9)).response), kSaReqInvalid);  // no such component
  EXPECT_EQ(status(*ask_sa(f, sa(kGet, kAttrPathRecord, 1ull << 30)).response), kSaReqInvalid);
  const MadOutcome cpi = ask_sa(f, sa(kGet, kAttrClassPortInfo));
  ASSERT_TRUE(cpi.response);
  EXPECT_EQ((*cpi.response)[kSaData + 1], kSaClassVersion);
}

TEST(MadSa, LinkAndPortInfoRecordsFollowTheCablesAndCapabilities) {
  MadModel f = fabric();
  Mad from = sa(kGetTable, kAttrLinkRecord, 0b11);  // FromLID 3, FromPort 3
  put_be(&from[kSaData], 2, 3);
  from[kSaData + 2] = 3;
  auto r = whole(ask_sa(f, from));
  ASSERT_EQ(r.size(), kSaData + 8);
  EXPECT_EQ(r[kSaData + 3], 3);                    // ToPort
  EXPECT_EQ(get_be(&r[kSaData + 4], 2), 4u);       // ToLID: sw1
  f.nodes[2].ports[2].phys = PhysState::kPolling;  // that cable goes down
  f.nodes[3].ports[2].phys = PhysState::kPolling;
  EXPECT_EQ(whole(ask_sa(f, from)).size(), kSaData);

  Mad sms = sa(kGetTable, kAttrPortInfoRecord, 1u << 7, 1u << 31);  // any port with IsSM
  put_be(&sms[kSaData + 4 + 20], 4, 2);
  r = whole(ask_sa(f, sms));
  ASSERT_EQ(r.size(), kSaData + 72);
  EXPECT_EQ(get_be(&r[kSaData], 2), 3u);  // sw0's port 0
  EXPECT_EQ(r[kSaData + 2], 0);
}

TEST(MadSa, PathRecordsCarryTheSlowestLinkAndNeedRoutesBothWays) {
  MadModel f = fabric();
  f.nodes[3].ports[2].mtu = 4;  // sw1/3 at 2048
  f.nodes[3].ports[2].speed_ext = 0;
  f.nodes[3].ports[2].speed = 4;  // ... and QDR
  Mad q = sa(kGet, kAttrPathRecord, (1u << 4) | (1u << 5));  // DLID, SLID
  put_be(&q[kSaData + 40], 2, 2);
  put_be(&q[kSaData + 42], 2, 1);
  MadOutcome o = ask_sa(f, q);
  ASSERT_TRUE(o.response);
  ASSERT_EQ(status(*o.response), 0);
  const uint8_t* p = &(*o.response)[kSaData];
  EXPECT_EQ(get_be(p + 16, 8), 0x1001u);  // DGID's GUID
  EXPECT_EQ(get_be(p + 32, 8), 0x1000u);  // SGID's GUID
  EXPECT_EQ(p[54], 0x80 | 4);             // exactly 2048: sw1/3 going back
  EXPECT_EQ(p[55], 0x80 | 7);             // exactly 40 Gb/s (4x QDR)
  EXPECT_EQ(get_be(p + 50, 2), 0xFFFFu);

  Mad bigger = q;  // MTU greater than 2048: none
  put_be(&bigger[48], 8, (1u << 4) | (1u << 5) | (1u << 16) | (1u << 17));
  bigger[kSaData + 54] = 0 << 6 | 4;
  EXPECT_EQ(status(*ask_sa(f, bigger).response), kSaNoRecords);

  f.nodes[3].lft[1] = 0xFF;  // ca1 can no longer answer ca0
  EXPECT_EQ(status(*ask_sa(f, q).response), kSaNoRecords);

  const MadModel g = fabric();
  const auto all = whole(ask_sa(g, sa(kGetTable, kAttrPathRecord)));
  EXPECT_EQ(all.size(), kSaData + 16 * 64);  // every ordered pair of the 4 endports
  EXPECT_EQ(rate_code(2, 4, 2), 16);         // 4x EDR: 100 Gb/s
  EXPECT_EQ(rate_code(8, 4, 4), 22);         // 12x HDR: 600 Gb/s
  EXPECT_EQ(rate_code(1, 4, 1), 11);         // 1x FDR: 14 Gb/s
}

// An MCMemberRecord join as perftest sends it, from ca `node` of fabric().
Mad join(const MadModel& f, size_t node, uint8_t meth, uint8_t last_mgid_byte, uint32_t qkey = 0x11111111) {
  Mad m = sa(meth, kAttrMcMemberRecord,
             (1u << 0) | (1u << 1) | (1u << 2) | (1u << 6) | (1u << 7) | (1u << 12) | (1u << 13) | (1u << 16));
  uint8_t* r = &m[kSaData];
  r[0] = 0xFF, r[1] = 0x12, r[15] = last_mgid_byte;
  put_be(r + 16, 8, f.subnet_prefix);
  put_be(r + 24, 8, f.nodes[node].guid);
  put_be(r + 32, 4, qkey);
  put_be(r + 40, 2, 0xFFFF);
  r[48] = 1;  // JoinState: full member
  return m;
}

TEST(MadSaMcast, JoinsShareTheGroupsMlidAndLeavingEmptiesIt) {
  const MadModel f = fabric();
  SaGroups groups;
  MadOutcome a = answer_mad(f, 0, 1, 3, join(f, 0, kSet, 1), &groups);
  ASSERT_TRUE(a.response);
  ASSERT_EQ(status(*a.response), 0);
  EXPECT_EQ(method(*a.response), kGetResp);
  const uint16_t mlid = uint16_t(get_be(&(*a.response)[kSaData + 36], 2));
  EXPECT_EQ(mlid, 0xC000);
  ASSERT_EQ(a.mcast.size(), 1u);
  EXPECT_EQ(a.mcast[0].node, "ca0");
  EXPECT_TRUE(a.mcast[0].member);

  MadOutcome b = answer_mad(f, 1, 1, 3, join(f, 1, kSet, 1), &groups);  // ca1, same MGID
  ASSERT_EQ(status(*b.response), 0);
  EXPECT_EQ(get_be(&(*b.response)[kSaData + 36], 2), mlid);
  MadOutcome other = answer_mad(f, 1, 1, 3, join(f, 1, kSet, 2), &groups);  // another group
  EXPECT_EQ(get_be(&(*other.response)[kSaData + 36], 2), 0xC001u);
  EXPECT_EQ(whole(answer_mad(f, 0, 1, 3, sa(kGetTable, kAttrMcMemberRecord), &groups)).size(), kSaData + 3 * 56);

  MadOutcome again = answer_mad(f, 0, 1, 3, join(f, 0, kSet, 1), &groups);  // a repeated join: no change
  EXPECT_EQ(status(*again.response), 0);
  EXPECT_TRUE(again.mcast.empty());

  MadOutcome leave = answer_mad(f, 0, 1, 3, join(f, 0, kSaDelete, 1), &groups);
  ASSERT_EQ(status(*leave.response), 0);
  EXPECT_EQ(method(*leave.response), kSaDeleteResp);
  ASSERT_EQ(leave.mcast.size(), 1u);
  EXPECT_FALSE(leave.mcast[0].member);
  EXPECT_EQ(status(*answer_mad(f, 0, 1, 3, join(f, 0, kSaDelete, 1), &groups).response), kSaReqInvalid);
  answer_mad(f, 1, 1, 3, join(f, 1, kSaDelete, 1), &groups);
  ASSERT_EQ(groups.groups().size(), 1u);  // the first group went with its last member
  EXPECT_EQ(groups.groups()[0].mlid, 0xC001);
}

TEST(MadSaMcast, JoinsTheSaRefuses) {
  const MadModel f = fabric();
  SaGroups groups;
  ASSERT_EQ(status(*answer_mad(f, 0, 1, 3, join(f, 0, kSet, 1), &groups).response), 0);
  // Another Q_Key than the group's.
  EXPECT_EQ(status(*answer_mad(f, 1, 1, 3, join(f, 1, kSet, 1, 0x22), &groups).response), kSaReqInvalid);
  // ca0 joining for ca1 (a proxy join).
  EXPECT_EQ(status(*answer_mad(f, 0, 1, 3, join(f, 1, kSet, 1), &groups).response), kSaReqInvalid);
  // Creating a group without its parameters.
  Mad bare = join(f, 0, kSet, 7);
  put_be(&bare[48], 8, (1u << 0) | (1u << 1) | (1u << 16));
  EXPECT_EQ(status(*answer_mad(f, 0, 1, 3, bare, &groups).response), kSaInsufficientComponents);
  // A unicast MGID.
  Mad unicast = join(f, 0, kSet, 7);
  unicast[kSaData] = 0xFE;
  EXPECT_EQ(status(*answer_mad(f, 0, 1, 3, unicast, &groups).response), kSaInvalidGid);
  // No MGID: the SA makes one up.
  Mad any = join(f, 0, kSet, 0);
  std::fill(&any[kSaData], &any[kSaData + 16], 0);
  const MadOutcome made = answer_mad(f, 0, 1, 3, any, &groups);
  ASSERT_EQ(status(*made.response), 0);
  EXPECT_EQ((*made.response)[kSaData], 0xFF);
  EXPECT_EQ(groups.groups().size(), 2u);
  // Without the SM's groups (an Ethernet fabric has none) nobody serves them.
  EXPECT_EQ(status(*answer_mad(f, 0, 1, 3, join(f, 0, kSet, 1)).response), kStatusMethodUnsupported);
}

}  // namespace
}  // namespace vf::mad
