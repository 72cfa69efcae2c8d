// `fabricctl capture PORT [-w FILE|-] [-c COUNT] [--snaplen N]`: the frames
// crossing a port, both ways, as tcpdump-style lines or as pcapng (`-w -`
// streams it, so `fabricctl capture vib0 -w - | tshark -r -` works). Times
// are the dataplane's emulated nanoseconds, anchored to the date the daemon
// gives. Ctrl-C, a closed pipe or COUNT frames end it; the daemon's taps are
// removed on the way out (and by the daemon itself if this process dies).
#include <cstring>
#include <memory>
#include <thread>

#include <boost/beast/core/detail/base64.hpp>

#include "ctl/commands_common.hpp"
#include "ctl/interrupt.hpp"
#include "core/pcapng.hpp"
#include "ctl/subcommands.hpp"

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

void add_capture_commands(CLI::App& app, Dispatch& d) {
  auto capture_opts = std::make_shared<CaptureOptions>();
  auto* capture = app.add_subcommand("capture", "Capture the frames crossing a port, both ways, like tcpdump.");
  capture->add_option("port", capture_opts->port, "a vHCA (vib0) or a switch port (leaf0/3)")->required();
  capture->add_option("-w,--write", capture_opts->write, "write pcapng to FILE (- for stdout) instead of lines")
      ->type_name("FILE");
  capture->add_option("-c,--count", capture_opts->count, "stop after N frames")->type_name("N");
  capture->add_option("--snaplen", capture_opts->snaplen, "keep at most N bytes of each frame (default 65535)")
      ->type_name("N")
      ->check(CLI::Range(1u, 65535u));
  capture->add_flag("--link-packets", capture_opts->link_packets,
                    "with -w on IB: also write the flow-control packets (ERF InfiniBand link records)");
  capture->footer(
      "Taps the link at PORT: what the port sends, stamped when its first bit leaves, and what it\n"
      "receives, stamped when its last bit arrives, in the dataplane's emulated time (so the\n"
      "serialization and propagation delays show between the two). In a file the times start\n"
      "at the date the dataplane clock started and run at emulated speed.\n"
      "With -w, Ethernet frames are LINKTYPE_ETHERNET (no FCS); IB packets (from the LRH, VCRC\n"
      "included) are ERF InfiniBand records (LINKTYPE_ERF), which Wireshark dissects, as it\n"
      "does captures of Endace cards. IB flow-control packets (6-byte link packets) are left out\n"
      "of the file unless --link-packets: Wireshark 4.0 calls them malformed. Without -w each\n"
      "frame, flow control included, prints as one line: time, port, In/Out, length and what it\n"
      "is (LIDs or IPs, transport, opcode, QP, PSN).\n\n"
      "The dataplane never waits for a capture: when the reader falls behind, copies are\n"
      "dropped (counted as 'dropped by the capture ring'), the frames themselves go on. One\n"
      "capture per link at a time. Privileged like the commands that change the fabric (root,\n"
      "fabricd's user or daemon.admin_group): a capture shows other users' data.\n\n"
      "EXAMPLES\n"
      "  fabricctl capture vib0 -c 10\n"
      "  fabricctl capture leaf0/5 -w spine-uplink.pcapng\n"
      "  fabricctl capture vroce0 -w - | tshark -r - -V");
  set_handler(capture, d, [capture_opts](const Globals& g) { return cmd_capture(g, *capture_opts); });
}

}  // namespace vf::ctl
