#include "core/pcapng.hpp"

namespace vf {
namespace {

// pcapng is written in the host's byte order; the byte-order magic says which.
void put(std::string& b, const void* p, size_t n) { b.append(static_cast<const char*>(p), n); }
void put16(std::string& b, uint16_t v) { put(b, &v, 2); }
void put32(std::string& b, uint32_t v) { put(b, &v, 4); }
void pad32(std::string& b) { b.append((4 - b.size() % 4) % 4, '\0'); }

void option(std::string& b, uint16_t code, const void* p, uint16_t n) {
  put16(b, code);
  put16(b, n);
  put(b, p, n);
  pad32(b);
}
void end_of_options(std::string& b) { put32(b, 0); }

constexpr uint32_t kShb = 0x0A0D0D0A, kIdb = 1, kEpb = 6;
constexpr uint16_t kShbUserAppl = 4, kIfName = 2, kIfDescription = 3, kIfTsresol = 9, kEpbFlags = 2;

}  // namespace

bool PcapngWriter::block(uint32_t type, const std::string& body) {
  const uint32_t total = uint32_t(12 + body.size());
  std::string b;
  put32(b, type);
  put32(b, total);
  b += body;
  put32(b, total);
  return std::fwrite(b.data(), 1, b.size(), out_) == b.size();
}

bool PcapngWriter::open(std::FILE* out, uint16_t linktype, uint32_t snaplen, const std::string& if_name,
                        const std::string& if_description) {
  out_ = out;
  std::string shb;
  put32(shb, 0x1A2B3C4D);  // byte-order magic
  put16(shb, 1);           // version 1.0
  put16(shb, 0);
  put32(shb, 0xFFFFFFFF);  // section length: not given
  put32(shb, 0xFFFFFFFF);
  const std::string app = "fabricctl (vfabric)";
  option(shb, kShbUserAppl, app.data(), uint16_t(app.size()));
  end_of_options(shb);
  std::string idb;
  put16(idb, linktype);
  put16(idb, 0);
  put32(idb, snaplen);
  option(idb, kIfName, if_name.data(), uint16_t(std::min<size_t>(if_name.size(), 256)));
  option(idb, kIfDescription, if_description.data(), uint16_t(std::min<size_t>(if_description.size(), 1024)));
  const uint8_t nanoseconds = 9;
  option(idb, kIfTsresol, &nanoseconds, 1);
  end_of_options(idb);
  return block(kShb, shb) && block(kIdb, idb);
}

bool PcapngWriter::packet(uint64_t ts_ns, bool inbound, uint32_t origlen, const uint8_t* data, uint32_t caplen) {
  std::string epb;
  put32(epb, 0);  // interface 0
  put32(epb, uint32_t(ts_ns >> 32));
  put32(epb, uint32_t(ts_ns));
  put32(epb, caplen);
  put32(epb, origlen);
  put(epb, data, caplen);
  pad32(epb);
  const uint32_t flags = inbound ? 1 : 2;  // bits 0-1: direction
  option(epb, kEpbFlags, &flags, 4);
  end_of_options(epb);
  return block(kEpb, epb);
}

std::string erf_record(uint64_t ts_ns, uint8_t type, const uint8_t* data, uint32_t caplen, uint32_t origlen) {
  const uint64_t secs = ts_ns / 1'000'000'000, frac = ((ts_ns % 1'000'000'000) << 32) / 1'000'000'000;
  const uint64_t ts = secs << 32 | frac;  // little-endian, as ERF has it
  const uint32_t padded = (caplen + 7) & ~7u;
  const uint16_t rlen = uint16_t(std::min<uint32_t>(16 + padded, 0xFFF8));
  std::string r;
  put(r, &ts, 8);
  r.push_back(char(type));
  r.push_back(0);  // flags: interface 0
  const uint8_t be[6] = {uint8_t(rlen >> 8), uint8_t(rlen), 0, 0, uint8_t(origlen >> 8), uint8_t(origlen)};
  put(r, be, sizeof be);  // rlen, loss counter, wire length: big-endian
  put(r, data, std::min<uint32_t>(caplen, rlen - 16u));
  r.append(rlen - r.size(), '\0');
  return r;
}

}  // namespace vf
