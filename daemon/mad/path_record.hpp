// PathRecords (IBA 15.2.5.16) between two endports of the model: the LIDs
// and GIDs, and what the path allows -- the smallest MTU and rate of the
// links it crosses both ways, the P_Key, SL 0 -- when the switches' LFTs
// carry traffic both ways over Active ports.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>

#include "daemon/mad/model.hpp"

namespace vf::mad {

inline constexpr size_t kPathRecordSize = 64;
using PathRecord = std::array<uint8_t, kPathRecordSize>;

// IBA rate code (enum ibv_rate) of a link of `width` (PortInfo encoding) and
// speed (LinkSpeedActive, LinkSpeedExtActive).
uint8_t rate_code(uint8_t width, uint8_t speed, uint8_t speed_ext);
// Gb/s of a rate code, 0 for an unknown one (for comparing rates).
double rate_gbps(uint8_t code);

// The path from node `src` to node `dst`; nullopt when traffic cannot flow
// both ways.
std::optional<PathRecord> path_record(const MadModel& model, size_t src, size_t dst);

}  // namespace vf::mad
