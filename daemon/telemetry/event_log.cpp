#include "daemon/telemetry/event_log.hpp"

#include <algorithm>

namespace vf {

void EventLog::add(std::string kind, std::string text, int64_t time_ns) {
  log_.push_back({next_seq_++, time_ns, std::move(kind), std::move(text)});
  if (log_.size() > capacity_) log_.pop_front();
}

EventLog::Since EventLog::since(uint64_t seq, size_t max) const {
  Since out;
  seq = std::min(seq, last_seq());  // a number from the future means "from now"
  const uint64_t oldest = log_.empty() ? next_seq_ : log_.front().seq;
  if (seq + 1 < oldest) out.missed = oldest - (seq + 1);
  for (const FabricEvent& e : log_)
    if (e.seq > seq && out.events.size() < max) out.events.push_back(e);
  out.next = out.events.empty() ? std::max(seq, oldest - 1) : out.events.back().seq;
  return out;
}

}  // namespace vf
