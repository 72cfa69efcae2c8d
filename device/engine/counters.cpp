// The engine's counter table. Names are the Counters fields (what fabricctl
// has always shown); sysfs names are rxe's hw_counters where rxe counts the
// same event, so tools that read those files find them.
#include "device/engine/hca.hpp"

namespace vf::engine {
namespace {

#define C(field, sysfs, unit, help) VF_COUNTER(Counters, field, #field, sysfs, unit, help)
constexpr CounterDef kDefs[] = {
    C(tx_packets, "sent_pkts", kPackets, "transport packets handed to the port"),
    C(tx_bytes, "sent_bytes", kBytes, "transport bytes handed to the port (BTH to pad)"),
    C(rx_packets, "rcvd_pkts", kPackets, "transport packets received from the port"),
    C(rx_bytes, "rcvd_bytes", kBytes, "transport bytes received from the port"),
    C(rx_dropped, "rx_dropped", kPackets,
      "received packets dropped: malformed, unknown QP, wrong state or bad source"),
    C(tx_stalls, "tx_stalls", kEvents, "times a requester found its class full or no mbuf"),
    C(retransmit_timeouts, "retransmit_timeouts", kEvents, "RC retransmission timer expiries"),
    C(retransmitted_packets, "retransmitted_packets", kPackets, "packets sent again (go-back-N)"),
    C(seq_naks_sent, "out_of_seq_request", kEvents, "PSN sequence error NAKs sent"),
    C(seq_naks_rcvd, "rcvd_seq_err", kEvents, "PSN sequence error NAKs received"),
    C(rnr_naks_sent, "send_rnr_err", kEvents, "RNR NAKs sent (no receive WQE)"),
    C(rnr_naks_rcvd, "rcvd_rnr_err", kEvents, "RNR NAKs received"),
    C(other_naks_sent, "other_naks_sent", kEvents, "access, invalid-request and operational NAKs sent"),
    C(other_naks_rcvd, "other_naks_rcvd", kEvents, "access, invalid-request and operational NAKs received"),
    C(acks_sent, "acks_sent", kPackets, "ACK packets sent (coalesced)"),
    C(acks_rcvd, "acks_rcvd", kPackets, "ACK packets received"),
    C(duplicate_requests, "duplicate_request", kPackets, "duplicate requests answered again"),
    C(dma_errors, "dma_errors", kEvents, "process_vm_* copies that were short or failed"),
    C(dma_calls, "dma_calls", kEvents, "process_vm_* system calls (the lcore's main cost)"),
    C(hostile_ring_events, "hostile_ring_events", kEvents, "bad indices or WQEs found in an app's rings"),
    C(cq_overruns, "cq_overruns", kEvents, "CQEs that found their CQ full"),
    C(cqes, "cqes", kEvents, "completions written"),
    C(qkey_violations, "qkey_violations", kPackets, "UD packets dropped for a Q_Key mismatch"),
    C(pkey_violations, "pkey_violations", kPackets,
      "packets dropped because their P_Key does not match their QP's (IBA 10.9.3)"),
    C(ud_no_wqe_drops, "ud_no_wqe_drops", kPackets, "UD packets dropped for want of a receive WQE"),
    C(mcast_rx_packets, "mcast_rx_packets", kPackets,
      "multicast datagrams received for a group with a member QP here (before the copy per member)"),
    C(mcast_rx_no_member, "mcast_rx_no_member", kPackets,
      "multicast datagrams dropped: no QP here is attached to their group, or no GRH"),
    C(mcast_copy_failures, "mcast_copy_failures", kPackets,
      "copies of a multicast datagram for a member QP lost for want of an mbuf"),
    C(out_of_sequence, "out_of_sequence", kPackets,
      "RC requests received ahead of the expected PSN (a packet before them was lost)"),
    C(np_ecn_marked_roce_packets, "np_ecn_marked_roce_packets", kPackets,
      "RoCE request packets received with CE set (DCQCN notification point)"),
    C(np_cnp_sent, "np_cnp_sent", kPackets, "CNPs sent for CE-marked packets, at most one per QP per interval"),
    C(rp_cnp_handled, "rp_cnp_handled", kPackets, "CNPs received that the DCQCN reaction point acted on"),
    C(rp_cnp_ignored, "rp_cnp_ignored", kPackets,
      "CNPs received and ignored (reaction point off, unknown QP, or not RC/UC)"),
    C(rx_qp_unknown, "rx_qp_unknown", kPackets,
      "packets dropped: no QP here ever had their destination QP number"),
    C(rx_qp_destroyed, "rx_qp_destroyed", kPackets,
      "packets dropped: their QP was destroyed while they were in flight (a peer tearing down mid-transfer)"),
    C(rx_qp_not_ready, "rx_qp_not_ready", kPackets, "packets dropped: their QP is in RESET, INIT or ERR"),
    C(rx_qp_mismatch, "rx_qp_mismatch", kPackets,
      "packets dropped: not from their connected QP's peer, or not of their QP's transport"),
    // The same events under the names mlx5's hw_counters give them, which
    // RoCE users look for.
    VF_COUNTER(Counters, seq_naks_rcvd, "packet_seq_err", "packet_seq_err", kEvents,
               "PSN sequence error NAKs received (= seq_naks_rcvd, mlx5's name)"),
    VF_COUNTER(Counters, retransmit_timeouts, "local_ack_timeout_err", "local_ack_timeout_err", kEvents,
               "RC ACK timer expiries at the sender (= retransmit_timeouts, mlx5's name)"),
};
#undef C
constexpr size_t kAliasRows = 2;

static_assert(sizeof(Counters) == (sizeof(kDefs) / sizeof(kDefs[0]) - kAliasRows) * sizeof(uint64_t),
              "every Counters field has a row here");

}  // namespace

const CounterTable kEngineCounters{kDefs};

}  // namespace vf::engine
