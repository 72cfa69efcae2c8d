// One name table for every counter: what it is called (IBA PMA names for port
// counters, rxe-style snake_case for the engine's hw_counters), what it means,
// its unit, the file it becomes under sysfs, and where it sits in the plain
// snapshot struct its owner fills. fabricctl's JSON, a Prometheus exposition
// and the sysfs counter files are all generated from these tables, so a new
// counter is one line next to its field.
//
// The fast path never sees this: an owner counts into its own struct, the
// lcore copies that into a snapshot (plain uint64_t fields), and formatting
// reads the snapshot through the table on the control thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>
#include <type_traits>

namespace vf {

enum class CounterUnit : uint8_t { kPackets, kBytes, kWords, kNanoseconds, kEvents };

// Prometheus-style unit suffix and a word for humans.
constexpr std::string_view unit_name(CounterUnit u) {
  switch (u) {
    case CounterUnit::kPackets: return "packets";
    case CounterUnit::kBytes: return "bytes";
    case CounterUnit::kWords: return "words";  // IBA PortXmitData/PortRcvData: 4-octet words
    case CounterUnit::kNanoseconds: return "nanoseconds";
    case CounterUnit::kEvents: return "events";
  }
  return "events";
}

// A counter only grows (Prometheus "counter", metric name ends in _total); a
// gauge is a level that goes up and down (queue depth, buffer held).
enum class CounterKind : uint8_t { kCounter, kGauge };

struct CounterDef {
  std::string_view name;   // as fabricctl shows it: "PortXmitData", "retransmitted_packets"
  std::string_view sysfs;  // the counters/ or hw_counters/ file name: "port_xmit_data"
  CounterUnit unit;
  std::string_view help;   // one line, what it counts and when
  size_t offset;           // of a uint64_t in the snapshot struct
  CounterKind kind = CounterKind::kCounter;
};

using CounterTable = std::span<const CounterDef>;

inline uint64_t read_counter(const CounterDef& d, const void* snapshot) {
  uint64_t v;
  std::memcpy(&v, static_cast<const char*>(snapshot) + d.offset, sizeof v);
  return v;
}

template <class Field>
constexpr size_t counter_offset(size_t offset) {
  static_assert(std::is_same_v<Field, uint64_t>, "a counter is a uint64_t snapshot field");
  return offset;
}

// For a static_assert beside a table: every row reads a whole uint64_t
// inside a `size`-byte snapshot, and no two rows share a display name or a
// file/metric name (either would make one counter hide another).
constexpr bool counters_fit(CounterTable t, size_t size) {
  for (const CounterDef& d : t)
    if (d.offset % alignof(uint64_t) || d.offset + sizeof(uint64_t) > size) return false;
  return true;
}
constexpr bool counter_names_unique(CounterTable t) {
  for (size_t i = 0; i < t.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (t[i].name == t[j].name || t[i].sysfs == t[j].sysfs) return false;
  return true;
}
template <class Snap>
constexpr bool valid_counter_table(CounterTable t) {
  return counters_fit(t, sizeof(Snap)) && counter_names_unique(t);
}

// VF_COUNTER(Snapshot, field, "Name", "sysfs_name", kUnit, "help"): a
// CounterDef whose field is checked to be a uint64_t of the snapshot.
#define VF_COUNTER(Snap, field, name, sysfs, unit, help) \
  ::vf::CounterDef {                                      \
    name, sysfs, ::vf::CounterUnit::unit, help,           \
        ::vf::counter_offset<decltype(Snap::field)>(offsetof(Snap, field)) \
  }
// The same for a level (CounterKind::kGauge).
#define VF_GAUGE(Snap, field, name, sysfs, unit, help)                                       \
  ::vf::CounterDef {                                                                          \
    name, sysfs, ::vf::CounterUnit::unit, help,                                               \
        ::vf::counter_offset<decltype(Snap::field)>(offsetof(Snap, field)), ::vf::CounterKind::kGauge \
  }

}  // namespace vf
