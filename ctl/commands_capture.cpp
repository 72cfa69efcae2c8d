// `fabricctl capture PORT [-w FILE|-] [-c COUNT] [--snaplen N]`: the frames
// crossing a port, both ways, as tcpdump-style lines or as pcapng (`-w -`
// streams it, so `fabricctl capture vib0 -w - | tshark -r -` works). Times
// are the dataplane's emulated nanoseconds, anchored to the date the daemon
// gives. Ctrl-C, a closed pipe or COUNT frames end it; the daemon's taps are
// removed on the way out (and by the daemon itself if this process dies).
#include <cstring>
#include <thread>

#include <boost/beast/core/detail/base64.hpp>

#include "ctl/commands_common.hpp"
#include "ctl/interrupt.hpp"
#include "ctl/pcapng.hpp"

namespace vf::ctl {
namespace {

constexpr uint32_t kIbLinkPacketLen = 6;

std::string decode_base64(const std::string& s) {
  namespace b64 = boost::beast::detail::base64;
  std::string out(b64::decoded_size(s.size()), '\0');
  out.resize(b64::decode(out.data(), s.data(), s.size()).first);
  return out;
}

json call(const Globals& g, const char* cmd, const json& args) {
  Client c(g.socket(), g.timeout);
  return c.call(cmd, args);
}

// tcpdump's line: time, port, direction, length, what the frame is.
void print_line(const std::string& port, const json& f) {
  const uint64_t t = f.value("t", uint64_t(0));
  char when[32];
  std::snprintf(when, sizeof when, "%llu.%09llu", (unsigned long long)(t / 1'000'000'000),
                (unsigned long long)(t % 1'000'000'000));
  std::cout << when << ' ' << cell(port) << (f.value("in", false) ? " In  " : " Out ") << text(f, "len") << "  "
            << cell(f.value("summary", ""), 200) << '\n';
}

}  // namespace

int cmd_capture(const Globals& g, const CaptureOptions& o) {
  return guarded([&] {
    json args = {{"port", o.port}};
    if (o.snaplen) args["snaplen"] = o.snaplen;
    const json started = call(g, "capture.start", args);
    const uint64_t id = started.value("id", uint64_t(0));
    const bool ib = text(started, "link_layer") == "infiniband";
    const int64_t epoch = started.value("epoch_ns", int64_t(0));
    catch_interrupts();

    std::FILE* out = nullptr;
    PcapngWriter pcap;
    if (!o.write.empty()) {
      out = o.write == "-" ? stdout : std::fopen(o.write.c_str(), "wb");
      if (!out) {
        call(g, "capture.stop", {{"id", id}});
        throw std::runtime_error("cannot write " + o.write + ": " + std::strerror(errno));
      }
      const std::string desc = "vfabric " + text(started, "link_layer") + " port " + text(started, "port");
      if (!pcap.open(out, ib ? kLinktypeErf : kLinktypeEthernet, started.value("snaplen", 65535u),
                     text(started, "port"), desc))
        interrupt();
    }
    std::cerr << "fabricctl: capturing on " << cell(text(started, "port")) << ", link-type "
              << (ib ? (out ? "ERF (InfiniBand records)" : "InfiniBand") : "EN10MB (Ethernet)") << ", snapshot length " << text(started, "snaplen")
              << " bytes; Ctrl-C stops\n";

    uint64_t written = 0, link_packets_left_out = 0;
    bool write_failed = false;
    json last = json::object();
    while (!interrupted() && (!o.count || written < o.count)) {
      last = call(g, "capture.read", {{"id", id}});
      const json frames = last.value("frames", json::array());
      for (const json& f : frames) {
        if (o.count && written >= o.count) break;
        if (out) {
          const std::string bytes = decode_base64(f.value("data", ""));
          const auto* p = reinterpret_cast<const uint8_t*>(bytes.data());
          const uint32_t len = f.value("len", uint32_t(0));
          const uint64_t ts = uint64_t(epoch + int64_t(f.value("t", uint64_t(0))));
          bool ok;
          if (ib) {
            // A 6-byte IB link packet (flow control): Wireshark 4.0's link
            // dissector reads past its end and calls it malformed.
            if (len == kIbLinkPacketLen && !o.link_packets) {
              ++link_packets_left_out;
              continue;
            }
            const std::string rec = erf_record(ts, len == kIbLinkPacketLen ? kErfTypeInfinibandLink : kErfTypeInfiniband,
                                               p, uint32_t(bytes.size()), len);
            ok = pcap.packet(ts, f.value("in", false), uint32_t(rec.size()),
                             reinterpret_cast<const uint8_t*>(rec.data()), uint32_t(rec.size()));
          } else {
            ok = pcap.packet(ts, f.value("in", false), len, p, uint32_t(bytes.size()));
          }
          if (!ok) {
            write_failed = true;
            interrupt();
          }
        } else {
          print_line(text(started, "port"), f);
        }
        ++written;
      }
      // A pipe's reader sees frames as they come. A reader that went away
      // ends the capture like Ctrl-C; a full disk is an error.
      if (out && std::fflush(out) != 0) {
        write_failed = out != stdout;
        interrupt();
      }
      if (!out) std::cout << std::flush;
      if (!std::cout) interrupt();
      if (frames.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    json counts = last;
    try {
      counts = call(g, "capture.stop", {{"id", id}});
    } catch (const std::exception&) {
      // It ended already (the daemon stopped it); the last read's counts stand.
    }
    if (out && out != stdout && std::fclose(out) != 0) write_failed = true;
    std::cerr << written << (out ? " frames written, " : " frames shown, ") << text(counts, "captured") << " captured, "
              << text(counts, "dropped") << " dropped by the capture ring\n";
    if (link_packets_left_out)
      std::cerr << link_packets_left_out
                << " IB flow-control packets left out of the file (--link-packets keeps them; Wireshark 4.0 "
                   "shows them as malformed)\n";
    if (write_failed && out != stdout) {
      std::cerr << "fabricctl: writing " << o.write << " failed: " << std::strerror(errno) << '\n';
      return 1;
    }
    return 0;
  });
}

}  // namespace vf::ctl
