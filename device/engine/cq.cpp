// Completion queues: ring creation and CQE posting. The engine owns the
// producer index and never reads it back from the ring; the app's consumer
// index is read and bounded: nonsense or a full ring is an overrun, which
// stops the CQ (IBV_EVENT_CQ_ERR) instead of overwriting unread CQEs.
#include <atomic>
#include <cerrno>
#include <cstring>

#include "device/engine/hca_impl.hpp"

namespace vf::engine {

int Hca::Impl::create_cq(ClientId id, const vhca_create_cq_req& req, vhca_create_cq_rsp& rsp,
                         Fd& fd) {
  fd.fd = -1;
  Client* c = eng_.client(id);
  if (!c) return EINVAL;
  if (req.cqe == 0 || req.cqe > eng_.cfg.limits.max_cqe) return EINVAL;
  if (req.comp_vector != 0) return EINVAL;  // num_comp_vectors == 1
  const uint32_t entries = round_up_pow2(req.cqe + 1);
  auto obj = std::make_unique<Cq>();
  obj->client = c;
  Cq* cq = eng_.objs.adopt(std::move(obj));
  if (!cq) return ENOMEM;
  if (int err = cq->ring.create("vhca-cq", entries, sizeof(vhca_cqe), fd.fd)) {
    eng_.objs.release(*cq);
    return err;
  }
  rsp.cq_handle = cq->handle;
  rsp.entries = entries;
  return 0;
}

namespace {
// The unread CQEs (an index the app cannot have produced is a no) fit in a
// ring of `entries`, which keeps one slot free like every CQ ring.
bool unread_fit(const Cq& cq, uint32_t entries) {
  const uint32_t unread = cq.producer - cq.ring.load_consumer();
  return unread <= cq.ring.entries() && unread < entries;
}
}  // namespace

// ibv_resize_cq, in two phases (vhca_abi.h) so that a provider that cannot
// map the new ring keeps the old one. COMMIT runs on the lcore between two
// CQE posts and re-checks the fit: CQEs may have arrived since PREPARE.
// Smaller than what is unread is EINVAL, as mlx5 and rxe answer.
int Hca::Impl::resize_cq(ClientId id, const vhca_resize_cq_req& req, vhca_resize_cq_rsp& rsp, Fd& fd) {
  fd.fd = -1;
  Cq* cq = eng_.owned<Cq>(id, req.cq_handle);
  if (!cq) return EINVAL;
  rsp.reserved = 0;
  switch (req.phase) {
    case VHCA_RESIZE_CQ_PREPARE: {
      if (req.cqe == 0 || req.cqe > eng_.cfg.limits.max_cqe) return EINVAL;
      const uint32_t entries = round_up_pow2(req.cqe + 1);
      if (!unread_fit(*cq, entries)) return EINVAL;
      cq->resized.reset();
      if (int err = cq->resized.create("vhca-cq", entries, sizeof(vhca_cqe), fd.fd)) return err;
      rsp.entries = entries;
      return 0;
    }
    case VHCA_RESIZE_CQ_COMMIT: {
      SharedRing& fresh = cq->resized;
      if (!fresh.mapped()) return EINVAL;
      if (!unread_fit(*cq, fresh.entries())) {
        fresh.reset();
        return EINVAL;
      }
      const uint32_t cons = cq->ring.load_consumer();
      for (uint32_t i = cons; i != cq->producer; ++i) std::memcpy(fresh.slot(i), cq->ring.slot(i), sizeof(vhca_cqe));
      vhca_ring_hdr* h = fresh.hdr();
      h->arm = cq->ring.load_arm();
      h->arm_sn = cq->ring.load_arm_sn();
      h->fired_sn = cq->arm_sn_seen;
      fresh.store_consumer(cons);
      fresh.store_producer(cq->producer);
      cq->ring.swap(fresh);
      fresh.reset();  // the old mapping
      rsp.entries = cq->ring.entries();
      return 0;
    }
    case VHCA_RESIZE_CQ_ABORT:
      cq->resized.reset();
      rsp.entries = cq->ring.entries();
      return 0;
    default:
      return EINVAL;
  }
}

int Hca::Impl::destroy_cq(ClientId id, const vhca_handle_req& req) {
  return destroy_unused<Cq>(id, req.handle);
}

bool Engine::cq_post(Cq& cq, const vhca_cqe& cqe, bool solicited) {
  if (cq.error) return false;
  const uint32_t cons = cq.ring.load_consumer();
  const uint32_t used = cq.producer - cons;
  if (used >= cq.ring.entries()) {
    // Full (overrun) or an index the app cannot have produced legitimately.
    cq.error = true;
    ++ctr.cq_overruns;
    async_event(cq.client, IBV_EVENT_CQ_ERR, cq.handle);
    return false;
  }
  auto* slot = reinterpret_cast<vhca_cqe*>(cq.ring.slot(cq.producer));
  std::memcpy(slot, &cqe, sizeof(cqe));
  slot->completion_ts = sched.now();
  cq.ring.store_producer(++cq.producer);
  ++ctr.cqes;
  // Store-load ordering with the app's ibv_req_notify_cq: it stores arm_sn
  // then polls our producer; we store the producer then load arm_sn. Without
  // a full fence on both sides (the provider has its own) each can miss the
  // other's store: no event, and the app sleeps on a CQE it never polled.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  // Completion event: the app armed (arm_sn moved since the last event) for
  // any completion, or for solicited ones (errors count as solicited).
  const uint32_t sn = cq.ring.load_arm_sn();
  if (sn != cq.arm_sn_seen) {
    const uint32_t arm = cq.ring.load_arm();
    if (arm == VHCA_CQ_ARM_NEXT ||
        (arm == VHCA_CQ_ARM_SOLICITED && (solicited || cqe.status != IBV_WC_SUCCESS))) {
      cq.arm_sn_seen = sn;
      cq.ring.store_fired_sn(sn);
      if (sink) sink->cq_event(cq.client->id, cq.handle);
    }
  }
  return true;
}

}  // namespace vf::engine
