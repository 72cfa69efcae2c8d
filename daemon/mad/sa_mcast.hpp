// The SA's multicast groups (IBA 15.2.5.17 MCMemberRecord): SubnAdmSet
// joins a port to a group, creating it (and choosing its MLID, and its MGID
// when asked for none) on the first join; SubnAdmDelete leaves; Get and
// GetTable read one record per member. State that outlives a MAD, so it is
// the SM's (sm::SubnetManager owns one per fabric); the SM programs the
// switches' MFTs from the changes a join or leave reports.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "daemon/mad/mad.hpp"
#include "daemon/mad/model.hpp"

namespace vf::mad {

inline constexpr uint16_t kAttrMcMemberRecord = 0x0038;
inline constexpr size_t kMcMemberRecordSize = 52;
inline constexpr uint8_t kSaDelete = 0x15;
inline constexpr uint8_t kSaDeleteResp = 0x95;

using Gid16 = std::array<uint8_t, 16>;

struct McGroup {
  Gid16 mgid{};
  uint16_t mlid = 0;
  uint32_t qkey = 0;
  uint16_t pkey = 0xFFFF;
  uint8_t tclass = 0, sl = 0, hop_limit = 0;
  uint32_t flow_label = 0;
  uint8_t mtu = 5, rate = 16;  // codes: the creating port's link (opensm takes the creator's too)
  std::map<Gid16, uint8_t> members;  // port GID -> JoinState bits
};

// A port whose membership of MLID `mlid` began or ended.
struct McChange {
  std::string node;  // the vHCA
  uint16_t mlid = 0;
  bool member = false;
};

class SaGroups {
 public:
  static constexpr size_t kMaxGroups = 8192;  // the vHCAs' max_mcast_grp

  // SubnAdmSet / SubnAdmDelete / Get / GetTable of MCMemberRecord from CA
  // `requester`: the response's status, and its records (one for Set and
  // Delete). `changes` gets the ports whose membership changed.
  uint16_t process(const MadModel& model, size_t requester, uint8_t method, const uint8_t* query, uint64_t mask,
                   std::vector<std::vector<uint8_t>>& records, std::vector<McChange>& changes);

  const std::vector<McGroup>& groups() const { return groups_; }
  // MLIDs taken outside the SA (apps that attached without joining): a new
  // group never gets one of them.
  void set_mlid_in_use(std::function<bool(uint16_t)> fn) { in_use_ = std::move(fn); }

 private:
  uint16_t join(const MadModel& model, const uint8_t* q, uint64_t mask, const Gid16& port,
                std::vector<std::vector<uint8_t>>& out, std::vector<McChange>& changes, const std::string& node);
  uint16_t leave(const uint8_t* q, uint64_t mask, const Gid16& port, std::vector<std::vector<uint8_t>>& out,
                 std::vector<McChange>& changes, const std::string& node);
  uint16_t free_mlid() const;
  std::vector<uint8_t> record(const McGroup& g, const Gid16& port, uint8_t join_state) const;

  std::vector<McGroup> groups_;
  uint32_t next_mgid_ = 1;  // SA-chosen MGIDs
  std::function<bool(uint16_t)> in_use_;
};

}  // namespace vf::mad
