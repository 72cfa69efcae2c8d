// fabricctl: the user's handle on a running fabricd (command line only; the
// commands live in commands_*.cpp, the socket in client.cpp).
#include <CLI/CLI.hpp>
#include <cstdlib>
#include <iostream>
#include <string_view>
#include <utility>
#include <vector>

#include "core/version.hpp"
#include "ctl/commands.hpp"

namespace {

const char* kDescription =
    "fabricctl - inspect a running vfabric daemon and run programs on its virtual HCAs.\n\n"
    "fabricd emulates an RDMA fabric - native InfiniBand, or RoCEv2 over Ethernet - whose\n"
    "virtual HCAs (vHCAs) unmodified programs such as ibv_devinfo, ibv_rc_pingpong, perftest\n"
    "or MPI use through the ordinary libibverbs. fabricctl talks to the daemon over\n"
    "<runtime-dir>/control.sock: it shows the fabric, and starts programs in the environment\n"
    "that makes the vHCAs visible to them.\n";

const char* kFooter =
    "EXAMPLES\n"
    "  fabricctl status                          daemon, fabrics and vHCAs at a glance\n"
    "  fabricctl hca list                        one line per vHCA\n"
    "  fabricctl hca list --json                 the same as JSON, for scripts\n"
    "  fabricctl metrics                         every counter, Prometheus text format\n"
    "  fabricctl exec -- ibv_devinfo -v          run a program that sees the vHCAs\n"
    "  fabricctl exec -- ibv_rc_pingpong -d vib0 -g 0\n"
    "  eval \"$(fabricctl env)\"                   make this shell see the vHCAs\n"
    "  fabricctl --runtime-dir /tmp/lab/run status   a daemon with its own runtime_dir\n\n"
    "ENVIRONMENT\n"
    "  VFABRIC_RUNTIME_DIR   the daemon's runtime directory, as --runtime-dir\n\n"
    "FILES\n"
    "  /run/vfabric/control.sock   control socket (one JSON object per line; see ctl/control-api.md)\n"
    "  /run/vfabric/sys            the sysfs tree libibverbs reads through SYSFS_PATH\n\n"
    "EXIT STATUS\n"
    "  0 success; 1 fabricd is not running or answered with an error; 2 usage error.\n"
    "  exec exits with the program's own status (127: not found, 126: cannot execute).";

bool takes_value(std::string_view opt) { return opt == "--runtime-dir" || opt == "--timeout"; }

// Finds `exec` (the first word that is not a global option or its value);
// fabricctl options may follow it, then CMD starts at the first other word
// or after a `--`. Returns how many argv entries CLI11 should parse, and CMD.
std::pair<int, std::vector<std::string>> split_exec(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    if (takes_value(a)) {
      ++i;
      continue;
    }
    if (!a.empty() && a[0] == '-') continue;
    if (a != "exec") break;  // another subcommand: nothing to split
    for (int j = i + 1; j < argc; ++j) {
      std::string_view w = argv[j];
      if (w == "--") return {j, std::vector<std::string>(argv + j + 1, argv + argc)};
      if (takes_value(w)) ++j;
      else if (w.empty() || w[0] != '-') return {j, std::vector<std::string>(argv + j, argv + argc)};
    }
    return {argc, {}};
  }
  return {argc, {}};
}

// A command group (fabricctl hca ...): it needs a command, and its help
// points at the commands' own rather than repeating the top-level footer.
CLI::App* add_group(CLI::App& app, const std::string& name, const std::string& description) {
  CLI::App* g = app.add_subcommand(name, description);
  g->require_subcommand(1);
  g->footer("Each command has its own --help: fabricctl " + name + " COMMAND --help.");
  return g;
}

}  // namespace

int main(int argc, char** argv) {
  vf::ctl::Globals g;
  if (const char* d = std::getenv("VFABRIC_RUNTIME_DIR"); d && *d) g.runtime_dir = d;
  double timeout_s = 10;

  CLI::App app{kDescription, "fabricctl"};
  app.footer(kFooter);
  app.get_formatter()->column_width(28);
  app.set_version_flag("--version", std::string("fabricctl ") + vf::kVersion);
  app.require_subcommand(1);
  app.fallthrough();  // global options may follow the subcommand: `hca list --json`
  app.add_option("--runtime-dir", g.runtime_dir, "fabricd's runtime directory (daemon.runtime_dir)")
      ->envname("VFABRIC_RUNTIME_DIR")
      ->type_name("DIR")
      ->capture_default_str();
  app.add_flag("--json", g.json, "print the daemon's JSON instead of tables");
  app.add_option("--timeout", timeout_s, "seconds to wait for an answer")
      ->type_name("SECONDS")
      ->check(CLI::Range(0.1, 3600.0))
      ->capture_default_str();

  auto* status = app.add_subcommand("status", "Show the daemon (pid, version, uptime), its fabrics and vHCAs.");
  status->footer(
      "The first line names the daemon; the FABRIC table counts switches, HCAs and links per\n"
      "fabric; the vHCA table is the one `fabricctl hca list` prints.");

  auto* hca = add_group(app, "hca", "Virtual HCAs.");
  auto* hca_list = hca->add_subcommand("list", "List the vHCAs: fabric, link layer, port state, LID/GID, MTU.");
  hca_list->footer(
      "COLUMNS\n"
      "  NAME        RDMA device name (ibv_devices, -d options)\n"
      "  FABRIC      the fabric it is in (the config's fabrics: name)\n"
      "  LINK_LAYER  infiniband or ethernet (RoCEv2)\n"
      "  PORT_STATE  IB port state of port 1 (ACTIVE, DOWN, ...)\n"
      "  LID/GID     IB: the port's LID. RoCE: the IPv4-mapped RoCE v2 GID (use its index,\n"
      "              1, with perftest -x or pingpong -g)\n"
      "  MTU         active path MTU in bytes (RoCE: what fits the Ethernet MTU)\n"
      "  QPS         queue pairs open on the vHCA");

  std::string hca_show_name;
  auto* hca_show = hca->add_subcommand("show", "Show one vHCA: identity, port, GIDs, and objects in use against its limits.");
  hca_show->add_option("hca", hca_show_name, "the vHCA (see fabricctl hca list)")->required();
  hca_show->footer(
      "The objects its programs hold now (PDs, MRs, CQs, QPs, SRQs, AHs) beside the limits\n"
      "ibv_query_device reports, and the per-object ceilings (WRs per QP, CQEs per CQ, ...).\n"
      "--json prints the vHCA's hca.list entry: also every counter.");

  auto* qp = add_group(app, "qp", "Queue pairs of the vHCAs.");
  std::string qp_hca;
  auto* qp_list = qp->add_subcommand("list", "List the QPs (of one vHCA): state, PSNs, outstanding work, retries, owner.");
  qp_list->add_option("hca", qp_hca, "only this vHCA's QPs");
  qp_list->footer(
      "COLUMNS (`rdma resource show qp` for the vHCAs)\n"
      "  QPN          the QP number; TYPE RC, UC or UD; STATE RESET, INIT, RTR, RTS, SQD, SQE, ERR\n"
      "  DEST_QPN     RC/UC: the remote QP\n"
      "  SQ_PSN       the next PSN the requester sends; UNACKED (RC) the oldest PSN not yet\n"
      "               acknowledged: SQ_PSN - UNACKED packets are in flight\n"
      "  EPSN         the PSN the responder expects next\n"
      "  OUTSTANDING  send WRs taken from the send queue and not completed yet\n"
      "  RETRIES      RC: retries left of retry_cnt (counts down while a timeout or NAK repeats)\n"
      "  PID / COMM   the process that created the QP and its command name");

  auto* cm = add_group(app, "cm", "The connection manager (rdma_cm) of the apps on the vHCAs.");
  auto* cm_list = cm->add_subcommand("list", "List the rdma_cm ids: state, addresses, QPs, owner.");
  cm_list->footer(
      "COLUMNS (`rdma resource show cm_id` for the vHCAs)\n"
      "  ID           the id's number (what librdmacm's commands name it by)\n"
      "  HCA          the vHCA it is bound or resolved to; empty: bound to a wildcard address\n"
      "  STATE        the kernel rdma_cm's names: IDLE, ADDR_BOUND, ADDR_QUERY, ADDR_RESOLVED,\n"
      "               ROUTE_QUERY, ROUTE_RESOLVED, LISTEN, CONNECT (REQ/REP on the wire),\n"
      "               CONNECT_REQUEST (a request the app has not accepted or rejected yet),\n"
      "               ESTABLISHED, DISCONNECT\n"
      "  PS / TYPE    port space (TCP, UDP, IB, IPOIB) and QP type (RC, UC, UD)\n"
      "  SRC_ADDR     the local address:port; DST_ADDR the peer's\n"
      "  QPN          the app's QP; DEST_QPN the peer's, once the handshake told it\n"
      "  PID / COMM   the process that opened the rdma_cm channel\n\n"
      "The CM messages each port sent and received are in `fabricctl hca show HCA --json`\n"
      "(cm_*) and /metrics (vfabric_cm_*).");

  auto* port = add_group(app, "port", "Ports: vHCA ports (set, show) and switch ports (show).");
  std::string port_hca, port_attr, port_value;
  auto* port_set = port->add_subcommand(
      "set", "Take a vHCA's port down or up, or make its NIC storm PFC: fabricctl port set HCA state down|up | "
             "pfc_storm PRIOS|off");
  port_set->add_option("hca", port_hca, "the vHCA (see fabricctl hca list)")->required();
  port_set->add_option("attribute", port_attr, "state or pfc_storm")
      ->required()
      ->check(CLI::IsMember({"state", "pfc_storm"}));
  port_set->add_option("value", port_value, "state: down or up; pfc_storm: priorities (3 or 3,4) or off")->required();
  port_set->footer(
      "Like `ip link set DEV down|up` on a real port: while down the port passes no packets (RC\n"
      "QPs time out as on hardware), ibv_query_port and sysfs ports/1/state say DOWN, and every\n"
      "program with the vHCA open gets IBV_EVENT_PORT_ERR. Back up, an InfiniBand port trains\n"
      "to INIT and the subnet manager's next sweep (about a millisecond later) makes it ACTIVE,\n"
      "then IBV_EVENT_PORT_ACTIVE; a RoCE port is ACTIVE at once. The switch port at the\n"
      "other end goes down and up with it (LinkDownedCounter on both).\n\n"
      "pfc_storm PRIOS|off (RoCE vHCAs) injects the classic PFC storm: the vHCA's NIC behaves\n"
      "as if its receive pipeline were stuck and holds XOFF on those priorities, refreshed,\n"
      "whatever it holds, until `pfc_storm off`. Its switch port stops sending them; with\n"
      "qos: {pfc_watchdog: T} the switch port's watchdog declares a storm after T paused,\n"
      "ignores the pauses and sends (a real NIC would drop what it cannot take; the emulated one\n"
      "takes everything), logs it and sends a pfc-storm event, and\n"
      "recovers once no pause came for T (tx_pause_storm_warning_events counts it).\n\n"
      "EXAMPLES\n"
      "  fabricctl port set vib0 state down\n"
      "  fabricctl port set vib0 state up\n"
      "  fabricctl port set vroce0 pfc_storm 3\n"
      "  fabricctl port set vroce0 pfc_storm off");

  std::string port_show_name;
  auto* port_show = port->add_subcommand("show", "Show one port: state, link, counters, and per class its queue, wait and credits.");
  port_show->add_option("port", port_show_name, "a vHCA (vib0) or a switch port (leaf0/3)")->required();
  port_show->footer(
      "The first line: state (a vHCA's IBA PortState and PhysState; a switch port is ACTIVE or\n"
      "DOWN with its link), the port at the other end of the link, rate, delay and MTU. The\n"
      "second: the PMA counters an operator looks at first (PortXmitWait in microseconds).\n\n"
      "COLUMNS (one row per class: IB the link's data VLs, vl15 and link_ctrl; Ethernet the\n"
      "priorities)\n"
      "  QUEUED     frames waiting in the egress queue now\n"
      "  XMIT_PKTS  frames sent; DISCARDS: dropped on the way out\n"
      "  WAIT_US    time the port waited with this class held by flow control (PortVLXmitWait)\n"
      "  CREDITS    IB: 64-byte blocks this port may still send on the VL (FCCL - FCTBS)\n"
      "  BUFFER     IB: this port's receive buffer for the VL, in 64-byte blocks; USED now,\n"
      "             PEAK the most ever held\n\n"
      "EXAMPLES\n"
      "  fabricctl port show vib0\n"
      "  fabricctl port show leaf0/5\n"
      "  fabricctl --json port show leaf0/5    # also FCTBS/FCCL/ABR per VL and FCP counts");

  auto* link = add_group(app, "link", "Links between switches and vHCAs: state, rate, delay and faults.");
  std::vector<std::string> link_words;
  auto* link_set = link->add_subcommand(
      "set", "Take a link down or up, change its rate or delay, or impair it: fabricctl link set A [B] [state down|up] "
             "[rate R] [delay D] [loss P] [corrupt P] [duplicate P] [reorder P] [seed N]");
  link_set->add_option("link", link_words, "A [B], then attribute value pairs")
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

  std::string routes_switch;
  auto* routes = app.add_subcommand(
      "routes", "Show a switch's forwarding table: an IB switch's LFT, an Ethernet switch's FDB and IPv4 routes.");
  routes->add_option("switch", routes_switch, "the switch (as named in the config)")->required();
  routes->footer(
      "COLUMNS\n"
      "  LID          a vHCA's base LID (with LMC > 0 its whole range is routed alike)\n"
      "  DESTINATION  the vHCA that LID belongs to\n"
      "  PORT         the egress port the subnet manager programmed; none: no route (the\n"
      "               vHCA's link is down), a packet to it is a PortRcvSwitchRelayErrors drop\n\n"
      "The header line names the routing algorithm and the subnet manager's last sweep.\n"
      "With UD multicast groups joined (ibv_attach_mcast), the MFT follows, as `ibroute -M`:\n"
      "  MLID         the group's multicast LID\n"
      "  PORTS        the ports a packet to it leaves by (never its ingress port); none: off the tree\n"
      "  MEMBERS      the vHCAs with a QP attached (attaching is joining: there is no SA)\n\n"
      "ETHERNET SWITCHES\n"
      "  An Ethernet switch is a learning bridge: its FDB is what it learned from source\n"
      "  addresses (and the config's static entries), as `bridge fdb show` lists it.\n"
      "  VLAN         the 802.1Q VLAN the entry is for (1: untagged hosts)\n"
      "  MAC          the station's address\n"
      "  PORT         where frames to it go; unknown destinations are flooded in their VLAN\n"
      "  TYPE         learned (ages out after the switch's ageing time of silence) or static\n"
      "  AGE          time since the station last sent a frame\n"
      "  STATION      the vHCA with that MAC, if any\n"
      "  The last line counts learning, moves, ageing, flooding and the frames dropped by\n"
      "  VLAN ingress filtering or because the destination sits behind the ingress port.\n\n"
      "ROUTING ETHERNET SWITCHES\n"
      "  A switch with a router (a leaf or spine of configs/leaf-spine.yaml) then shows its\n"
      "  IPv4 table, as `ip route` lists it, longest prefix first:\n"
      "  DESTINATION  the prefix (- on the further members of an ECMP group)\n"
      "  TYPE         connected (the gateway's subnet: hosts found by ARP), via (one next\n"
      "               hop) or ecmp (a hash of addresses and UDP ports picks the member, so a\n"
      "               RoCE QP keeps one path)\n"
      "  VIA PORT     the routed port to the next hop\n"
      "  NEXT HOP     the neighbouring router and its MAC\n"
      "  LINK         up, or down (the router skips a member whose link is down)\n"
      "  then the hosts the gateway resolved (ip neigh) and what the router counted: packets\n"
      "  routed, dropped by cause, and its ARP.");

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

  auto* topology = add_group(app, "topology", "The fabrics as built: switches, vHCAs and links.");
  bool topology_dot = false;
  auto* topology_show = topology->add_subcommand("show", "Show every fabric's switches, vHCAs and links.");
  topology_show->add_flag("--dot", topology_dot, "write a Graphviz graph instead of tables");
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

  vf::ctl::CountersOptions counters_opts;
  auto* counters = app.add_subcommand("counters", "Show port counters (IBA PMA names), once, as rates, or refreshed.");
  counters->add_option("name", counters_opts.name, "a vHCA (vib0), switch (leaf0), switch port (leaf0/3) or fabric");
  counters->add_option("-w,--watch", counters_opts.watch_s, "refresh every SECONDS, like watch(1)")
      ->type_name("SECONDS")
      ->check(CLI::Range(0.1, 3600.0));
  counters->add_flag("--delta", counters_opts.delta, "rates per second (over -w's interval, else 1 s)");
  counters->add_option("--count", counters_opts.count, "with -w: stop after N refreshes")->type_name("N");
  std::string counters_reset_name;
  auto* counters_reset = counters->add_subcommand("reset", "Clear the counters of the ports NAME selects (all without one).");
  counters_reset->add_option("name", counters_reset_name, "a vHCA, switch, switch port or fabric");
  counters_reset->footer(
      "Like perfquery -R: every PMA count of the port (and of a vHCA's port, its own) restarts at\n"
      "0; queue and buffer levels stay, and their peaks restart from the level now. A vHCA's\n"
      "hw_counters (retransmissions, RNR NAKs, ...) are the engine's and are kept, as mlx5 keeps\n"
      "its. Prometheus tolerates the reset (rate() treats a drop as one).");
  counters->footer(
      "NAME selects the ports: a vHCA's, one switch port, every cabled port of a switch or of a\n"
      "fabric; without NAME every cabled port of every fabric.\n\n"
      "Several ports print one row each:\n"
      "  XMIT_PKTS / RCV_PKTS    PortXmitPkts / PortRcvPkts (link packets such as flow-control\n"
      "                          packets and PFC frames are not in them, as in the PMA)\n"
      "  XMIT_DATA / RCV_DATA    PortXmitData / PortRcvData: octets / 4, headers and CRCs included\n"
      "  XMIT_DISCARDS           PortXmitDiscards: dropped on the way out\n"
      "  RCV_ERRORS              PortRcvErrors + PortRcvSwitchRelayErrors + PortRcvDiscards\n"
      "  WAIT_US                 PortXmitWait: time a frame was ready but flow control held it\n"
      "One port prints every counter, perfquery-style, then per class what moved.\n\n"
      "--delta samples twice and prints per-second rates in the daemon's emulated time (the\n"
      "time link rates are in, see daemon.time_dilation): packets/s, Gb/s, and WAIT_% the share\n"
      "of time the port waited. -w SECONDS refreshes like watch(1) (the screen is cleared on a\n"
      "terminal) until interrupted or --count refreshes. --json prints the daemon's reply; with\n"
      "--delta it carries the previous sample and interval_ns.\n\n"
      "EXAMPLES\n"
      "  fabricctl counters                      every port, totals\n"
      "  fabricctl counters vib0                 one vHCA, every counter\n"
      "  fabricctl counters leaf0 -w 1 --delta   a switch's ports, rates refreshed every second\n"
      "  fabricctl counters reset                clear every port before a test run");

  vf::ctl::CaptureOptions capture_opts;
  auto* capture = app.add_subcommand("capture", "Capture the frames crossing a port, both ways, like tcpdump.");
  capture->add_option("port", capture_opts.port, "a vHCA (vib0) or a switch port (leaf0/3)")->required();
  capture->add_option("-w,--write", capture_opts.write, "write pcapng to FILE (- for stdout) instead of lines")
      ->type_name("FILE");
  capture->add_option("-c,--count", capture_opts.count, "stop after N frames")->type_name("N");
  capture->add_option("--snaplen", capture_opts.snaplen, "keep at most N bytes of each frame (default 65535)")
      ->type_name("N")
      ->check(CLI::Range(1u, 65535u));
  capture->add_flag("--link-packets", capture_opts.link_packets,
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

  bool events_history = false;
  uint64_t events_count = 0;
  auto* events = app.add_subcommand("events", "Follow what happens to the fabric: ports, links, sweeps, deadlocks.");
  events->add_flag("--history", events_history, "first print what fabricd kept (its last 1024 events)");
  events->add_option("-c,--count", events_count, "stop after N events")->type_name("N");
  events->footer(
      "Like `ip monitor`: one line per event as it happens, until Ctrl-C -- local time, kind, and\n"
      "what happened in plain words. Kinds:\n"
      "  port      a vHCA's port changed state (ACTIVE, DOWN, INIT...), with its PhysState\n"
      "  link      a link went down or up, was impaired or cleared, or got a new rate or delay\n"
      "  sm        an InfiniBand subnet manager sweep: links up, LFT entries changed, ports\n"
      "            activated, switch/vHCA pairs left without a route\n"
      "  deadlock  a credit-loop deadlock the dataplane found (see docs/operator-guide.md)\n"
      "  pfc-storm a switch or vHCA port's PFC watchdog declared a storm, or saw it end\n"
      "  capture   a capture started or ended, with its counts\n"
      "  counters  counters were cleared\n"
      "  qos       an IB port's VL record was set (fabricctl qos set)\n"
      "  daemon    fabricd started, or reloaded its config (what it applied, what needs a restart)\n"
      "--json prints one JSON object per line: {seq, time_ns, kind, text}.\n\n"
      "EXAMPLES\n"
      "  fabricctl events\n"
      "  fabricctl events --history --json | jq -r .text");

  auto* qos = add_group(app, "qos", "Port QoS: IB VL records (SL to VL, VL arbitration); Ethernet trust, PFC, ETS, DCQCN.");
  std::string qos_show_port;
  auto* qos_show = qos->add_subcommand("show", "Show a port's QoS: IB VLs and arbitration; Ethernet trust, PFC, ETS, DCQCN.");
  qos_show->add_option("port", qos_show_port, "a vHCA (vib0) or a switch port (leaf0/3)")->required();
  qos_show->footer(
      "What the subnet manager programmed from the config's qos: section (or qos set since):\n"
      "  SL / VL       the SL to VL table: the VL an SL's packets take out of this port (for a\n"
      "                switch port, from every input); '-' is VL15: the SL may not use the port\n"
      "  vlarb_high    the high-priority arbitration list, VL:weight (64-byte units per turn)\n"
      "  high_limit    4 KiB units the high list may send before the low list's turn (255: no limit)\n"
      "  vlarb_low     the low-priority list\n"
      "An Ethernet port shows mlnx_qos's view: trust, the PFC vector and pause state, the DSCP\n"
      "map, each traffic class (tc: N, tsa, bw, its priorities), a RoCE vHCA's DCQCN knobs,\n"
      "each lossless priority's thresholds and use, and the 802.1Qbb headroom model.");
  std::vector<std::string> qos_words;
  auto* qos_set = qos->add_subcommand(
      "set", "Program a port: IB fabricctl qos set PORT [sl2vl SL:VL,...] [vlarb_high VL:W,...] [vlarb_low VL:W,...] "
             "[high_limit N]; Ethernet [prio_tc ...] [tsa ...] [tc_bw ...] [dcqcn on|off] [DCQCN knob VALUE]");
  qos_set->add_option("words", qos_words, "PORT, then attribute value pairs")->required()->expected(3, 17);
  qos_set->footer(
      "Like an SMP from an operator's tool: sl2vl changes the listed SLs only; vlarb_high and\n"
      "vlarb_low replace their list (at most 8 entries); every VL must be one of the port's\n"
      "operational data VLs (sl2vl may also name 15: the SL may not use the port). As on a real\n"
      "subnet, the subnet manager programs a vHCA port from the config again when a sweep\n"
      "activates it (after its link went down and up); a switch port keeps what was set until\n"
      "fabricd restarts. Privileged: root, fabricd's user or daemon.admin_group.\n\n"
      "EXAMPLES\n"
      "  fabricctl qos set vib0 sl2vl 1:1,2:1\n"
      "  fabricctl qos set leaf0/5 vlarb_low 0:192,1:64\n"
      "  fabricctl qos set vib0 vlarb_high 1:16 high_limit 4\n\n"
      "ETHERNET (as mlnx_qos --prio_tc/--tsa/--tcbw and mlx5's ecn knobs, at run time)\n"
      "  prio_tc TC,x8     the traffic class of priorities 0..7\n"
      "  tsa ets|strict,x8 each class's selection: strict goes first (highest class first),\n"
      "                    ets shares what is left\n"
      "  tc_bw PCT,x8      the ets classes' shares, summing to 100 (a strict class: 0)\n"
      "  dcqcn on|off      a RoCE vHCA's DCQCN (reaction and notification point)\n"
      "  min_time_between_cnps T, rpg_time_reset T, rpg_ai_rate R, rpg_hai_rate R\n"
      "                    a vHCA's DCQCN parameters, e.g. 50us, 5Mbps\n"
      "  Trust, the DSCP map and PFC stay the config's (restart to change them).\n"
      "  fabricctl qos set sw/1 tsa ets,ets,ets,ets,ets,ets,strict,ets tc_bw 13,13,13,13,24,12,0,12\n"
      "  fabricctl qos set vroce0 dcqcn off\n"
      "  fabricctl qos set vroce0 rpg_ai_rate 10Mbps min_time_between_cnps 20us");

  auto* config = add_group(app, "config", "fabricd configs.");
  std::string config_file;
  auto* config_check = config->add_subcommand("check", "Validate a config file as fabricd would, without a daemon.");
  config_check->add_option("file", config_file, "the YAML config")->required();
  config_check->footer(
      "Runs fabricd's own parser and checks (the same as fabricd --config FILE --check): a\n"
      "config fabricd would refuse prints the first problem with its line and column and what\n"
      "to do, and exits 1; a valid one prints a summary and exits 0, with a warning line for\n"
      "what is valid but worth knowing (a routing whose routes form a credit loop, which can\n"
      "deadlock a lossless fabric). Check a config before installing it, reloading fabricd\n"
      "(which applies links' rate and delay live) or restarting it.\n\n"
      "EXAMPLES\n"
      "  fabricctl config check /etc/vfabric/fabricd.yaml\n"
      "  fabricctl --json config check lab.yaml");

  auto* metrics = app.add_subcommand("metrics", "Print every counter in the Prometheus text format.");
  metrics->footer(
      "Ports (HCA and switch) by IBA PMA name, per class, per link direction, per vHCA (HCA port,\n"
      "engine, events) and the dataplane thread; counters are vfabric_<name>_total, levels\n"
      "(queue depths, credits) vfabric_<name>. fabricd also serves this at GET /metrics\n"
      "(daemon.metrics_listen, default 127.0.0.1:9469) for Prometheus to scrape. E.g. for\n"
      "node_exporter's textfile collector:  fabricctl metrics > /var/lib/node_exporter/vfabric.prom");

  auto* env = app.add_subcommand("env", "Print the environment that makes the vHCAs visible, as shell exports.");
  env->footer(
      "Use it as:  eval \"$(fabricctl env)\"\n"
      "The daemon supplies the variables: SYSFS_PATH (its fake sysfs), RDMAV_DRIVERS (the vHCA\n"
      "provider), VFABRIC_RUNTIME_DIR and LD_PRELOAD (the preload shim, prepended to yours).");

  auto* exec = app.add_subcommand("exec", "Run a program with the vHCAs visible: fabricctl exec -- CMD [ARGS...]");
  exec->footer(
      "Sets the daemon's environment (see `fabricctl env`), then replaces fabricctl with CMD,\n"
      "so CMD's exit status is fabricctl's. CMD starts at the first word after `exec` that is not\n"
      "a fabricctl option, or after `--`; its own options are never read by fabricctl.\n\n"
      "EXAMPLES\n"
      "  fabricctl exec -- ibv_devices\n"
      "  fabricctl exec -- ib_write_bw -d vib0                # terminal 1\n"
      "  fabricctl exec -- ib_write_bw -d vib1 localhost      # terminal 2\n"
      "  fabricctl exec -- ib_send_lat -d vroce0 -x 1         # RoCE: GID index 1 is IPv4\n"
      "  fabricctl exec -- ibnetdiscover                      # infiniband-diags: MADs answered\n"
      "  fabricctl exec -- perfquery -x 3 2                   # by fabricd's SMAs and PMAs");

  // exec's command line is split off before CLI11 sees it, so options of CMD
  // (`-d vib0`, `--json`...) can never be taken for fabricctl's.
  auto [cli_argc, command] = split_exec(argc, argv);
  try {
    app.parse(cli_argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  g.timeout = std::chrono::milliseconds(static_cast<long>(timeout_s * 1000));

  if (*status) return vf::ctl::cmd_status(g);
  if (*hca_list) return vf::ctl::cmd_hca_list(g);
  if (*hca_show) return vf::ctl::cmd_hca_show(g, hca_show_name);
  if (*qp_list) return vf::ctl::cmd_qp_list(g, qp_hca);
  if (*cm_list) return vf::ctl::cmd_cm_list(g);
  if (*env) return vf::ctl::cmd_env(g);
  if (*metrics) return vf::ctl::cmd_metrics(g);
  if (*port_set) return vf::ctl::cmd_port_set(g, port_hca, port_attr, port_value);
  if (*port_show) return vf::ctl::cmd_port_show(g, port_show_name);
  if (*link_set) return vf::ctl::cmd_link_set(g, link_words);
  if (*routes) return vf::ctl::cmd_routes(g, routes_switch);
  if (*sm_show) return vf::ctl::cmd_sm_show(g);
  if (*topology_show) return vf::ctl::cmd_topology_show(g, topology_dot);
  // `counters vib0 reset` names the ports before the word, `counters reset vib0` after it.
  if (*counters_reset)
    return vf::ctl::cmd_counters_reset(g, counters_reset_name.empty() ? counters_opts.name : counters_reset_name);
  if (*counters) return vf::ctl::cmd_counters(g, counters_opts);
  if (*config_check) return vf::ctl::cmd_config_check(g, config_file);
  if (*capture) return vf::ctl::cmd_capture(g, capture_opts);
  if (*events) return vf::ctl::cmd_events(g, events_history, events_count);
  if (*qos_show) return vf::ctl::cmd_qos_show(g, qos_show_port);
  if (*qos_set) return vf::ctl::cmd_qos_set(g, qos_words);
  if (*exec) return vf::ctl::cmd_exec(g, command);
  return 2;
}
