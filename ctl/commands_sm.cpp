// `fabricctl sm show`: each InfiniBand fabric's subnet manager, its last
// sweep, and the SA's multicast groups.
#include <fmt/format.h>

#include "ctl/commands_common.hpp"
#include "ctl/subcommands.hpp"

namespace vf::ctl {

int cmd_sm_show(const Globals& g) {
  return guarded([&] {
    Client c(g.socket(), g.timeout);
    json r = c.call("sm.show", json::object());
    if (g.json) {
      print_json(r);
      return 0;
    }
    Table t({"FABRIC", "STATE", "SM_LID", "ON", "ROUTING", "SWEEPS", "LINKS_UP", "LFT_CHANGES", "UNROUTED"});
    for (const json& f : r) {
      const json last = f.value("last_sweep", json::object());
      std::string routing = text(f, "routing");
      if (f.contains("roots")) {
        routing += " (roots";
        for (const json& root : f["roots"]) routing += " " + (root.is_string() ? root.get<std::string>() : "?");
        routing += ")";
      }
      t.add({text(f, "fabric"), text(f, "state"), text(f, "sm_lid"), text(f, "sm_node"), routing, text(f, "sweeps"),
             text(last, "links_up") + "/" + text(last, "links"), text(last, "lft_changes"), text(last, "unrouted")});
    }
    if (t.empty()) {
      std::cout << "no InfiniBand fabric: Ethernet fabrics have no subnet manager\n";
      return 0;
    }
    t.print(std::cout);
    // The SA's multicast groups (saquery -g, in short).
    Table groups({"FABRIC", "MGID", "MLID", "Q_KEY", "P_KEY", "MEMBERS"});
    for (const json& f : r)
      for (const json& grp : f.value("mcast_groups", json::array())) {
        std::string members;
        for (const json& m : grp.value("members", json::array()))
          members += (members.empty() ? "" : ",") + text(m, "hca");
        groups.add({text(f, "fabric"), text(grp, "mgid"), fmt::format("0x{:04x}", grp.value("mlid", 0)),
                    text(grp, "qkey"), text(grp, "pkey"), members});
      }
    if (!groups.empty()) {
      std::cout << "\nSA multicast groups\n";
      groups.print(std::cout);
    }
    return 0;
  });
}

void add_sm_commands(CLI::App& app, Dispatch& d) {
  auto* sm = add_group(app, "sm", "The InfiniBand subnet managers.");
  auto* sm_show = sm->add_subcommand("show", "Show each IB fabric's subnet manager and its last sweep.");
  sm_show->footer(
      "COLUMNS\n"
      "  STATE        MASTER: fabricd's SM is the only one on the subnet\n"
      "  SM_LID / ON  the SM's LID (what ibv_query_port's sm_lid says) and the node it runs on\n"
      "  ROUTING      minhop or updn (with its roots)\n"
      "  SWEEPS       sweeps so far: the first at start-up, then one 1 ms after each link change\n"
      "  LINKS_UP     links up / links, at the last sweep\n"
      "  LFT_CHANGES  LFT entries the last sweep programmed differently\n"
      "  UNROUTED     switch/vHCA pairs with no route after the last sweep\n\n"
      "The journal has one line per sweep; `fabricctl routes SWITCH` shows an LFT.");
  set_handler(sm_show, d, cmd_sm_show);
}

}  // namespace vf::ctl
