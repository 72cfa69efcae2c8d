// The subnet management agents of an InfiniBand fabric, on the wire: the
// SMPs apps send through umad (QP0) leave their vHCA's port as VL15 packets
// and cross the links and switches hop by hop -- a directed route by its
// initial path (dr_smp.hpp), a LID-routed SMP through the LFTs -- to the
// SMA of the node they name: a switch's management port (IbSwitch's hook)
// or another vHCA's QP0 (engine smi.hpp). That SMA answers from the live
// fabric (sma.hpp over a MadModel built then), and the response travels
// back the same way, so captures show the SMPs, port counters count them,
// and a link that goes down loses them. Lcore only, like the dataplane.
#pragma once

#include <rte_mbuf.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "daemon/config/config.hpp"
#include "daemon/mad/mad.hpp"
#include "daemon/telemetry/umad_stats.hpp"
#include "device/engine/smi.hpp"

namespace vf {

class Topology;
namespace dp {
class IbSwitch;
}

class SmiAgent {
 public:
  // A response for vHCA `vhca`'s requester, with the LID it came from (the
  // permissive LID for a directed route). Called on the lcore.
  using Deliver = std::function<void(size_t vhca, const mad::Mad& response, uint16_t slid)>;

  SmiAgent(Topology& topo, const config::Config& cfg, Deliver deliver);
  // Hooks every IB switch's management port and every IB vHCA's QP0. Before
  // the lcore runs.
  void attach();
  // vHCA `vhca`'s app sent SMP `m` (on its QP0) to `dlid`. Lcore.
  void originate(size_t vhca, uint16_t dlid, mad::Mad m);

  // Adds what became of vHCA `vhca`'s SMPs on the way: requests an SMA
  // refused (SubnSet without the M_Key) and SMPs dropped (a path that could
  // not be followed, no route back, a full port). Known by the requester's
  // LID, which the packets carry. Any thread.
  void add_drops(size_t vhca, UmadStats& s) const;

 private:
  static void on_switch(void* self, dp::IbSwitch& sw, unsigned in_port, rte_mbuf* m);
  void at_switch(size_t fabric, dp::IbSwitch& sw, unsigned in_port, rte_mbuf* m);
  void at_vhca(size_t vhca, const uint8_t* mad, const engine::SmiSource& from);
  // The SMA of node `node` (a vHCA's or a switch's name) of config fabric
  // `fabric` answers `m`, which came in on `in_port`. False: no answer.
  bool answer(size_t fabric, const std::string& node, uint8_t in_port, mad::Mad& m, uint16_t requester);
  // A vHCA's answer leaves by its port; a response for its own requester is delivered.
  void vhca_reply(size_t vhca, mad::Mad& resp, uint16_t to_lid);
  bool send_from_vhca(size_t vhca, const mad::Mad& m, uint16_t dlid);
  // Re-frames the switch's received frame `m` (BTH .. pad, the MAD in it) and
  // sends it from the management port out of `port`.
  bool send_from_switch(dp::IbSwitch& sw, unsigned port, rte_mbuf* m, uint16_t slid, uint16_t dlid);
  // Counted against the vHCA of `fabric` whose LID is `requester`, if any.
  void count(std::atomic<uint64_t>* per_vhca, size_t fabric, uint16_t requester);
  void drop(size_t fabric, uint16_t requester) { count(dropped_.get(), fabric, requester); }

  Topology& topo_;
  const config::Config& cfg_;
  Deliver deliver_;
  std::unordered_map<const dp::IbSwitch*, size_t> switch_fabric_;
  std::vector<size_t> vhca_fabric_;  // by vHCA index: its config fabric
  std::unique_ptr<std::atomic<uint64_t>[]> refused_, dropped_;  // by vHCA index
};

}  // namespace vf
