#include "stacks.hpp"

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

namespace vf::test {

const StackFabric kIbStack{"Ib", "vib", "ib"};
const StackFabric kRoceStack{"Roce", "vroce", "roce"};

// IB: 198.18.0.101.. as in default.yaml; RoCE: 198.18.0.1..
std::string StackFabric::ip(int n) const {
  return "198.18.0." + std::to_string((std::string(fabric) == "ib" ? 101 : 1) + n);
}

namespace {
void fabric_yaml(std::ostringstream& y, const StackFabric& f, int hcas) {
  const bool ib = std::string(f.fabric) == "ib";
  const std::string sw = ib ? "ibsw0" : "ethsw0";
  y << "  - name: " << f.fabric << "\n    link_layer: " << (ib ? "infiniband" : "ethernet")
    << "\n    switches: [{name: " << sw << ", ports: " << hcas << "}]\n    hcas:\n";
  for (int i = 0; i < hcas; ++i) y << "      - {name: " << f.hca(i) << ", ip: " << f.ip(i) << "}\n";
  y << "    links:\n";
  for (int i = 0; i < hcas; ++i)
    y << "      - {a: " << f.hca(i) << ", b: " << sw << "/" << i + 1 << ", "
      << (ib ? "width: 4x, speed: EDR" : "speed: 100G") << ", delay: 100ns, mtu: " << (ib ? 4096 : 1500) << "}\n";
}
}  // namespace

std::string stacks_config(int hcas, bool roce_first) {
  std::ostringstream y;
  y << "daemon:\n  runtime_dir: /run/vfabric\n"
       "  eal_args: [--no-huge, --no-pci, --no-shconf, --no-telemetry, -m, \"1024\"]\n"
       "fabrics:\n";
  fabric_yaml(y, roce_first ? kRoceStack : kIbStack, hcas);
  fabric_yaml(y, roce_first ? kIbStack : kRoceStack, hcas);
  return y.str();
}

bool tcp_listening(int port) {
  char want[8];
  std::snprintf(want, sizeof(want), ":%04X", port);
  for (const char* table : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    std::ifstream f(table);
    std::string sl, local, remote, state;
    std::getline(f, sl);  // header
    while (f >> sl >> local >> remote >> state) {
      if (state == "0A" && local.ends_with(want)) return true;  // TCP_LISTEN
      std::getline(f, sl);
    }
  }
  return false;
}

bool wait_tcp_listening(int port) {
  for (int i = 0; i < 300; ++i) {
    if (tcp_listening(port)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

namespace {
uint64_t sysfs_counter(const Fabricd& d, const std::string& hca, const std::string& file) {
  const std::string v = read_file(d.runtime_dir() + "/sys/class/infiniband/" + hca + "/ports/1/" + file);
  return v.empty() ? 0 : std::stoull(v);
}
}  // namespace

PortTraffic port_traffic(const Fabricd& d, const StackFabric& f, int hca) {
  const std::string h = f.hca(hca);
  // The kernel's units: port_{xmit,rcv}_data count 4-byte words.
  return {sysfs_counter(d, h, "counters/port_xmit_data") * 4, sysfs_counter(d, h, "counters/port_rcv_data") * 4,
          sysfs_counter(d, h, "hw_counters/loopback_packets")};
}

}  // namespace vf::test
