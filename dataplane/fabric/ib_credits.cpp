#include "dataplane/fabric/ib_credits.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "dataplane/wire/fcp.hpp"

namespace vf::dp {

using wire::kCreditMask;
using wire::packet_blocks;

namespace {
constexpr CounterDef kVlCreditDefs[] = {
    VF_GAUGE(VlCreditGauges, credits, "credits", "vl_credits_blocks", kEvents,
             "64-byte blocks this port may still send on the VL (the peer's FCCL minus FCTBS)"),
    VF_GAUGE(VlCreditGauges, buffer_blocks, "buffer_blocks", "vl_buffer_blocks", kEvents,
             "64-byte blocks of this port's receive buffer for the VL"),
    VF_GAUGE(VlCreditGauges, used_blocks, "used_blocks", "vl_buffer_used_blocks", kEvents,
             "receive buffer blocks held by packets now"),
    VF_GAUGE(VlCreditGauges, peak_blocks, "peak_blocks", "vl_buffer_peak_blocks", kEvents,
             "most receive buffer blocks ever held at once"),
};
static_assert(valid_counter_table<VlCreditGauges>(kVlCreditDefs));
}  // namespace

const CounterTable kVlCreditCounters{kVlCreditDefs};

VlCreditGauges gauges(const VlCreditSnapshot& v) {
  return {v.credits, v.buffer_blocks, v.used_blocks, v.peak_blocks};
}

uint32_t default_vl_buffer(const LinkParams& link, uint32_t max_frame) {
  const uint64_t loop_ns = 2 * link.delay_ns + 2 * ((uint64_t(max_frame) * 8 * 1'000'000'000ULL +
                                                     link.rate_bps - 1) / link.rate_bps);
  const uint64_t bdp = loop_ns * link.rate_bps / 8 / 1'000'000'000ULL;
  const uint64_t bytes = std::max<uint64_t>(32768, 2 * bdp + max_frame);
  // The credit window is 2048 blocks; a bigger buffer is never advertised.
  return uint32_t(std::min<uint64_t>(bytes, 2048 * wire::kBlockBytes) + wire::kBlockBytes - 1) /
         wire::kBlockBytes * wire::kBlockBytes;
}

Nanos fcp_resend_period(uint64_t rate_bps) {
  const Nanos iba = Nanos(65536ULL * 8 * 1'000'000'000ULL / rate_bps);
  return std::max(iba, kMinResend);
}

IbCredits::IbCredits(Port& port, rte_mempool* pool, const CreditConfig& cfg)
    : port_(port),
      pool_(pool),
      cfg_(cfg),
      all_vls_(cfg.data_vls <= kNumDataClasses ? (1u << cfg.data_vls) - 1 : 0),
      fcp_threshold_(std::max<uint32_t>(1, packet_blocks(cfg.vl_buffer_bytes) / 4)),
      period_(fcp_resend_period(port.link_params().rate_bps)),
      cur_period_(period_),
      timer_(&IbCredits::on_resend, this) {
  if (port.link_layer() != LinkLayer::kInfiniBand || !port.connected())
    throw std::invalid_argument("port " + port.name() + ": credits need a linked IB port");
  if (cfg.data_vls == 0 || cfg.data_vls > kNumDataClasses)
    throw std::invalid_argument("port " + port.name() + ": 1..8 data VLs");
  if (cfg.vl_buffer_bytes < port.max_frame())
    throw std::invalid_argument("port " + port.name() + ": a VL buffer of " +
                                std::to_string(cfg.vl_buffer_bytes) +
                                " bytes cannot hold one packet of the link's MTU (" +
                                std::to_string(port.max_frame()) + " bytes)");
  for (unsigned v = 0; v < cfg.data_vls; ++v) {
    vl_[v].capacity = packet_blocks(cfg.vl_buffer_bytes);
    // Credit-controlled queues are bounded by the buffers upstream.
    port.set_class_limit(v, EgressQueue::kUnbounded);
  }
  port.set_gate(EgressGate{this, &IbCredits::may_transmit, &IbCredits::on_transmit});
  port.set_ingress(IngressHooks{this, &IbCredits::on_control, &IbCredits::admit, &IbCredits::release});
  port.set_link_control(LinkControl{this, &IbCredits::next_fcp});
  port.set_link_state_hook(LinkStateHook{this, &IbCredits::on_link_state});
  link_up();
}

IbCredits::~IbCredits() {
  port_.scheduler().disarm(timer_);
  port_.set_gate({});
  port_.set_ingress({});
  port_.set_link_control({});
  port_.set_link_state_hook({});
}

void IbCredits::reset_state() {
  for (Vl& v : vl_) {
    v.fctbs = v.fccl = v.abr = 0;
    v.fccl_known = false;
    v.freed = 0;  // `used` stays: packets still in the buffer will be released
  }
  heard_ = 0;
  starved_ = 0;
  init_ = true;
}

void IbCredits::link_up() {
  reset_state();
  cur_period_ = period_;
  want_fcp(all_vls_);
  port_.scheduler().arm_after(timer_, cur_period_);
}

void IbCredits::want_fcp(uint32_t vl_mask) {
  due_ |= vl_mask & all_vls_;
  // Asked every time, not only when due_ was empty: an FCP that found no
  // mbuf (next_fcp) stays due and must get another turn.
  if (due_) port_.request_control();
}

void IbCredits::note_activity(unsigned vl) {
  active_ |= 1u << vl;
  if (cur_period_ == period_ && timer_.armed()) return;
  // Back from idle: the next round comes one active period from now.
  cur_period_ = period_;
  const Nanos at = port_.scheduler().now() + period_;
  if (!timer_.armed() || at < timer_.deadline) port_.scheduler().arm(timer_, at);
}

// ---------------------------------------------------------------- sender

bool IbCredits::may_transmit(void* self, unsigned cls, uint32_t bytes) {
  auto& c = *static_cast<IbCredits*>(self);
  if (cls >= c.cfg_.data_vls) return false;  // not operational on this link
  const Vl& v = c.vl_[cls];
  if (v.fccl_known && wire::credit_allows(v.fctbs, v.fccl, packet_blocks(bytes))) [[likely]]
    return true;
  c.starve(cls);
  return false;
}

// Held for want of credit: keep the rounds (and this end's FCTBS) going.
void IbCredits::starve(unsigned vl) {
  if (starved_ >> vl & 1) return;
  starved_ |= 1u << vl;
  note_activity(vl);
}

void IbCredits::on_transmit(void* self, unsigned cls, uint32_t bytes) {
  auto& c = *static_cast<IbCredits*>(self);
  Vl& v = c.vl_[cls];
  v.fctbs = uint16_t((v.fctbs + packet_blocks(bytes)) & kCreditMask);
  c.starved_ &= ~(1u << cls);
  c.note_activity(cls);
}

// ---------------------------------------------------------------- receiver

bool IbCredits::admit(void* self, unsigned cls, uint32_t bytes) {
  auto& c = *static_cast<IbCredits*>(self);
  const uint32_t blocks = packet_blocks(bytes);
  if (cls == kMgmtClass) {
    if (c.vl15_used_ + bytes > c.cfg_.vl15_buffer_bytes) {
      c.port_.counters().vl15_dropped.add();
      return false;
    }
    c.vl15_used_ += bytes;
    return true;
  }
  if (cls >= c.cfg_.data_vls) {
    c.port_.counters().rcv_errors.add();
    return false;
  }
  Vl& v = c.vl_[cls];
  // Every data packet the peer sent counts in ABR, stored or not: the peer
  // counted it in its FCTBS.
  v.abr = uint16_t((v.abr + blocks) & kCreditMask);
  c.note_activity(cls);
  if (v.used + blocks > v.capacity) {
    c.port_.counters().excessive_buffer_overruns.add();
    c.port_.counters().rcv_errors.add();
    // Its blocks come back at once: nothing holds them.
    v.freed += blocks;
    c.want_fcp(1u << cls);
    return false;
  }
  v.used += blocks;
  v.peak = std::max(v.peak, v.used);
  return true;
}

void IbCredits::release(void* self, unsigned cls, uint32_t bytes) {
  auto& c = *static_cast<IbCredits*>(self);
  if (cls == kMgmtClass) {
    c.vl15_used_ -= std::min(c.vl15_used_, bytes);
    return;
  }
  if (cls >= c.cfg_.data_vls) return;
  Vl& v = c.vl_[cls];
  const uint32_t blocks = packet_blocks(bytes);
  v.used -= std::min(v.used, blocks);
  v.freed += blocks;
  c.note_activity(cls);
  // Credits go back in chunks of a quarter of the buffer: the rest of it
  // covers the credit loop meanwhile (default_vl_buffer); an FCP per drained
  // buffer, or per 4 KiB packet with an eighth, cost the dataplane 18-35%
  // per frame (BM_IbPath). What is left under the threshold goes with the
  // next resend round.
  if (v.freed >= c.fcp_threshold_) c.want_fcp(1u << cls);
}

// ---------------------------------------------------------------- FCPs

rte_mbuf* IbCredits::next_fcp(void* self) {
  auto& c = *static_cast<IbCredits*>(self);
  if (!c.due_) return nullptr;
  rte_mbuf* m = rte_pktmbuf_alloc(c.pool_);
  uint8_t* b = m ? reinterpret_cast<uint8_t*>(rte_pktmbuf_append(m, wire::kFcpLen)) : nullptr;
  if (!b) {
    // No mbuf: the due VLs stay due; the next release or round tries again.
    if (m) rte_pktmbuf_free(m);
    c.fcp_unsent_.add();
    return nullptr;
  }
  const unsigned vl = unsigned(__builtin_ctz(c.due_));
  c.due_ &= c.due_ - 1;
  Vl& v = c.vl_[vl];
  const uint32_t grant = std::min<uint32_t>(v.capacity - v.used, wire::kCreditWindow);
  wire::Fcp f;
  f.op = c.init_ ? wire::FcpOp::kInit : wire::FcpOp::kNormal;
  f.fctbs = v.fctbs;
  f.vl = uint8_t(vl);
  f.fccl = uint16_t((v.abr + grant) & kCreditMask);
  wire::fcp_put(b, f);
  v.freed = 0;
  c.fcp_sent_.add();
  return m;
}

bool IbCredits::on_control(void* self, Port&, rte_mbuf* m) {
  if (rte_pktmbuf_pkt_len(m) != wire::kFcpLen) return false;  // a data packet
  static_cast<IbCredits*>(self)->receive_fcp(m);
  return true;
}

void IbCredits::receive_fcp(rte_mbuf* m) {
  wire::Fcp f;
  const wire::FcpError err =
      m->nb_segs == 1 ? wire::fcp_parse(rte_pktmbuf_mtod(m, const uint8_t*), rte_pktmbuf_data_len(m), f)
                      : wire::FcpError::kLength;
  rte_pktmbuf_free(m);
  if (err != wire::FcpError::kOk || f.vl >= cfg_.data_vls) {
    // A link packet error (bad LPCRC, reserved Op, a VL not operational).
    fcp_errors_.add();
    port_.counters().rcv_errors.add();
    return;
  }
  fcp_rcvd_.add();
  if (f.op == wire::FcpOp::kInit && !init_) {
    // The peer retrained alone: this end restarts from a clean state too.
    reset_state();
    want_fcp(all_vls_);
  }
  Vl& v = vl_[f.vl];
  v.abr = f.fctbs;
  v.fccl = f.fccl;
  v.fccl_known = true;
  // Our rounds went quiet, yet the peer's go on: it holds a packet it has
  // no credit for, perhaps because our grants were lost. Answer now. (Our
  // answer starts no rounds, so two quiet ends do not keep each other awake.)
  if (!timer_.armed()) want_fcp(1u << f.vl);
  heard_ |= 1u << f.vl;
  if (init_ && heard_ == all_vls_) init_ = false;
  port_.wake();
}

// ---------------------------------------------------------------- timing

void IbCredits::on_link_state(void* self, bool up) {
  auto& c = *static_cast<IbCredits*>(self);
  if (up) return c.link_up();
  // Nothing to send on a dead link; training starts the rounds again.
  c.port_.scheduler().disarm(c.timer_);
  c.due_ = 0;
}

void IbCredits::on_resend(Timer& t, Nanos now) {
  auto& c = CtxTimer::owner<IbCredits>(t);
  if (c.active_) {
    c.cur_period_ = c.period_;
    c.want_fcp(c.active_ | 1u << c.rr_vl_);
    c.rr_vl_ = uint8_t((c.rr_vl_ + 1) % c.cfg_.data_vls);
  } else if (c.cur_period_ >= kMaxIdleResend && !c.starved_) {
    return;  // quiet link: the next packet starts the rounds again
  } else {
    // Idle, or starved (nothing moves, perhaps for good: a credit loop):
    // slow down, but a starved sender never stops asking.
    c.cur_period_ = std::min(c.cur_period_ * 2, kMaxIdleResend);
    c.want_fcp(c.all_vls_);
  }
  c.active_ = 0;
  c.port_.scheduler().arm(c.timer_, now + c.cur_period_);
}

uint32_t IbCredits::available(const Vl& v) {
  const uint32_t ahead = uint32_t(v.fccl - v.fctbs) & kCreditMask;
  return v.fccl_known && ahead <= wire::kCreditWindow ? ahead : 0;
}

CreditSnapshot IbCredits::snapshot() const {
  CreditSnapshot s{};
  s.data_vls = cfg_.data_vls;
  s.init = init_;
  for (unsigned i = 0; i < cfg_.data_vls; ++i) {
    const Vl& v = vl_[i];
    s.vl[i] = VlCreditSnapshot{v.fctbs, v.fccl, v.abr, v.fccl_known, v.capacity, v.used, v.peak,
                               available(v)};
  }
  s.vl15_used = vl15_used_;
  s.vl15_buffer = cfg_.vl15_buffer_bytes;
  s.fcp_sent = fcp_sent_.get();
  s.fcp_rcvd = fcp_rcvd_.get();
  s.fcp_errors = fcp_errors_.get();
  s.fcp_unsent = fcp_unsent_.get();
  return s;
}

}  // namespace vf::dp
