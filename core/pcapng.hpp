// A pcapng writer (the IETF draft's Section Header, Interface Description and
// Enhanced Packet Blocks): one interface, times in
// nanoseconds (if_tsresol 9), the direction of each frame in epb_flags.
// Shared by fabricctl capture and vfabric-sim --capture.
#pragma once

#include <cstdint>
#include <algorithm>
#include <cstdio>
#include <string>

namespace vf {

inline constexpr uint16_t kLinktypeEthernet = 1;
// IB packets go in ERF records: Wireshark (4.0) reads LINKTYPE_INFINIBAND
// (247) as unsupported, but dissects ERF's InfiniBand record types, as
// Endace DAG cards capture IB.
inline constexpr uint16_t kLinktypeErf = 197;
inline constexpr uint8_t kErfTypeInfiniband = 21;      // from the LRH
inline constexpr uint8_t kErfTypeInfinibandLink = 25;  // a link packet (flow control)

// One ERF record: the 16-byte header (timestamp as 32.32 fixed-point seconds,
// type, lengths) and the frame, padded to 8 bytes; `origlen` is the wire length.
std::string erf_record(uint64_t ts_ns, uint8_t type, const uint8_t* data, uint32_t caplen, uint32_t origlen);

class PcapngWriter {
 public:
  // Writes the section and interface headers. false: the write failed.
  bool open(std::FILE* out, uint16_t linktype, uint32_t snaplen, const std::string& if_name,
            const std::string& if_description);
  // `ts_ns`: nanoseconds since the epoch.
  bool packet(uint64_t ts_ns, bool inbound, uint32_t origlen, const uint8_t* data, uint32_t caplen);

 private:
  bool block(uint32_t type, const std::string& body);
  std::FILE* out_ = nullptr;
};

}  // namespace vf
