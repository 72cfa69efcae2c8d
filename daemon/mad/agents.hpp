// Where a MAD sent from a vHCA port goes and what answers it: the SMA of the
// node a directed-route or LID-routed SMP reaches, the PMA of the node a
// PerfMgt GMP reaches, the SA on the SM's node. Everything else finds no
// agent (the requester times out, as with a class nobody serves). Pure: the
// model in, the response out.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "daemon/mad/mad.hpp"
#include "daemon/mad/model.hpp"
#include "daemon/mad/pma.hpp"
#include "daemon/mad/sa_mcast.hpp"

namespace vf::mad {

// Why a MAD got no answer, for the daemon's counters.
enum class NoAnswer : uint8_t { kNone, kUnroutable, kNoAgent, kRefused };

struct MadOutcome {
  std::optional<Mad> response;  // none: the requester times out
  // An SA GetTable response is longer or shorter than a MAD: all of it, as
  // ib_mad hands a reassembled RMPP transfer to the app (response holds its
  // first 256 bytes).
  std::vector<uint8_t> table;
  uint16_t slid = 0;            // the responder's LID in the requester's umad header
  std::optional<PmaReset> reset;  // a PMA Set cleared these, answered or not
  std::vector<McChange> mcast;    // SA joins and leaves: what the SM must program
  NoAnswer why = NoAnswer::kNone;
};

// What becomes of `req`, sent by CA `src` on QP `qpn` to `dlid` (DR SMPs
// ignore it). `groups`: the SA's multicast groups (null: none served).
MadOutcome answer_mad(const MadModel& model, size_t src, uint32_t qpn, uint16_t dlid, const Mad& req,
                      SaGroups* groups = nullptr);

}  // namespace vf::mad
