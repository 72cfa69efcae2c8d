// The CM messages in the IBA's layout (12.6): fields where a capture
// decoder (Wireshark's infiniband dissector) expects them, and every
// message type through encode and decode unchanged.
#include <gtest/gtest.h>

#include <cstring>

#include "daemon/cm/cm_mad.hpp"
#include "daemon/cm/wire.hpp"
#include "daemon/mad/mad.hpp"

namespace vf::cm {
namespace {

Msg req() {
  Msg m;
  m.type = MsgType::kReq;
  m.local_comm = 0x11223344;
  m.service_id = 0x0000000001060000ull | 7174;
  m.src = Addr{2, 0xC6120001, false, 40000};
  m.dst = Addr{2, 0xC6120002, false, 7174};
  m.qpn = 0x010203;
  m.psn = 0xABCDEF;
  m.responder_resources = 4;
  m.initiator_depth = 2;
  m.retry = 6;
  m.rnr_retry = 7;
  m.srq = 1;
  m.qp_type = kQptRc;
  m.path.slid = 1;
  m.path.dlid = 2;
  m.path.sgid[15] = 1;
  m.path.dgid[15] = 2;
  m.path.mtu = 5;
  m.path.rate = 16;
  m.path.sl = 3;
  m.path.packet_life = 18;
  m.path.pkey = 0xFFFF;
  m.private_data = {'h', 'e', 'l', 'l', 'o'};
  return m;
}

TEST(CmMad, AReqIsLaidOutAsTheIbaSays) {
  const CmMad mad = encode(req(), 0x0002C90300001234ull, 0x77);
  EXPECT_EQ(mad[0], 1);            // base version
  EXPECT_EQ(mad[1], 0x07);         // the CM class
  EXPECT_EQ(mad[2], 2);            // class version
  EXPECT_EQ(mad[3], 0x03);         // Send
  EXPECT_EQ(mad::get_be(&mad[8], 8), 0x77u);
  EXPECT_EQ(mad::get_be(&mad[16], 2), 0x0010u);  // REQ
  EXPECT_EQ(mad::get_be(&mad[24], 4), 0x11223344u);             // Local Communication ID
  EXPECT_EQ(mad::get_be(&mad[32], 8), 0x0000000001061C06ull);   // ServiceID: RDMA_PS_TCP, port 7174
  EXPECT_EQ(mad::get_be(&mad[40], 8), 0x0002C90300001234ull);   // Local CA GUID
  EXPECT_EQ(mad::get_be(&mad[56], 3), 0x010203u);               // Local QPN
  EXPECT_EQ(mad[59], 4);                                        // Responder Resources
  EXPECT_EQ(mad::get_be(&mad[68], 3), 0xABCDEFu);               // Starting PSN
  EXPECT_EQ(mad[71] & 7, 6);                                    // Retry Count
  EXPECT_EQ(mad[74] >> 4, 5);                                   // Path MTU 4096
  EXPECT_EQ(mad::get_be(&mad[76], 2), 1u);                      // Primary Local Port LID
  EXPECT_EQ(mad::get_be(&mad[78], 2), 2u);                      // Primary Remote Port LID
  EXPECT_EQ(mad[118] >> 4, 3);                                  // Primary SL
  // Private data at 164: rdma_cm's IP header, then the app's bytes.
  EXPECT_EQ(mad[165], 0x40);                                    // IPv4
  EXPECT_EQ(mad::get_be(&mad[166], 2), 40000u);                 // source port
  EXPECT_EQ(mad::get_be(&mad[180], 4), 0xC6120001u);            // source address
  EXPECT_EQ(mad::get_be(&mad[196], 4), 0xC6120002u);            // destination address
  EXPECT_EQ(std::memcmp(&mad[200], "hello", 5), 0);
}

TEST(CmMad, EveryMessageSurvivesTheWire) {
  const Msg r = req();
  auto back = decode(encode(r, 1, 2));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->type, MsgType::kReq);
  EXPECT_EQ(back->local_comm, r.local_comm);
  EXPECT_EQ(back->service_id, r.service_id);
  EXPECT_EQ(back->qpn, r.qpn);
  EXPECT_EQ(back->psn, r.psn);
  EXPECT_EQ(back->responder_resources, 4);
  EXPECT_EQ(back->initiator_depth, 2);
  EXPECT_EQ(back->retry, 6);
  EXPECT_EQ(back->rnr_retry, 7);
  EXPECT_EQ(back->srq, 1);
  EXPECT_EQ(back->src.ip, r.src.ip);
  EXPECT_EQ(back->src.port, 40000);
  EXPECT_EQ(back->dst.ip, r.dst.ip);
  EXPECT_EQ(back->dst.port, 7174);
  EXPECT_EQ(back->path.slid, 1);
  EXPECT_EQ(back->path.dlid, 2);
  EXPECT_EQ(back->path.sgid, r.path.sgid);
  EXPECT_EQ(back->path.dgid, r.path.dgid);
  EXPECT_EQ(back->path.mtu, 5);
  EXPECT_EQ(back->path.rate, 16);
  EXPECT_EQ(back->path.sl, 3);
  EXPECT_EQ(back->path.packet_life, 18);
  EXPECT_FALSE(back->path.global);
  ASSERT_EQ(back->private_data.size(), kReqPrivate);
  EXPECT_EQ(std::memcmp(back->private_data.data(), "hello", 5), 0);

  for (MsgType t : {MsgType::kRep, MsgType::kRtu, MsgType::kRej, MsgType::kMra, MsgType::kDreq, MsgType::kDrep}) {
    Msg m;
    m.type = t;
    m.local_comm = 5;
    m.remote_comm = 6;
    m.qpn = 0x123;
    m.psn = 0x456;
    m.qkey = 9;
    m.reason = 28;
    m.responder_resources = 3;
    m.initiator_depth = 1;
    m.rnr_retry = 7;
    m.private_data = {1, 2, 3};
    auto b = decode(encode(m, 1, 2));
    ASSERT_TRUE(b) << int(t);
    EXPECT_EQ(b->type, t);
    EXPECT_EQ(b->local_comm, 5u);
    EXPECT_EQ(b->remote_comm, 6u);
    EXPECT_EQ(b->private_data[2], 3);
    if (t == MsgType::kRep) {
      EXPECT_EQ(b->qpn, 0x123u);
      EXPECT_EQ(b->psn, 0x456u);
      EXPECT_EQ(b->responder_resources, 3);
      EXPECT_EQ(b->initiator_depth, 1);
      EXPECT_EQ(b->rnr_retry, 7);
      EXPECT_EQ(b->private_data.size(), kRepPrivate);
    }
    if (t == MsgType::kRej) {
      EXPECT_EQ(b->reason, 28);
      EXPECT_EQ(b->private_data.size(), kRejPrivate);
    }
  }

  Msg sreq;
  sreq.type = MsgType::kSidrReq;
  sreq.local_comm = 77;
  sreq.service_id = 0x01110000ull | 7174;
  sreq.src = Addr{2, 0xC6120001, false, 5};
  sreq.dst = Addr{2, 0xC6120002, false, 7174};
  auto sr = decode(encode(sreq, 1, 2));
  ASSERT_TRUE(sr);
  EXPECT_EQ(sr->local_comm, 77u);
  EXPECT_EQ(sr->qp_type, kQptUd);
  EXPECT_EQ(sr->dst.ip, 0xC6120002u);
  EXPECT_EQ(sr->private_data.size(), kSidrReqPrivate);

  Msg srep;
  srep.type = MsgType::kSidrRep;
  srep.remote_comm = 77;
  srep.reason = kSidrSuccess;
  srep.qpn = 0x42;
  srep.qkey = kUdpQkey;
  auto sp = decode(encode(srep, 1, 2));
  ASSERT_TRUE(sp);
  EXPECT_EQ(sp->remote_comm, 77u);
  EXPECT_EQ(sp->qpn, 0x42u);
  EXPECT_EQ(sp->qkey, kUdpQkey);
  EXPECT_EQ(sp->private_data.size(), kSidrRepPrivate);
}

TEST(CmMad, WhatIsNotACmMessageOfOursIsDropped) {
  CmMad good = encode(req(), 1, 2);
  for (auto [at, value] : {std::pair{0, 2}, {1, 0x03}, {2, 1}, {3, 0x01}, {17, 0x0F}, {17, 0x1B}}) {
    CmMad bad = good;
    bad[size_t(at)] = uint8_t(value);
    EXPECT_FALSE(decode(bad)) << at << "=" << value;
  }
  CmMad rd = good;
  rd[24 + 43] = uint8_t((rd[24 + 43] & ~6) | 2 << 1);  // transport RD
  EXPECT_FALSE(decode(rd));
  CmMad mtu = good;
  mtu[24 + 50] = 0x07;  // MTU code 0
  EXPECT_FALSE(decode(mtu));
  CmMad v6 = good;
  v6[165] = 0x60;  // an IPv6 rdma_cm header: no vHCA has IPv6
  EXPECT_FALSE(decode(v6));
}

}  // namespace
}  // namespace vf::cm
