// `fabricctl link set A [B] [state down|up] [rate R] [delay D] [loss P]
// [corrupt P] [duplicate P] [reorder P] [seed N]`: the fabric's cabling and
// its faults.
#include <cstdlib>
#include <memory>
#include <optional>

#include "ctl/commands_common.hpp"
#include "ctl/subcommands.hpp"

namespace vf::ctl {

namespace {

bool is_key(const std::string& w) {
  return w == "state" || w == "rate" || w == "delay" || w == "loss" || w == "corrupt" || w == "duplicate" ||
         w == "reorder" || w == "seed";
}

// "1%" or "0.01" -> 0.01; nullopt unless a probability.
std::optional<double> parse_probability(const std::string& w) {
  const bool percent = !w.empty() && w.back() == '%';
  const std::string num = percent ? w.substr(0, w.size() - 1) : w;
  char* end = nullptr;
  const double v = std::strtod(num.c_str(), &end);
  if (num.empty() || *end != '\0') return std::nullopt;
  const double p = percent ? v / 100 : v;
  if (!(p >= 0 && p <= 1)) return std::nullopt;
  return p;
}

int link_usage(const std::string& why) {
  std::cerr << "fabricctl: link set: " << why << "\n"
            << "hint: fabricctl link set A [B] [state down|up] [rate R] [delay D] [loss P] [corrupt P] "
               "[duplicate P] [reorder P] [seed N], "
               "e.g. link set leaf0/5 state down, link set vib0 rate 10G delay 5us, link set vib0 loss 1% seed 7\n";
  return 2;
}

}  // namespace

int cmd_link_set(const Globals& g, const std::vector<std::string>& words) {
  // A [B] then attribute/value pairs: an odd count names the link by one end.
  const size_t k = words.size() % 2 ? 1 : 2;
  if (words.size() <= k) return link_usage("nothing to set");
  if (is_key(words[0]) || (k == 2 && is_key(words[1])))
    return link_usage("name the link first, by one end or by its two nodes; each attribute needs a value");
  json args = {{"a", words[0]}};
  if (k == 2) args["b"] = words[1];
  for (size_t i = k; i < words.size(); i += 2) {
    const std::string& key = words[i];
    if (!is_key(key)) return link_usage("unknown attribute '" + key + "'");
    if (i + 1 == words.size()) return link_usage(key + " needs a value");
    const std::string& v = words[i + 1];
    if (key == "state") {
      if (v != "up" && v != "down") return link_usage("state is up or down");
      args["state"] = v;
    } else if (key == "rate" || key == "delay") {
      args[key] = v;  // units are the daemon's to check ("10G", "5us"), as in the config
    } else if (key == "seed") {
      char* end = nullptr;
      const unsigned long long n = std::strtoull(v.c_str(), &end, 10);
      if (v.empty() || *end != '\0' || v[0] == '-') return link_usage("seed is a whole number");
      args["seed"] = uint64_t(n);
    } else {
      const auto p = parse_probability(v);
      if (!p) return link_usage(key + " is a probability: 0..1 or 0%..100%");
      args[key] = *p;
    }
  }
  return guarded([&] {
    Client c(g.socket(), g.timeout);
    json r = c.call("link.set", args);
    if (g.json) {
      print_json(r);
      return 0;
    }
    std::cout << text(r, "fabric") << ": link " << text(r, "a") << " - " << text(r, "b");
    if (r.contains("state")) {
      std::cout << ' ' << (text(r, "state") == "up" ? "UP" : "DOWN");
      if (r.value("changed", true) == false) std::cout << " (it already was)";
      else if (r.value("subnet_manager_sweeps", false)) std::cout << " (the subnet manager sweeps and reroutes)";
    }
    if (r.contains("rate_bps")) {
      char b[96];
      std::snprintf(b, sizeof b, ", %g Gb/s, delay %s ns", r.value("rate_bps", 0.0) / 1e9, text(r, "delay_ns").c_str());
      std::cout << b;
    }
    if (r.contains("impairment")) {
      const json im = r["impairment"];
      const double loss = im.value("loss", 0.0), corrupt = im.value("corrupt", 0.0),
                   dup = im.value("duplicate", 0.0), reorder = im.value("reorder", 0.0);
      if (loss == 0 && corrupt == 0 && dup == 0 && reorder == 0) {
        std::cout << ", clean (no loss, corruption, duplication or reordering)";
      } else {
        char b[192];
        std::snprintf(b, sizeof b, ", loss %g%% corrupt %g%%", loss * 100, corrupt * 100);
        std::cout << b;
        if (dup > 0 || reorder > 0) {
          std::snprintf(b, sizeof b, " duplicate %g%% reorder %g%%", dup * 100, reorder * 100);
          std::cout << b;
        }
        std::cout << " each way (seed " << text(im, "seed") << ")";
      }
    }
    std::cout << '\n';
    return 0;
  });
}

void add_link_commands(CLI::App& app, Dispatch& d) {
  auto* link = add_group(app, "link", "Links between switches and vHCAs: state, rate, delay and faults.");
  auto link_words = std::make_shared<std::vector<std::string>>();
  auto* link_set = link->add_subcommand(
      "set", "Take a link down or up, change its rate or delay, or impair it: fabricctl link set A [B] [state down|up] "
             "[rate R] [delay D] [loss P] [corrupt P] [duplicate P] [reorder P] [seed N]");
  link_set->add_option("link", *link_words, "A [B], then attribute value pairs")
      ->required()
      ->expected(3, 14)
      ->type_name("A [B] ATTR VALUE...");
  link_set->footer(
      "A names the link by one end: a switch port (leaf0/3) or a vHCA (vib0). A B names it by\n"
      "its two nodes (leaf0 spine1) when only one link joins them.\n\n"
      "state down|up  Like pulling the cable: both ends go down (LinkDownedCounter counts it),\n"
      "               frames on the wire and in the ports' queues are lost (link_lost_frames,\n"
      "               PortXmitDiscards), and a vHCA end goes DOWN (PhysState Polling) with\n"
      "               IBV_EVENT_PORT_ERR to its programs. On InfiniBand the subnet manager then\n"
      "               sweeps: new LFTs route around the link where another path exists (RC\n"
      "               retries cover the gap), and once the link is back up it activates the\n"
      "               vHCA ports on it again (IBV_EVENT_PORT_ACTIVE). `fabricctl routes` shows it.\n"
      "rate R         the serializer's rate both ways, from the next frame on: 10G, 400Mbps, ...\n"
      "               (1 Mb/s up to what the cable carries: width x speed, or the Ethernet speed).\n"
      "               The port keeps the width and speed it reports; VL buffers keep their size.\n"
      "delay D        one-way propagation delay both ways: 500ns, 5us, 2ms (up to 1s). Frames\n"
      "               already on the wire keep their arrival; none is overtaken.\n"
      "loss P         each frame is lost on the wire with probability P (1% or 0.01), both ways\n"
      "corrupt P      each frame not lost gets one bit flipped with probability P; it still\n"
      "               arrives and fails its CRC there (PortRcvErrors, rx_bad_vcrc/icrc)\n"
      "duplicate P    each frame not lost arrives twice with probability P (the copy right behind)\n"
      "reorder P      each frame not lost or duplicated is held back with probability P until the\n"
      "               next frame on that direction has passed it (at most 10 us)\n"
      "seed N         where the draws start: the same seed and traffic impair the same frames\n"
      "               (default 1; the reverse direction uses N+1).\n"
      "Giving any of loss, corrupt, duplicate, reorder or seed replaces all five (absent ones\n"
      "are 0); all 0 makes the link clean again.\n"
      "Counted per direction in link_lost_frames, link_corrupted_frames, link_duplicated_frames\n"
      "and link_reordered_frames (fabricctl metrics).\n\n"
      "EXAMPLES\n"
      "  fabricctl link set leaf0 spine1 state down\n"
      "  fabricctl link set leaf0/3 state up\n"
      "  fabricctl link set vib0 rate 10G delay 5us\n"
      "  fabricctl link set vib0 loss 1% seed 7\n"
      "  fabricctl link set vib0 loss 0 corrupt 0");
  set_handler(link_set, d, [link_words](const Globals& g) { return cmd_link_set(g, *link_words); });
}

}  // namespace vf::ctl
