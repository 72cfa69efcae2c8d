// The engine's object tables, one generic table per verbs object type (rxe's
// pools): handles given to apps are slot indices, every lookup also checks
// the owning client (a handle or key of another client never resolves), and
// the references one object holds on another (a PD's users, a CQ's QPs) are
// stated once per type, so adding and removing an object keep them exact.
#pragma once

#include <cstdint>
#include <memory>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "device/engine/objects.hpp"
#include "device/engine/qp.hpp"

namespace vf::engine {

// Objects by slot index 1..capacity; 0 is never a valid handle.
template <class T>
class SlotTable {
 public:
  explicit SlotTable(uint32_t capacity = 0) { set_capacity(capacity); }
  void set_capacity(uint32_t capacity) {
    capacity_ = capacity;
    slots_.clear();
    slots_.emplace_back();
  }
  // Returns the slot index, or 0 when full.
  uint32_t insert(std::unique_ptr<T> obj) {
    uint32_t idx;
    if (!free_.empty()) {
      idx = free_.back();
      free_.pop_back();
    } else {
      if (slots_.size() > capacity_) return 0;
      idx = uint32_t(slots_.size());
      slots_.emplace_back();
    }
    slots_[idx] = std::move(obj);
    ++live_;
    return idx;
  }
  T* get(uint32_t idx) const { return idx < slots_.size() ? slots_[idx].get() : nullptr; }
  // Takes `obj` and sets its handle to its slot index; nullptr when full.
  T* add(std::unique_ptr<T> obj) {
    T* raw = obj.get();
    const uint32_t h = insert(std::move(obj));
    if (!h) return nullptr;
    raw->handle = h;
    return raw;
  }
  // The object at handle `h` if `owner` created it: another client's handle
  // never resolves.
  T* owned(uint32_t h, const Client* owner) const {
    T* o = get(h);
    return o && o->client == owner ? o : nullptr;
  }
  void erase(uint32_t idx) {
    if (idx == 0 || idx >= slots_.size() || !slots_[idx]) return;
    slots_[idx].reset();
    free_.push_back(idx);
    --live_;
  }
  uint32_t live() const { return live_; }
  bool full() const { return free_.empty() && slots_.size() > capacity_; }
  template <class F>
  void for_each(F&& f) const {
    for (auto& s : slots_)
      if (s) f(*s);
  }

 private:
  std::vector<std::unique_ptr<T>> slots_;
  std::vector<uint32_t> free_;
  uint32_t capacity_ = 0;
  uint32_t live_ = 0;
};

// What an object holds a reference on (IBA / uverbs: a PD cannot go while an
// MR, QP, SRQ or AH uses it, a CQ or an SRQ while a QP does).
template <class F>
void for_each_ref(Pd&, F&&) {}
template <class F>
void for_each_ref(Cq&, F&&) {}
template <class F>
void for_each_ref(Mr& o, F&& f) { f(o.pd->users); }
template <class F>
void for_each_ref(Ah& o, F&& f) { f(o.pd->users); }
template <class F>
void for_each_ref(Srq& o, F&& f) { f(o.pd->users); }
// A window's binding counts on its MR (and its type 2 QP) while it lasts:
// mw.cpp moves those counts on bind and invalidate, release drops them.
template <class F>
void for_each_ref(Mw& o, F&& f) {
  f(o.pd->users);
  if (o.mr) f(o.mr->windows);
  if (o.qp) f(o.qp->windows);
}
template <class F>
void for_each_ref(Qp& o, F&& f) {
  f(o.pd->users);
  f(o.scq->users);
  f(o.rcq->users);
  if (o.srq) f(o.srq->users);
}

template <class... T>
struct TypeList {};
// uverbs' teardown order for a context that goes away: every object before
// the objects it holds references on.
using TeardownOrder = TypeList<Mw, Qp, Ah, Srq, Cq, Mr, Pd>;

class ObjectTables {
 public:
  void set_capacity(const DeviceLimits& l) {
    of<Pd>().set_capacity(l.max_pd);
    of<Mr>().set_capacity(l.max_mr);
    of<Mw>().set_capacity(l.max_mw);
    of<Cq>().set_capacity(l.max_cq);
    of<Qp>().set_capacity(l.max_qp);
    of<Srq>().set_capacity(l.max_srq);
    of<Ah>().set_capacity(l.max_ah);
  }

  template <class T>
  SlotTable<T>& of() { return std::get<SlotTable<T>>(tables_); }
  template <class T>
  const SlotTable<T>& of() const { return std::get<SlotTable<T>>(tables_); }

  // Takes `o` (its references already set): gives it a handle and counts its
  // references. nullptr when the table is full.
  template <class T>
  T* adopt(std::unique_ptr<T> o) {
    T* raw = of<T>().add(std::move(o));
    if (raw) for_each_ref(*raw, [](uint32_t& users) { ++users; });
    return raw;
  }
  // Drops `o` and its references; `o` is gone afterwards.
  template <class T>
  void release(T& o) {
    for_each_ref(o, [](uint32_t& users) { --users; });
    of<T>().erase(o.handle);
  }

  // The object `h` of type T if `c` owns it (nullptr for a null client).
  template <class T>
  T* owned(const Client* c, uint32_t h) const {
    return c ? of<T>().owned(h, c) : nullptr;
  }
  // Handles of `c`'s objects of type T, copied: destroying them edits the table.
  template <class T>
  std::vector<uint32_t> handles_of(const Client* c) const {
    std::vector<uint32_t> hs;
    of<T>().for_each([&](const T& o) {
      if (o.client == c) hs.push_back(o.handle);
    });
    return hs;
  }

  Client* client(ClientId id) const {
    auto it = clients_.find(id);
    return it == clients_.end() ? nullptr : it->second.get();
  }
  bool add_client(std::unique_ptr<Client> c) { return clients_.emplace(c->id, std::move(c)).second; }
  void erase_client(ClientId id) { clients_.erase(id); }
  std::vector<ClientId> client_ids() const {
    std::vector<ClientId> ids;
    for (auto& [id, c] : clients_) ids.push_back(id);
    return ids;
  }

  Hca::ObjectCounts counts() const {
    return {unsigned(clients_.size()), of<Pd>().live(), of<Mr>().live(), of<Cq>().live(),
            of<Qp>().live(), of<Srq>().live(), of<Ah>().live(), of<Mw>().live()};
  }

 private:
  std::unordered_map<ClientId, std::unique_ptr<Client>> clients_;
  std::tuple<SlotTable<Pd>, SlotTable<Mr>, SlotTable<Cq>, SlotTable<Qp>, SlotTable<Srq>,
             SlotTable<Ah>, SlotTable<Mw>>
      tables_;
};

}  // namespace vf::engine
