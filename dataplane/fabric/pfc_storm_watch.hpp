// Which link ends' PFC watchdogs declared a storm, or saw one end, since the
// last look: the operator's view of a storm (a log line and an event), where
// the dataplane only counts it. Slow path, on the lcore; fabricd looks once
// a second, and a storm that came and went between two looks is reported
// as both (its count moved).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "dataplane/fabric/fabric.hpp"

namespace vf::dp {

struct StormChange {
  std::string port;  // the end whose watchdog tripped ("ethsw0/1")
  std::string peer;  // the end that kept pausing it ("vroce0")
  unsigned priority = 0;
  bool started = false;  // true: declared; false: over
};

class PfcStormWatch {
 public:
  // `f` outlives the watch; its links are fixed once built.
  explicit PfcStormWatch(const Fabric& f);
  std::vector<StormChange> check();

 private:
  const Fabric& f_;
  struct Seen {
    uint8_t stormed = 0;
    std::array<uint64_t, kNumPriorities> storms{};
  };
  std::vector<Seen> last_;  // per link, 2 ends
};

}  // namespace vf::dp
