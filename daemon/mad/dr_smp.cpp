#include "daemon/mad/dr_smp.hpp"

namespace vf::mad {
namespace {

// The LID-routed parts (a DrSLID or DrDLID that is not permissive) are not
// followed: such an SMP is dropped.
bool pure_directed(const Mad& m) {
  return mgmt_class(m) == kClassSmiDr && dr_slid(m) == kPermissiveLid && dr_dlid(m) == kPermissiveLid &&
         hop_cnt(m) <= kMaxHops;
}

DrAction out_by(uint8_t port, unsigned nports) {
  if (port == 0 || port > nports) return {};
  return {DrStep::kOut, port};
}

}  // namespace

DrAction dr_start(Mad& m) {
  if (!pure_directed(m) || dr_direction(m) || hop_ptr(m) != 0) return {};
  set_hop_ptr(m, 1);
  if (hop_cnt(m) == 0) return {DrStep::kLocal, 0};  // hop_cnt + 1: here
  return {DrStep::kOut, initial_path(m, 1)};
}

DrAction dr_receive(Mad& m, bool is_switch, uint8_t in_port, unsigned nports) {
  if (!pure_directed(m)) return {};
  const unsigned cnt = hop_cnt(m), at = hop_ptr(m);
  if (!dr_direction(m)) {
    if (at == 0 || at > cnt) return {};
    set_return_path(m, at, in_port);
    if (at == cnt) {
      set_hop_ptr(m, uint8_t(cnt + 1));
      return {DrStep::kLocal, in_port};
    }
    if (!is_switch) return {};  // a CA does not forward
    set_hop_ptr(m, uint8_t(at + 1));
    return out_by(initial_path(m, at + 1), nports);
  }
  if (at == 1) {  // back where it started
    set_hop_ptr(m, 0);
    return {DrStep::kLocal, in_port};
  }
  if (at < 2 || at > cnt || !is_switch) return {};
  set_hop_ptr(m, uint8_t(at - 1));
  return out_by(return_path(m, at - 1), nports);
}

DrAction dr_respond(Mad& m) {
  const unsigned cnt = hop_cnt(m);
  if (!pure_directed(m) || !dr_direction(m) || hop_ptr(m) != cnt + 1) return {};
  if (cnt == 0) {
    set_hop_ptr(m, 0);
    return {DrStep::kLocal, 0};
  }
  set_hop_ptr(m, uint8_t(cnt));
  return {DrStep::kOut, return_path(m, cnt)};
}

}  // namespace vf::mad
