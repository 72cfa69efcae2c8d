// `fabricctl topology show [--dot]`: every fabric's switches, vHCAs and links
// as tables (ibnetdiscover's picture, plus the emulated link's rate, delay,
// state and faults), or as a Graphviz graph.
#include <cmath>
#include <memory>

#include "ctl/commands_common.hpp"
#include "ctl/subcommands.hpp"

namespace vf::ctl {
namespace {

std::string rate_cell(const json& bps) {
  if (!bps.is_number()) return "";
  const double g = bps.get<double>() / 1e9;
  char b[32];
  std::snprintf(b, sizeof b, g == std::floor(g) ? "%.0fG" : "%.3gG", g);
  return b;
}

std::string delay_text(const json& ns) {
  if (!ns.is_number()) return "";
  const double v = ns.get<double>();
  char b[32];
  if (v >= 1e6) std::snprintf(b, sizeof b, "%.3gms", v / 1e6);
  else if (v >= 1e3) std::snprintf(b, sizeof b, "%.3gus", v / 1e3);
  else std::snprintf(b, sizeof b, "%.0fns", v);
  return b;
}

std::string percent(double p) {
  char b[32];
  std::snprintf(b, sizeof b, "%g%%", p * 100);
  return b;
}

// "loss 1% corrupt 0.1%", or "" for a clean link.
std::string faults_text(const json& link) {
  if (!link.contains("impairment")) return "";
  const json& i = link["impairment"];
  std::string out;
  if (i.value("loss", 0.0) > 0) out += "loss " + percent(i.value("loss", 0.0));
  for (const char* k : {"corrupt", "duplicate", "reorder"})
    if (i.value(k, 0.0) > 0) out += (out.empty() ? "" : " ") + std::string(k) + " " + percent(i.value(k, 0.0));
  return out;
}

std::string link_kind(const json& l) {
  if (l.contains("width")) return text(l, "width") + " " + text(l, "speed");
  return l.contains("speed_gbps") ? text(l, "speed_gbps") + "GbE" : "";
}

void print_fabric(const json& f) {
  const json sw = f.value("switches", json::array()), hcas = f.value("hcas", json::array()),
             links = f.value("links", json::array());
  const bool ib = text(f, "link_layer") == "infiniband";
  const auto count = [](size_t n, const char* one, const char* many) {
    return std::to_string(n) + " " + (n == 1 ? one : many);
  };
  std::cout << "fabric " << cell(text(f, "name")) << " (" << text(f, "link_layer") << "): "
            << count(sw.size(), "switch", "switches") << ", " << count(hcas.size(), "vHCA", "vHCAs") << ", "
            << count(links.size(), "link", "links") << "\n";
  if (!sw.empty()) {
    Table t(ib ? std::vector<std::string>{"SWITCH", "PORTS", "LID", "GUID", "LATENCY"}
               : std::vector<std::string>{"SWITCH", "PORTS", "GUID", "LATENCY"});
    for (const json& s : sw) {
      std::vector<std::string> row{cell(text(s, "name")), text(s, "ports")};
      if (ib) row.push_back(text(s, "lid"));
      row.push_back(text(s, "node_guid"));
      row.push_back(delay_text(s.value("latency_ns", json())));
      t.add(std::move(row));
    }
    t.print(std::cout);
  }
  Table h({"VHCA", ib ? "LID" : "ADDRESS", ib ? "GUID" : "MAC", "STATE"});
  for (const json& x : hcas)
    h.add({cell(text(x, "name")), ib ? text(x, "lid") : text(x, "ipv4"), ib ? text(x, "node_guid") : text(x, "mac"),
           text(x, "state")});
  h.print(std::cout);
  Table l({"LINK", "STATE", "TYPE", "RATE", "DELAY", "MTU", "FAULTS"});
  for (const json& x : links)
    l.add({cell(text(x, "a")) + " -- " + cell(text(x, "b")), text(x, "state"), link_kind(x),
           rate_cell(x.value("rate_bps", json())), delay_text(x.value("delay_ns", json())), text(x, "mtu"),
           faults_text(x)});
  l.print(std::cout);
}

// Graphviz names are quoted strings: keep a daemon's text from closing them.
std::string dot_id(const std::string& s) {
  std::string out = "\"";
  for (char c : s) out += (c == '"' || c == '\\' || static_cast<unsigned char>(c) < 0x20) ? '_' : c;
  return out + "\"";
}

std::string node_of(const std::string& end) { return end.substr(0, end.find('/')); }
std::string port_of(const std::string& end) {
  const size_t slash = end.find('/');
  return slash == std::string::npos ? "" : end.substr(slash + 1);
}

// One undirected graph per fabric (a cluster each), switches as boxes, vHCAs
// as ellipses, links labelled with rate and delay; a down link is dashed red.
void print_dot(const json& r) {
  std::cout << "graph vfabric {\n  graph [rankdir=TB, fontname=\"sans\"];\n"
               "  node [fontname=\"sans\"];\n  edge [fontname=\"sans\", fontsize=9];\n";
  size_t n = 0;
  for (const json& f : r.value("fabrics", json::array())) {
    std::cout << "  subgraph " << dot_id("cluster_" + std::to_string(n++)) << " {\n    label="
              << dot_id(text(f, "name") + " (" + text(f, "link_layer") + ")") << ";\n";
    for (const json& s : f.value("switches", json::array()))
      std::cout << "    " << dot_id(text(s, "name")) << " [shape=box, style=filled, fillcolor=lightgrey];\n";
    for (const json& h : f.value("hcas", json::array()))
      std::cout << "    " << dot_id(text(h, "name")) << " [shape=ellipse];\n";
    for (const json& l : f.value("links", json::array())) {
      const std::string a = text(l, "a"), b = text(l, "b");
      std::string label = rate_cell(l.value("rate_bps", json())) + " " + delay_text(l.value("delay_ns", json()));
      if (const std::string faults = faults_text(l); !faults.empty()) label += "\\n" + faults;
      std::cout << "    " << dot_id(node_of(a)) << " -- " << dot_id(node_of(b)) << " [label=" << dot_id(label);
      if (!port_of(a).empty()) std::cout << ", taillabel=" << dot_id(port_of(a));
      if (!port_of(b).empty()) std::cout << ", headlabel=" << dot_id(port_of(b));
      if (text(l, "state") != "up") std::cout << ", style=dashed, color=red";
      std::cout << "];\n";
    }
    std::cout << "  }\n";
  }
  std::cout << "}\n";
}

}  // namespace

int cmd_topology_show(const Globals& g, bool dot) {
  return guarded([&] {
    Client c(g.socket(), g.timeout);
    const json r = c.call("topology.show", json::object());
    if (g.json) print_json(r);
    else if (dot) print_dot(r);
    else {
      bool first = true;
      for (const json& f : r.value("fabrics", json::array())) {
        if (!first) std::cout << '\n';
        first = false;
        print_fabric(f);
      }
    }
    return 0;
  });
}

void add_topology_commands(CLI::App& app, Dispatch& d) {
  auto* topology = add_group(app, "topology", "The fabrics as built: switches, vHCAs and links.");
  auto topology_dot = std::make_shared<bool>(false);
  auto* topology_show = topology->add_subcommand("show", "Show every fabric's switches, vHCAs and links.");
  topology_show->add_flag("--dot", *topology_dot, "write a Graphviz graph instead of tables");
  topology_show->footer(
      "Per fabric three tables, in config order:\n"
      "  SWITCH  name, ports, LID (IB: the subnet manager's), node GUID, forwarding latency\n"
      "  VHCA    name, LID (IB) or IPv4 address (RoCE), node GUID or MAC, port state\n"
      "  LINK    its two ends; state up/down (fabricctl link set changes it); TYPE the IB width\n"
      "          and speed or the Ethernet speed; RATE the serializer's rate in Gb/s (a `rate:`\n"
      "          in the config or a throttled link shows here); one-way DELAY; MTU; FAULTS the\n"
      "          loss and corruption `fabricctl link set` put on it\n\n"
      "--dot writes one graph with a cluster per fabric: switches are boxes, vHCAs ellipses,\n"
      "links edges labelled with rate and delay and the switch port numbers at their ends; a\n"
      "link that is down is dashed and red.\n\n"
      "EXAMPLES\n"
      "  fabricctl topology show\n"
      "  fabricctl topology show --dot | dot -Tsvg > fabric.svg");
  set_handler(topology_show, d, [topology_dot](const Globals& g) { return cmd_topology_show(g, *topology_dot); });
}

}  // namespace vf::ctl
