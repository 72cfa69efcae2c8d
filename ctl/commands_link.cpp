// `fabricctl link set A [B] state down|up` and `fabricctl routes SWITCH`: the
// fabric's cabling and the forwarding the subnet manager programs over it.
#include "ctl/commands_common.hpp"

namespace vf::ctl {

int cmd_link_set(const Globals& g, const std::string& a, const std::string& b, const std::string& state) {
  return guarded([&] {
    Client c(g.socket(), g.timeout);
    json args = {{"a", a}, {"state", state}};
    if (!b.empty()) args["b"] = b;
    json r = c.call("link.set", args);
    if (g.json) {
      print_json(r);
      return 0;
    }
    std::cout << text(r, "fabric") << ": link " << text(r, "a") << " - " << text(r, "b") << ' '
              << (state == "up" ? "UP" : "DOWN");
    if (r.value("changed", true) == false) std::cout << " (it already was)";
    else if (r.value("subnet_manager_sweeps", false)) std::cout << " (the subnet manager sweeps and reroutes)";
    std::cout << '\n';
    return 0;
  });
}

int cmd_routes(const Globals& g, const std::string& sw) {
  return guarded([&] {
    Client c(g.socket(), g.timeout);
    json r = c.call("routes", {{"switch", sw}});
    if (g.json) {
      print_json(r);
      return 0;
    }
    const json sweep = r.value("sweep", json::object());
    std::cout << text(r, "switch") << " (fabric " << text(r, "fabric") << ", " << text(r, "routing")
              << " routing, sweep " << text(sweep, "number") << ": " << text(sweep, "links_up") << " of "
              << text(sweep, "links") << " links up)\n";
    Table t({"LID", "DESTINATION", "PORT"});
    for (const json& e : r.value("lft", json::array()))
      t.add({text(e, "lid"), text(e, "destination"), e.contains("port") && e["port"].is_null() ? "none" : text(e, "port")});
    t.print(std::cout);
    return 0;
  });
}

}  // namespace vf::ctl
