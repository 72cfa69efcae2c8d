#include "dataplane/fabric/fdb.hpp"

namespace vf::dp {

uint64_t Fdb::key(uint16_t vid, const uint8_t* mac) {
  uint64_t k = vid & 0x0FFFu;
  for (int i = 0; i < 6; ++i) k = k << 8 | mac[i];
  return k;
}

void Fdb::learn(uint16_t vid, const uint8_t* mac, uint16_t port, Nanos now) {
  const uint64_t k = key(vid, mac);
  const auto it = table_.find(k);
  if (it != table_.end()) {
    Slot& s = it->second;
    if (s.is_static) return;
    if (expired(s, now)) {
      ctr_.aged.add();
      ctr_.learned.add();
    } else if (s.port != port) {
      ctr_.moved.add();
    }
    s.port = port;
    s.last_seen = now;
    return;
  }
  if (table_.size() >= kMaxEntries && now - swept_at_ >= kSweepEvery) [[unlikely]] {
    swept_at_ = now;
    ctr_.aged.add(std::erase_if(table_, [&](const auto& kv) { return expired(kv.second, now); }));
  }
  if (table_.size() >= kMaxEntries) [[unlikely]] {
    ctr_.table_full.add();
    return;
  }
  table_.emplace(k, Slot{port, false, now});
  ctr_.learned.add();
}

uint16_t Fdb::lookup(uint16_t vid, const uint8_t* mac, Nanos now) {
  const auto it = table_.find(key(vid, mac));
  if (it == table_.end()) return 0;
  if (expired(it->second, now)) {
    table_.erase(it);
    ctr_.aged.add();
    return 0;
  }
  return it->second.port;
}

uint16_t Fdb::port_of(uint16_t vid, const Mac& mac, Nanos now) const {
  const auto it = table_.find(key(vid, mac.data()));
  return it == table_.end() || expired(it->second, now) ? 0 : it->second.port;
}

void Fdb::add_static(uint16_t vid, const Mac& mac, uint16_t port) {
  table_[key(vid, mac.data())] = Slot{port, true, 0};
}

void Fdb::remove(uint16_t vid, const Mac& mac) { table_.erase(key(vid, mac.data())); }

void Fdb::flush_port(uint16_t port) {
  std::erase_if(table_, [port](const auto& kv) { return !kv.second.is_static && kv.second.port == port; });
}

std::vector<FdbEntry> Fdb::entries(Nanos now) const {
  std::vector<FdbEntry> out;
  out.reserve(table_.size());
  for (const auto& [k, s] : table_) {
    if (expired(s, now)) continue;
    FdbEntry e;
    e.vid = uint16_t(k >> 48);
    for (int i = 0; i < 6; ++i) e.mac[size_t(i)] = uint8_t(k >> (40 - 8 * i));
    e.port = s.port;
    e.is_static = s.is_static;
    e.last_seen = s.last_seen;
    out.push_back(e);
  }
  return out;
}

}  // namespace vf::dp
