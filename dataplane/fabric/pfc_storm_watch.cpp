#include "dataplane/fabric/pfc_storm_watch.hpp"

namespace vf::dp {

PfcStormWatch::PfcStormWatch(const Fabric& f) : f_(f), last_(2 * f.links().size()) {}

std::vector<StormChange> PfcStormWatch::check() {
  std::vector<StormChange> out;
  const auto& links = f_.links();
  for (size_t i = 0; i < links.size(); ++i) {
    const LinkInfo& l = links[i];
    const Pfc* ends[2] = {l.pfc_a.get(), l.pfc_b.get()};
    for (unsigned e = 0; e < 2; ++e) {
      if (!ends[e]) continue;
      const PfcSnapshot s = ends[e]->snapshot();
      Seen& was = last_[2 * i + e];
      const std::string port = (e ? l.b : l.a).str(), peer = (e ? l.a : l.b).str();
      for (unsigned p = 0; p < kNumPriorities; ++p) {
        const bool now = s.stormed >> p & 1, before = was.stormed >> p & 1;
        // A count below the last one was reset since (counters reset): any
        // storm it holds is new.
        const uint64_t n = s.prio[p].storm_events;
        const bool new_storm = n > was.storms[p] || (n < was.storms[p] && n > 0);
        if (new_storm) out.push_back({port, peer, p, true});
        if ((before || new_storm) && !now) out.push_back({port, peer, p, false});
        was.storms[p] = s.prio[p].storm_events;
      }
      was.stormed = s.stormed;
    }
  }
  return out;
}

}  // namespace vf::dp
