// Requester stage: the send queue -> request packets. RC/UC WQEs are
// segmented to the path MTU and sent in bursts (requester.cpp), READ and
// atomic requests are one packet each (rd_atomic_request.cpp), a UD WQE is one
// datagram (ud_send.cpp). It only ever sends from the SQ cursor
// (send_queue.hpp); the completer moves that back for retransmission.
#pragma once

#include "device/engine/engine.hpp"

namespace vf::engine {

class Completer;
class Placement;

class Requester {
 public:
  Requester(Engine& eng, Completer& comp, Placement& place)
      : eng_(eng), comp_(comp), place_(place) {}

  // Sends up to `budget` packets of an RC/UC QP in RTS/SQD; returns packets
  // sent plus completions produced.
  unsigned run(Qp&, unsigned budget);
  // The same for a UD QP.
  unsigned run_ud(Qp&, unsigned budget);

 private:
  bool fetch_send_wqe(Qp&);  // copies and validates one more SQ WQE
  // Executes a BIND_MW / LOCAL_INV reached in SQ order; false: it failed.
  bool execute_local(Qp&, SendWqe&);
  // Builds and sends up to `want` packets of `s`; returns how many went out.
  unsigned send_burst(Qp&, SendWqe& s, unsigned want, Nanos now);
  unsigned send_rd_atomic_request(Qp&, SendWqe&, Nanos now);
  // Collects the remote pieces [off, off+len) of a WQE's SGE list, checking
  // every key; false -> the WQE fails with LOC_PROT_ERR.
  bool gather_send(Qp&, const SendWqe&, uint64_t off, uint32_t len, IoList&);

  Engine& eng_;
  Completer& comp_;
  Placement& place_;
};

}  // namespace vf::engine
