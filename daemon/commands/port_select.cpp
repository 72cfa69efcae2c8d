#include "daemon/commands/port_select.hpp"

#include <algorithm>
#include <charconv>

namespace vf {
namespace {

bool cabled(const config::Fabric& f, std::string_view sw, uint32_t port) {
  return std::any_of(f.links.begin(), f.links.end(), [&](const config::Link& l) {
    return (l.a.node == sw && l.a.port == port) || (l.b.node == sw && l.b.port == port);
  });
}

void add_fabric(std::vector<PortRef>& out, const config::Config& cfg, size_t fi) {
  const config::Fabric& f = cfg.fabrics[fi];
  for (const config::Hca& h : f.hcas) out.push_back({fi, h.name, 0, true});
  for (const config::Switch& s : f.switches)
    for (uint32_t p = 1; p <= s.ports; ++p)
      if (cabled(f, s.name, p)) out.push_back({fi, s.name, p, false});
}

const char* kHint = "name a vHCA (vib0), a switch (leaf0), a switch port (leaf0/3) or a fabric, or nothing for all";

}  // namespace

std::string PortRef::text() const { return hca ? node : node + "/" + std::to_string(port); }

std::variant<std::vector<PortRef>, PortSelectError> select_ports(const config::Config& cfg, std::string_view name) {
  std::vector<PortRef> out;
  if (name.empty()) {
    for (size_t fi = 0; fi < cfg.fabrics.size(); ++fi) add_fabric(out, cfg, fi);
    return out;
  }
  const size_t slash = name.find('/');
  const std::string_view node = name.substr(0, slash);
  for (size_t fi = 0; fi < cfg.fabrics.size(); ++fi) {
    const config::Fabric& f = cfg.fabrics[fi];
    if (f.find_hca(node)) {
      if (slash != std::string_view::npos)
        return PortSelectError{"a vHCA has one port: name it without a number", "e.g. " + std::string(node)};
      return std::vector<PortRef>{{fi, std::string(node), 0, true}};
    }
    if (const config::Switch* s = f.find_switch(node)) {
      if (slash == std::string_view::npos) {
        for (uint32_t p = 1; p <= s->ports; ++p)
          if (cabled(f, s->name, p)) out.push_back({fi, s->name, p, false});
        return out;
      }
      const std::string_view num = name.substr(slash + 1);
      uint32_t port = 0;
      const auto [end, ec] = std::from_chars(num.data(), num.data() + num.size(), port);
      if (ec != std::errc() || end != num.data() + num.size() || port == 0 || port > s->ports)
        return PortSelectError{"switch " + s->name + " has ports 1.." + std::to_string(s->ports),
                               "e.g. " + s->name + "/1"};
      return std::vector<PortRef>{{fi, s->name, port, false}};
    }
  }
  if (slash == std::string_view::npos)
    for (size_t fi = 0; fi < cfg.fabrics.size(); ++fi)
      if (cfg.fabrics[fi].name == name) {
        add_fabric(out, cfg, fi);
        return out;
      }
  return PortSelectError{"no vHCA, switch, port or fabric named '" + std::string(name) + "'", kHint};
}

std::variant<PortRef, PortSelectError> select_one_port(const config::Config& cfg, std::string_view name) {
  const char* hint = "name one port: a vHCA (vib0) or a switch port (leaf0/3)";
  if (name.empty()) return PortSelectError{"name a port", hint};
  auto sel = select_ports(cfg, name);
  if (auto* e = std::get_if<PortSelectError>(&sel)) return std::move(*e);
  auto& ports = std::get<std::vector<PortRef>>(sel);
  if (ports.size() != 1)
    return PortSelectError{"'" + std::string(name) + "' names " + std::to_string(ports.size()) + " ports", hint};
  return std::move(ports.front());
}

}  // namespace vf
