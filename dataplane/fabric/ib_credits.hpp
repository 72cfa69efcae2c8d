// IBA credit-based link flow control (Vol. 1 §7.9) for one IB port. A port is
// both a sender and a receiver on its link, so one object holds both halves
// and plugs into the port's seams (port_hooks.hpp):
//
// Sender half (EgressGate). Per data VL: FCTBS, the blocks (64 bytes) this end
// sent since the link came up, and FCCL, the limit the peer granted in its
// last flow-control packet, both modulo 4096. A packet of b blocks may go
// when (FCCL - (FCTBS + b)) mod 4096 <= 2048; otherwise it waits in its queue
// -- never dropped -- and the port counts PortXmitWait. Until the peer's first
// FCP after the link came up nothing goes.
//
// Receiver half (IngressHooks). Per data VL a buffer of vl_buffer bytes in
// blocks, and ABR, the blocks received, which each FCP from the peer resets to
// the peer's FCTBS (so a packet lost on the wire costs no credit for good). A
// data packet occupies its blocks until the owner releases it: an HCA port at
// once, a switch when the packet leaves its egress port -- which is how
// backpressure travels hop by hop back to the sending vHCA. A correct sender
// never overruns a buffer; a packet that would is dropped and counted
// (PortRcvErrors, ExcessiveBufferOverrunErrors). VL15 is not flow controlled:
// it has its own small buffer and a packet that does not fit is dropped
// (VL15Dropped). A data packet on a VL that is not operational is dropped
// (PortRcvErrors).
//
// Flow-control packets (LinkControl, built when the wire is free so they carry
// the newest values): per VL this end's FCTBS and FCCL = ABR + min(free blocks,
// 2048). One is due for a VL when the blocks freed since its last FCP reach a
// quarter of the buffer, and periodically (the IBA's
// resend rule: a lost or corrupted FCP is replaced by the next one). The
// period is 65,536 symbol times (a symbol taken as one byte time at the
// link's data rate), but not less than kMinResend so a fast emulated link
// does not spend the lcore on FCPs; each round covers the VLs active since the
// last one plus one more in turn. With no traffic at all the period doubles,
// each round covering every VL, and the rounds stop once it reaches
// kMaxIdleResend (an idle daemon sleeps; every FCP was resent a dozen times
// by then); the next packet either way starts them again. A sender that
// holds a packet it has no credit for never stops: its rounds keep going
// (slowing down to one per kMaxIdleResend while nothing moves), carrying its
// FCTBS, and a receiver whose own rounds went quiet answers
// every FCP it hears -- so credit that was lost with FCPs (or with data
// packets, which the FCTBS/ABR sync recovers) comes back even after the
// receiver stopped resending.
//
// Link (re)training: link_up() restarts this end from a clean credit state --
// FCTBS, FCCL and ABR zero, nothing may be sent -- and its FCPs carry
// Op = Init until the peer has answered on every VL. An Init FCP from a peer
// that retrained alone makes this end restart too, so both ends agree.
#pragma once

#include <rte_mempool.h>

#include <array>
#include <cstdint>

#include "core/counter_def.hpp"
#include "dataplane/fabric/ctx_timer.hpp"
#include "dataplane/fabric/port.hpp"
#include "dataplane/fabric/types.hpp"

namespace vf::dp {

inline constexpr Nanos kMinResend = 20'000;            // 20 us
inline constexpr Nanos kMaxIdleResend = 100'000'000;   // 100 ms

struct CreditConfig {
  uint8_t data_vls = 1;              // operational data VLs of the link (1..8)
  uint32_t vl_buffer_bytes = 32768;  // receive buffer per data VL
  uint32_t vl15_buffer_bytes = 2048;
};

// One VL's credit state, as the control thread reads it (snapshot()).
struct VlCreditSnapshot {
  uint16_t fctbs, fccl, abr;     // modulo 4096
  bool fccl_known;               // the peer's FCP arrived since the link came up
  uint32_t buffer_blocks;        // this end's receive buffer
  uint32_t used_blocks;          // held by packets now
  uint32_t peak_blocks;
  uint32_t credits;              // blocks this end may still send: (FCCL - FCTBS) mod 4096
};

// One VL's credit levels as plain gauges (kVlCreditCounters), for metrics.
struct VlCreditGauges {
  uint64_t credits;        // blocks this end may still send on the VL
  uint64_t buffer_blocks;  // this end's receive buffer for the VL
  uint64_t used_blocks;    // held by packets now
  uint64_t peak_blocks;
};
extern const CounterTable kVlCreditCounters;
VlCreditGauges gauges(const VlCreditSnapshot& v);

struct CreditSnapshot {
  uint8_t data_vls;
  bool init;  // still exchanging Init FCPs
  std::array<VlCreditSnapshot, kNumDataClasses> vl;
  uint32_t vl15_used, vl15_buffer;
  uint64_t fcp_sent, fcp_rcvd, fcp_errors;
  uint64_t fcp_unsent;  // a due FCP found no mbuf (it goes with a later turn)
};

// Default receive buffer per VL for a link: the credit loop's round trip
// (data out, FCP back: twice the delay plus a maximum frame each way) at the
// link's rate, twice over, and at least 32 KiB, in whole blocks.
uint32_t default_vl_buffer(const LinkParams& link, uint32_t max_frame);
// The IBA resend period, 65,536 symbol times, at `rate_bps` (>= kMinResend).
Nanos fcp_resend_period(uint64_t rate_bps);

class IbCredits {
 public:
  // Plugs into `port` (already attached to its link). `pool` supplies FCP mbufs.
  IbCredits(Port& port, rte_mempool* pool, const CreditConfig& cfg);
  ~IbCredits();
  IbCredits(const IbCredits&) = delete;
  IbCredits& operator=(const IbCredits&) = delete;
  // The port's link rate changed: the resend period follows it (the buffer,
  // sized for the old bandwidth-delay product, does not, as on hardware).
  void rate_changed() { period_ = fcp_resend_period(port_.link_params().rate_bps); }

  // Credit initialisation (link up, or up again after down).
  void link_up();

  // On the lcore (the credit state is plain data); the daemon copies it with
  // the other snapshots it takes there.
  CreditSnapshot snapshot() const;
  const CreditConfig& config() const { return cfg_; }
  const Port& port() const { return port_; }

 private:
  struct Vl {
    uint16_t fctbs = 0, fccl = 0, abr = 0;
    bool fccl_known = false;
    uint32_t capacity = 0, used = 0, peak = 0;
    uint32_t freed = 0;  // blocks freed since this VL's last FCP
  };

  static bool may_transmit(void* self, unsigned cls, uint32_t bytes);
  static void on_transmit(void* self, unsigned cls, uint32_t bytes);
  static bool on_control(void* self, Port& port, rte_mbuf* m);
  static bool admit(void* self, unsigned cls, uint32_t bytes);
  static void release(void* self, unsigned cls, uint32_t bytes);
  static rte_mbuf* next_fcp(void* self);
  static void on_link_state(void* self, bool up);
  static void on_resend(Timer& t, Nanos now);

  void receive_fcp(rte_mbuf* m);
  void reset_state();
  void want_fcp(uint32_t vl_mask);
  void note_activity(unsigned vl);
  void starve(unsigned vl);
  static uint32_t available(const Vl& v);

  Port& port_;
  rte_mempool* pool_;
  const CreditConfig cfg_;
  const uint32_t all_vls_;        // mask of the operational data VLs
  const uint32_t fcp_threshold_;  // blocks freed that make an FCP due
  Nanos period_;                  // resend period while active (from the link rate)
  std::array<Vl, kNumDataClasses> vl_{};
  uint32_t vl15_used_ = 0;
  uint32_t due_ = 0;        // VLs owed an FCP
  uint32_t active_ = 0;     // VLs with traffic since the last resend round
  uint32_t heard_ = 0;      // VLs the peer sent an FCP for since link_up
  uint32_t starved_ = 0;    // VLs holding a packet this end has no credit for
  bool init_ = true;        // Op = Init until the peer answered on every VL
  uint8_t rr_vl_ = 0;       // the idle VL the next round covers too
  Nanos cur_period_;
  CtxTimer timer_;  // the resend rounds; not armed on a quiet link

  Counter fcp_sent_, fcp_rcvd_, fcp_errors_, fcp_unsent_;
};

}  // namespace vf::dp
