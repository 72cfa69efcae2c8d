// `fabricctl status`: the daemon, its fabrics and vHCAs at a glance.
#include <fmt/format.h>

#include <cmath>

#include "ctl/commands_common.hpp"
#include "ctl/subcommands.hpp"

namespace vf::ctl {

std::string text(const json& obj, const char* key) {
  if (!obj.is_object()) return "";
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return "";
  if (it->is_string()) return cell(it->get<std::string>());
  if (it->is_boolean()) return it->get<bool>() ? "yes" : "no";
  if (it->is_number_float()) return fmt::format("{:g}", it->get<double>());
  if (it->is_number()) return it->dump();
  return cell(it->dump());
}

std::string duration_text(double s) {
  if (!std::isfinite(s) || s < 0) return "";
  auto t = static_cast<unsigned long long>(s);
  unsigned long long d = t / 86400, h = t / 3600 % 24, m = t / 60 % 60, sec = t % 60;
  if (d) return fmt::format("{}d {:02}h {:02}m", d, h, m);
  if (h) return fmt::format("{}h {:02}m {:02}s", h, m, sec);
  if (m) return fmt::format("{}m {:02}s", m, sec);
  return fmt::format("{}s", sec);
}

namespace {
double ms_of(const json& lcore, const char* key) {
  const auto it = lcore.find(key);
  return it != lcore.end() && it->is_number() ? it->get<double>() / 1e6 : 0;
}
}  // namespace

// The emulated clock's health: drift is emulated time given up to stalls
// (the dataplane did not run), so figures measured while it grows are the
// host's (docs/operator-guide.md, "When the host is the bottleneck").
std::string clock_text(const json& lcore) {
  const std::string stalls = text(lcore, "stalls");
  if (stalls.empty()) return "";
  if (stalls == "0") return "in step with real time (no stalls)";
  return fmt::format("{} stalls of the dataplane, the longest {:.1f} ms; emulated time {:.1f} ms behind real time",
                     stalls, ms_of(lcore, "max_stall_ns"), ms_of(lcore, "drift_ns"));
}

void print_json(const json& j) { std::cout << j.dump(2, ' ', false, json::error_handler_t::replace) << '\n'; }

void print_hca_table(const json& hcas);  // commands_hca.cpp

int cmd_status(const Globals& g) {
  return guarded([&] {
    Client c(g.socket(), g.timeout);
    json st = c.call("status");
    // The vHCA list comes from its own command; status stays useful if that
    // one fails (e.g. the dataplane is busy).
    json hcas;
    std::string hca_error;
    try {
      hcas = c.call("hca.list");
    } catch (const DaemonError& e) {
      hca_error = e.what();
    }
    if (g.json) {
      json out = st;
      if (out.is_object() && !hcas.is_null()) out["hcas"] = hcas;
      print_json(out);
      return 0;
    }
    const json d = st.is_object() && st.contains("daemon") ? st["daemon"] : json::object();
    std::string head = "fabricd";
    if (auto v = text(d, "version"); !v.empty()) head += " " + v;
    if (auto p = text(d, "pid"); !p.empty()) head += ", pid " + p;
    if (d.contains("uptime_s") && d["uptime_s"].is_number()) head += ", up " + duration_text(d["uptime_s"].get<double>());
    std::cout << head << '\n';
    auto field = [&](const char* label, const std::string& v) {
      if (!v.empty()) std::cout << fmt::format("{:<14}{}\n", label, v);
    };
    field("config:", text(d, "config"));
    field("runtime dir:", text(d, "runtime_dir"));
    if (auto m = text(d, "metrics_listen"); !m.empty()) field("metrics:", "http://" + cell(m) + "/metrics");
    if (auto td = text(d, "time_dilation"); !td.empty() && td != "1") field("time dilation:", td + "x");
    if (text(d, "catch_up") == "exact") field("catch-up:", "exact (timers and ring work in emulated order after any late pass)");
    field("clients:", text(st, "clients"));
    if (st.is_object() && st.contains("lcore") && st["lcore"].is_object()) field("clock:", clock_text(st["lcore"]));
    if (st.is_object() && st.contains("mbufs") && st["mbufs"].is_object())
      field("mbufs:", fmt::format("{} in use of {}", text(st["mbufs"], "in_use"), text(st["mbufs"], "size")));

    if (st.is_object() && st.contains("fabrics") && st["fabrics"].is_array()) {
      Table t({"FABRIC", "LINK_LAYER", "SWITCHES", "HCAS", "LINKS"});
      for (const auto& f : st["fabrics"])
        t.add({text(f, "name"), text(f, "link_layer"), text(f, "switches"), text(f, "hcas"), text(f, "links")});
      std::cout << '\n';
      t.print(std::cout);
    }
    if (hcas.is_array()) {
      std::cout << '\n';
      print_hca_table(hcas);
    } else if (!hca_error.empty()) {
      std::cout << "\nvHCAs: unavailable (" << cell(hca_error, 200) << ")\n";
    }
    return 0;
  });
}

void add_status_commands(CLI::App& app, Dispatch& d) {
  auto* status = app.add_subcommand("status", "Show the daemon (pid, version, uptime), its fabrics and vHCAs.");
  status->footer(
      "The first line names the daemon; the FABRIC table counts switches, HCAs and links per\n"
      "fabric; the vHCA table is the one `fabricctl hca list` prints.");
  set_handler(status, d, cmd_status);
}

}  // namespace vf::ctl
