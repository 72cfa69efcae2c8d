// What the responder does with a request it refuses, per transport.
// RC (IBA ch. 9.7, NAK codes): a NAK for the request's PSN -- Invalid Request,
// Remote Access Error or Remote Operational Error -- the receive WQE in
// progress completes in error, the QP goes to ERR and raises the affiliated
// asynchronous event IBA ch. 11 names for the cause: "Invalid Request
// Local Work Queue Error" (IBV_EVENT_QP_REQ_ERR) or "Local Access Violation
// Work Queue Error" (IBV_EVENT_QP_ACCESS_ERR; mlx5 raises it on its
// responder for a remote access error too).
// UC (IBA 9.8): nothing is said to the requester; the message in progress
// is dropped and the receive WQE stays for the next message.
#include "device/engine/placement.hpp"
#include "device/engine/responder.hpp"

namespace vf::engine {

Rx Responder::reject(Qp& qp, const Pkt& p, bool ordered, uint8_t nak_code,
                                ibv_wc_status status, int event) {
  if (qp.type == IBV_QPT_UC) {
    qp.drop_msg = true;
    qp.in_message = qp.in_write = false;
    ++eng_.ctr.rx_dropped;
    return Rx::kDone;
  }
  if (!ordered) return Rx::kUnordered;
  fail_receive(qp, p.psn, nak_code, status, qp.rwqe_valid, qp.rwqe.w.wr_id, qp.rq_spec);
  if (event) eng_.async_qp_event(qp, ibv_event_type(event));
  return Rx::kDone;
}

}  // namespace vf::engine
