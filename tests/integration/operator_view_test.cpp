// The operator's view through a real fabricd: `fabricctl topology show` (tables,
// JSON, Graphviz) follows link state and faults; `fabricctl counters` agrees
// with the Prometheus text, turns samples into rates in emulated time,
// refreshes like watch(1), and `counters reset` clears what perfquery -R
// clears and keeps the engine's hw_counters.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <csignal>
#include <sstream>
#include <thread>

#include "fabricd_fixture.hpp"
#include "rc_pingpong.hpp"
#include "tests/support/prom_exposition.hpp"

namespace vf::test {
namespace {

nlohmann::json ctl_json(const Fabricd& d, std::vector<std::string> args) {
  args.insert(args.begin(), "--json");
  const RunResult r = d.ctl(args);
  EXPECT_EQ(r.exit_code, 0) << r.describe();
  return r.exit_code == 0 ? nlohmann::json::parse(r.out) : nlohmann::json::object();
}

const nlohmann::json* find_by(const nlohmann::json& arr, const char* key, const std::string& v) {
  for (const auto& e : arr)
    if (e.value(key, "") == v) return &e;
  return nullptr;
}

TEST(OperatorView, TopologyShowsEveryElementAndFollowsLinkStateAndFaults) {
  Fabricd d(read_file(Paths::source_dir() + "/configs/fat-tree.yaml"));
  auto t = ctl_json(d, {"topology", "show"});
  ASSERT_EQ(t["fabrics"].size(), 1u) << t.dump();
  const auto& f = t["fabrics"][0];
  EXPECT_EQ(f["link_layer"], "infiniband");
  EXPECT_EQ(f["switches"].size(), 6u);
  EXPECT_EQ(f["hcas"].size(), 16u);
  EXPECT_EQ(f["links"].size(), 24u);
  const auto* vib0 = find_by(f["hcas"], "name", "vib0");
  ASSERT_NE(vib0, nullptr);
  EXPECT_EQ((*vib0)["lid"], 1) << "the SM gives HCAs LIDs first, in config order";
  EXPECT_EQ((*vib0)["state"], "ACTIVE");
  const auto* up = find_by(f["links"], "a", "leaf0/5");
  ASSERT_NE(up, nullptr);
  EXPECT_EQ((*up)["b"], "spine0/1");
  EXPECT_EQ((*up)["state"], "up");
  EXPECT_EQ((*up)["width"], "4X");
  EXPECT_EQ((*up)["speed"], "EDR");
  EXPECT_EQ((*up)["rate_bps"], 100'000'000'000ULL);

  ASSERT_EQ(d.ctl({"link", "set", "leaf0/5", "state", "down"}).exit_code, 0);
  ASSERT_EQ(d.ctl({"link", "set", "vib3", "loss", "1%", "corrupt", "0.5%"}).exit_code, 0);
  t = ctl_json(d, {"topology", "show"});
  const auto& links = t["fabrics"][0]["links"];
  EXPECT_EQ((*find_by(links, "a", "leaf0/5"))["state"], "down");
  const auto* faulty = find_by(links, "a", "vib3");
  ASSERT_NE(faulty, nullptr);
  EXPECT_DOUBLE_EQ((*faulty)["impairment"]["loss"].get<double>(), 0.01);
  EXPECT_DOUBLE_EQ((*faulty)["impairment"]["corrupt"].get<double>(), 0.005);
  EXPECT_FALSE(find_by(links, "a", "vib2")->contains("impairment")) << "a clean link has no faults";

  // The tables say the same.
  const RunResult table = d.ctl({"topology", "show"});
  ASSERT_EQ(table.exit_code, 0) << table.describe();
  EXPECT_NE(table.out.find("fabric ib (infiniband): 6 switches, 16 vHCAs, 24 links"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("leaf0/5 -- spine0/1  down"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("loss 1% corrupt 0.5%"), std::string::npos) << table.out;

  // Graphviz: one cluster, every node once, every link an edge, the dead one dashed red.
  const RunResult dot = d.ctl({"topology", "show", "--dot"});
  ASSERT_EQ(dot.exit_code, 0) << dot.describe();
  EXPECT_EQ(dot.out.rfind("graph vfabric {", 0), 0u) << dot.out;
  EXPECT_EQ(dot.out.substr(dot.out.size() - 2), "}\n");
  size_t edges = 0;
  for (size_t at = 0; (at = dot.out.find("\" -- \"", at)) != std::string::npos; ++at) ++edges;
  EXPECT_EQ(edges, 24u) << dot.out;
  EXPECT_NE(dot.out.find(R"("leaf0" -- "spine0" [label="100G 200ns", taillabel="5", headlabel="1", style=dashed, color=red])"),
            std::string::npos)
      << dot.out;
  EXPECT_NE(dot.out.find(R"("vib0" [shape=ellipse])"), std::string::npos) << dot.out;
}

TEST(OperatorView, CountersAgreeWithMetricsAndResetLikePerfquery) {
  Fabricd d(default_config());
  ASSERT_EQ(rc_pingpong(d, "vib1", "vib0", {"-n", "200"}, 19931).exit_code, 0);
  ASSERT_EQ(rc_pingpong(d, "vroce1", "vroce0", {"-n", "10", "-g", "1"}, 19934).exit_code, 0);

  auto c = ctl_json(d, {"counters", "vib0"});
  ASSERT_EQ(c["ports"].size(), 1u) << c.dump();
  const auto& p = c["ports"][0];
  EXPECT_EQ(p["port"], "vib0");
  EXPECT_EQ(p["kind"], "hca");
  const uint64_t xmit = p["counters"]["PortXmitPkts"].get<uint64_t>();
  EXPECT_GE(xmit, 400u) << "200 iterations: a send and an ACK or more each way";
  EXPECT_EQ(xmit, metric_sample(d, R"(vfabric_port_xmit_packets_total{fabric="ib",port="vib0"})"));
  const uint64_t hw_sent = p["hw_counters"]["tx_packets"].get<uint64_t>();
  EXPECT_GT(hw_sent, 0u);
  EXPECT_TRUE(p["classes"][0].contains("xmit_wait")) << p.dump();

  // Every cabled port of every fabric, one row each.
  const RunResult all = d.ctl({"counters"});
  ASSERT_EQ(all.exit_code, 0) << all.describe();
  for (const char* port : {"vib0 ", "vib1 ", "vroce0 ", "vroce1 ", "ibsw0/1 ", "ibsw0/2 ", "ethsw0/1 ", "ethsw0/2 "})
    EXPECT_NE(all.out.find(std::string("\n") + port), std::string::npos) << port << "\n" << all.out;
  EXPECT_EQ(all.out.find("ibsw0/3"), std::string::npos) << "uncabled ports are left out\n" << all.out;
  // One port: every counter, perfquery-style.
  const RunResult one = d.ctl({"counters", "vib0"});
  EXPECT_NE(one.out.find("PortXmitPkts:...........................") , std::string::npos) << one.out;
  EXPECT_NE(one.out.find("." + std::to_string(xmit) + "\n"), std::string::npos) << one.out;

  // The name may come before the word too, and then means the same.
  const RunResult one_port = d.ctl({"counters", "vroce1", "reset"});
  EXPECT_NE(one_port.out.find("cleared the counters of 1 port (vroce1)"), std::string::npos) << one_port.out;
  const RunResult reset = d.ctl({"counters", "reset", "ib"});
  ASSERT_EQ(reset.exit_code, 0) << reset.describe();
  EXPECT_NE(reset.out.find("cleared the counters of 4 ports"), std::string::npos) << reset.out;
  c = ctl_json(d, {"counters", "ib"});
  for (const auto& port : c["ports"]) {
    EXPECT_EQ(port["counters"]["PortXmitPkts"], 0) << port.dump();
    EXPECT_EQ(port["counters"]["PortXmitData"], 0) << port.dump();
  }
  EXPECT_EQ(c["ports"][0]["hw_counters"]["tx_packets"].get<uint64_t>(), hw_sent) << "hw_counters are kept";
  EXPECT_GT(ctl_json(d, {"counters", "vroce0"})["ports"][0]["counters"]["PortXmitPkts"].get<uint64_t>(), 0u)
      << "another fabric's ports are not touched";
  // The next run counts from zero.
  ASSERT_EQ(rc_pingpong(d, "vib1", "vib0", {"-n", "100"}, 19932).exit_code, 0);
  const uint64_t again = ctl_json(d, {"counters", "vib0"})["ports"][0]["counters"]["PortXmitPkts"].get<uint64_t>();
  EXPECT_GE(again, 200u);
  EXPECT_LT(again, xmit);
}

TEST(OperatorView, DeltaGivesRatesInEmulatedTimeAndWatchRefreshes) {
  Fabricd d(default_config());
  // Idle: two samples 0.3 s apart, nothing moved.
  auto idle = ctl_json(d, {"counters", "vib0", "--delta", "-w", "0.3", "--count", "1"});
  ASSERT_TRUE(idle.contains("previous")) << idle.dump();
  EXPECT_GT(idle["interval_ns"].get<double>(), 0.2e9);
  EXPECT_EQ(idle["ports"][0]["counters"]["PortXmitPkts"], idle["previous"]["ports"][0]["counters"]["PortXmitPkts"]);

  // Under traffic the rate is positive, in the table too.
  Process srv({"ibv_rc_pingpong", "-d", "vib1", "-i", "1", "-p", "19933", "-n", "200000"}, d.app_env());
  std::unique_ptr<Process> cli;
  for (int attempt = 0; attempt < 50 && !cli; ++attempt) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    cli = std::make_unique<Process>(
        std::vector<std::string>{"ibv_rc_pingpong", "-d", "vib0", "-i", "1", "-p", "19933", "-n", "200000", "127.0.0.1"},
        d.app_env());
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    if (!cli->running()) cli.reset();
  }
  ASSERT_TRUE(cli) << "the pingpong client never connected";
  const RunResult watch = d.ctl({"counters", "ib", "--delta", "-w", "0.3", "--count", "2"});
  ASSERT_EQ(watch.exit_code, 0) << watch.describe();
  size_t frames = 0;
  for (size_t at = 0; (at = watch.out.find("Every 0.3s: fabricctl counters ib --delta", at)) != std::string::npos; ++at)
    ++frames;
  EXPECT_EQ(frames, 2u) << watch.out;
  // vib0's row: a non-zero packet rate in the XMIT_PPS column.
  const size_t row = watch.out.rfind("\nvib0 ");
  ASSERT_NE(row, std::string::npos) << watch.out;
  std::istringstream cols(watch.out.substr(row + 1, watch.out.find('\n', row + 1) - row - 1));
  std::string name;
  double pps = 0;
  cols >> name >> pps;
  EXPECT_GT(pps, 0) << watch.out;
  cli->signal(SIGTERM);
  srv.signal(SIGTERM);
}

// GET /metrics the way Prometheus scrapes: HTTP/1.1 over TCP to the address
// `fabricctl status` reports.
std::string scrape(const std::string& where) {
  const size_t colon = where.rfind(':');
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(uint16_t(std::stoi(where.substr(colon + 1))));
  inet_pton(AF_INET, where.substr(0, colon).c_str(), &sa.sin_addr);
  if (connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0) {
    close(fd);
    return "connect failed";
  }
  const std::string req = "GET /metrics HTTP/1.1\r\nHost: " + where + "\r\nConnection: close\r\n\r\n";
  EXPECT_EQ(write(fd, req.data(), req.size()), ssize_t(req.size()));
  std::string out;
  char buf[65536];
  for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) out.append(buf, size_t(n));
  close(fd);
  return out;
}

// A dataplane that did not run (here: fabricd stopped for 300 ms while its
// IB links' flow-control timers were due) shows as a stall and a drift in
// status, Prometheus and the journal: the clock paused instead of firing
// 300 ms of timers at once (docs/architecture.md, the clock model).
TEST(OperatorView, AStoppedDataplaneShowsAsAStallAndDriftEverywhere) {
  Fabricd d(default_config());
  auto clock = [&] { return ctl_json(d, {"status"})["lcore"]; };
  // A busy VM may already have stalled the lcore for a millisecond or two
  // (hypervisor steal, RT throttling): what the stop adds is measured.
  const nlohmann::json before = clock();
  const uint64_t stalls0 = before.value("stalls", ~0ull), drift0 = before.value("drift_ns", ~0ull);
  ASSERT_LT(drift0, 250'000'000u) << "calm enough at start: " << before.dump();
  ASSERT_EQ(kill(d.process().pid(), SIGSTOP), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  ASSERT_EQ(kill(d.process().pid(), SIGCONT), 0);
  nlohmann::json c;
  for (int i = 0; i < 50 && (c = clock()).value("stalls", 0ull) == stalls0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_GE(c.value("stalls", 0ull), stalls0 + 1) << c.dump();
  EXPECT_GE(c.value("max_stall_ns", 0ull), 250'000'000u) << c.dump();
  EXPECT_GE(c.value("drift_ns", 0ull) - drift0, 250'000'000u) << "given up, not caught up: " << c.dump();
  EXPECT_GE(metric_sample(d, "vfabric_lcore_drift_ns_total"), 250'000'000u);
  const RunResult st = d.ctl({"status"});
  EXPECT_NE(st.out.find("stalls of the dataplane"), std::string::npos) << st.out;
  // The journal says so within the once-a-second check.
  bool said = false;
  for (int i = 0; i < 30 && !said; ++i) {
    said = d.process().out_so_far().find("behind emulated time") != std::string::npos ||
           d.process().err_so_far().find("behind emulated time") != std::string::npos;
    if (!said) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_TRUE(said) << d.process().err_so_far();
}

TEST(OperatorView, PrometheusScrapesWhatCountersShow) {
  Fabricd d(default_config());
  ASSERT_EQ(rc_pingpong(d, "vib1", "vib0", {"-n", "100"}, 19935).exit_code, 0);
  const auto status = ctl_json(d, {"status"});
  const std::string where = status["daemon"].value("metrics_listen", "");
  ASSERT_EQ(where.rfind("127.0.0.1:", 0), 0u) << status.dump();

  const std::string r = scrape(where);
  ASSERT_EQ(r.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << r.substr(0, 300);
  EXPECT_NE(r.find("Content-Type: text/plain; version=0.0.4"), std::string::npos);
  const std::string body = r.substr(r.find("\r\n\r\n") + 4);
  const auto problems = exposition_problems(body);
  EXPECT_TRUE(problems.empty()) << problems.size() << " problems, the first: " << problems.front();
  // The traffic is over: the scrape and `counters` read the same number.
  const std::string sample = R"(vfabric_port_xmit_packets_total{fabric="ib",port="vib0"} )";
  const size_t at = body.find("\n" + sample);
  ASSERT_NE(at, std::string::npos) << body.substr(0, 2000);
  const uint64_t scraped = std::stoull(body.substr(at + 1 + sample.size()));
  EXPECT_GE(scraped, 200u);
  EXPECT_EQ(scraped, ctl_json(d, {"counters", "vib0"})["ports"][0]["counters"]["PortXmitPkts"].get<uint64_t>());
  // fabricctl metrics is the same exposition.
  EXPECT_NE(d.ctl({"metrics"}).out.find(sample + std::to_string(scraped) + "\n"), std::string::npos);
}

TEST(OperatorView, MetricsListenOffServesNothing) {
  std::string y = default_config();
  const std::string key = "metrics_listen: 127.0.0.1:9469";
  ASSERT_NE(y.find(key), std::string::npos);
  y.replace(y.find(key), key.size(), "metrics_listen: \"off\"");
  Fabricd d(y);
  EXPECT_TRUE(ctl_json(d, {"status"})["daemon"]["metrics_listen"].is_null());
}

// Starts an RC pingpong between vib0 and vib1 that runs until signalled.
struct LongPingpong {
  LongPingpong(const Fabricd& d, int port)
      : server({"ibv_rc_pingpong", "-d", "vib1", "-i", "1", "-p", std::to_string(port), "-n", "1000000"},
               d.app_env()) {
    for (int attempt = 0; attempt < 50 && !client; ++attempt) {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      client = std::make_unique<Process>(
          std::vector<std::string>{"ibv_rc_pingpong", "-d", "vib0", "-i", "1", "-p", std::to_string(port), "-n",
                                   "1000000", "127.0.0.1"},
          d.app_env());
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      if (!client->running()) client.reset();
    }
  }
  ~LongPingpong() {
    if (client) client->signal(SIGTERM);
    server.signal(SIGTERM);
  }
  Process server;
  std::unique_ptr<Process> client;
};

TEST(OperatorView, QpListShowsEachQpWithItsPeerAndOwner) {
  Fabricd d(default_config());
  EXPECT_NE(d.ctl({"qp", "list"}).out.find("no QPs"), std::string::npos);
  {
    LongPingpong pp(d, 19936);
    ASSERT_TRUE(pp.client) << "the pingpong client never connected";
    const auto qps = ctl_json(d, {"qp", "list"});
    ASSERT_EQ(qps.size(), 2u) << qps.dump();
    const auto* a = find_by(qps, "hca", "vib0");
    const auto* b = find_by(qps, "hca", "vib1");
    ASSERT_TRUE(a && b) << qps.dump();
    for (const auto* q : {a, b}) {
      EXPECT_EQ((*q)["type"], "RC");
      EXPECT_EQ((*q)["state"], "RTS");
      EXPECT_EQ((*q)["comm"], "ibv_rc_pingpong");
      EXPECT_EQ((*q)["retry_cnt"], 7) << "ibv_rc_pingpong's retry_cnt";
    }
    EXPECT_EQ((*a)["pid"], pp.client->pid());
    EXPECT_EQ((*b)["pid"], pp.server.pid());
    EXPECT_EQ((*a)["dest_qpn"], (*b)["qpn"]);
    EXPECT_EQ((*b)["dest_qpn"], (*a)["qpn"]);
    EXPECT_EQ((*a)["dlid"], 2) << "vib1's LID";
    // One vHCA only, and the table.
    EXPECT_EQ(ctl_json(d, {"qp", "list", "vib1"}).size(), 1u);
    const RunResult table = d.ctl({"qp", "list", "vib0"});
    EXPECT_NE(table.out.find("vib0  " + std::to_string((*a)["qpn"].get<int>()) + "  RC    RTS"), std::string::npos)
        << table.out;
    // hca show: the objects the pingpong holds against the limits.
    const RunResult show = d.ctl({"hca", "show", "vib0"});
    ASSERT_EQ(show.exit_code, 0) << show.describe();
    EXPECT_NE(show.out.find("vib0 (fabric ib, infiniband)"), std::string::npos) << show.out;
    EXPECT_NE(show.out.find("qps     1       4096"), std::string::npos) << show.out;
    EXPECT_NE(show.out.find("clients (open contexts): 1"), std::string::npos) << show.out;
  }
  // Killed, their QPs go with them.
  for (int i = 0; i < 50 && ctl_json(d, {"qp", "list"}).size() != 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(ctl_json(d, {"qp", "list"}).size(), 0u);
  EXPECT_EQ(d.ctl({"qp", "list", "vib7"}).exit_code, 1);
  EXPECT_EQ(d.ctl({"hca", "show", "vib7"}).exit_code, 1);
}

TEST(OperatorView, EventsFollowLinksPortsSweepsAndResets) {
  Fabricd d(default_config());
  Process events({Paths::fabricctl(), "--runtime-dir", d.runtime_dir(), "events"}, Env{});
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // it asked once: from now on
  ASSERT_EQ(d.ctl({"link", "set", "vib0", "state", "down"}).exit_code, 0);
  ASSERT_EQ(d.ctl({"link", "set", "vib0", "state", "up"}).exit_code, 0);
  ASSERT_EQ(d.ctl({"link", "set", "vib0", "loss", "1%"}).exit_code, 0);
  ASSERT_EQ(d.ctl({"counters", "reset", "vib1"}).exit_code, 0);
  std::string out;
  for (int i = 0; i < 50 && out.find("counters cleared") == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    out = events.out_so_far();
  }
  events.signal(SIGINT);
  const RunResult r = events.wait(std::chrono::seconds(10));
  EXPECT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_EQ(r.out.find("fabricd ready"), std::string::npos) << "only what happened after it started";
  size_t at = 0;
  for (const char* want : {" link     fabric ib: link vib0 - ibsw0/1 DOWN", " port     vib0: port 1 DOWN (Polling)",
                           " link     fabric ib: link vib0 - ibsw0/1 UP", " sm       fabric ib: subnet manager sweep",
                           " port     vib0: port 1 ACTIVE (LinkUp)",
                           " link     fabric ib: link vib0 - ibsw0/1: loss 1% corrupt 0% duplicate 0% reorder 0% (seed 1)",
                           " counters counters cleared on 1 port (vib1)"}) {
    const size_t found = r.out.find(want, at);
    EXPECT_NE(found, std::string::npos) << "missing, or out of order: " << want << "\n" << r.out;
    if (found != std::string::npos) at = found;
  }
  // The history, as JSON lines, starts with the daemon's start.
  const RunResult h = d.ctl({"events", "--history", "--json", "--count", "1"});
  ASSERT_EQ(h.exit_code, 0) << h.describe();
  const auto first = nlohmann::json::parse(h.out);
  EXPECT_EQ(first["seq"], 1);
  EXPECT_EQ(first["kind"], "daemon");
  EXPECT_EQ(first["text"], "fabricd ready: 2 fabrics, 4 vHCAs");
}

TEST(OperatorView, BadNamesAndArgumentsAreRefusedClearly) {
  Fabricd d(default_config());
  const RunResult unknown = d.ctl({"counters", "vib9"});
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_NE(unknown.err.find("no vHCA, switch, port or fabric named 'vib9'"), std::string::npos) << unknown.err;
  EXPECT_NE(unknown.err.find("hint: "), std::string::npos) << unknown.err;
  const RunResult port = d.ctl({"counters", "reset", "ibsw0/9"});
  EXPECT_EQ(port.exit_code, 1);
  EXPECT_NE(port.err.find("switch ibsw0 has ports 1..8"), std::string::npos) << port.err;
  const RunResult usage = d.ctl({"counters", "-w", "0"});
  EXPECT_EQ(usage.exit_code, 2) << usage.describe();
  const RunResult extra = d.ctl({"topology", "show", "--bogus"});
  EXPECT_EQ(extra.exit_code, 2) << extra.describe();
}

}  // namespace
}  // namespace vf::test
