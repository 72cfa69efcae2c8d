// `fabricctl port set <hca> state down|up`: the operator's switch on a vHCA's
// port, in `ip link set <dev> down` style. Prints the resulting state.
#include "ctl/commands_common.hpp"

namespace vf::ctl {

int cmd_port_set(const Globals& g, const std::string& hca, const std::string& state) {
  return guarded([&] {
    Client c(g.socket(), g.timeout);
    json r = c.call("hca.port.set", {{"hca", hca}, {"state", state}});
    if (g.json) {
      print_json(r);
      return 0;
    }
    std::cout << text(r, "hca") << ": port 1 " << text(r, "port_state");
    // IB: the link trained; the subnet manager's sweep makes the port ACTIVE.
    if (text(r, "port_state") == "INIT") std::cout << " (the subnet manager activates it)";
    std::cout << '\n';
    return 0;
  });
}

}  // namespace vf::ctl
