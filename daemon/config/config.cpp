// Reading the document: file checks, YAML syntax errors, the top level and
// the daemon section; shared helpers for the rest of the loader.
#include "daemon/config/config.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "daemon/config/config_detail.hpp"
#include "daemon/config/sys_groups.hpp"
#include "daemon/config/units.hpp"

namespace vf::config {

using detail::Pos;
using detail::Reader;

namespace {

constexpr std::size_t kMaxConfigBytes = 1 << 20;

std::string format_error(const std::string& file, int line, int col, const std::string& problem,
                         const std::string& fix) {
  std::string where = line > 0 ? fmt::format("{}:{}:{}", file, line, col) : file;
  return fix.empty() ? fmt::format("{}: {}", where, problem)
                     : fmt::format("{}: {}; {}", where, problem, fix);
}

// "127.0.0.1:9469" or "[::1]:9469": an IP literal, then a port 0..65535.
std::optional<MetricsListen> parse_metrics_listen(std::string_view s) {
  const size_t colon = s.rfind(':');
  if (colon == std::string_view::npos || colon + 1 == s.size()) return std::nullopt;
  std::string host(s.substr(0, colon));
  const std::string_view num = s.substr(colon + 1);
  unsigned port = 0;
  const auto [p, ec] = std::from_chars(num.data(), num.data() + num.size(), port);
  if (ec != std::errc() || p != num.data() + num.size() || port > 65535) return std::nullopt;
  unsigned char buf[sizeof(in6_addr)];
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
    if (inet_pton(AF_INET6, host.c_str(), buf) != 1) return std::nullopt;
  } else if (inet_pton(AF_INET, host.c_str(), buf) != 1) {
    return std::nullopt;
  }
  return MetricsListen{host, static_cast<uint16_t>(port)};
}

Daemon read_daemon(const Reader& r, const YAML::Node& n) {
  Daemon d;
  if (!n.IsDefined() || n.IsNull()) return d;
  r.expect_map(n, "the daemon section", {"runtime_dir", "eal_args", "time_dilation", "catch_up", "admin_group", "metrics_listen", "netdevs"});

  if (const auto v = n["runtime_dir"]) {
    std::string dir = r.scalar(v, "daemon.runtime_dir", "runtime_dir: /run/vfabric");
    while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
    if (dir.empty() || dir.front() != '/')
      r.fail(v, "runtime_dir " + detail::quote(dir) + " is not an absolute path",
             "use an absolute directory such as /run/vfabric");
    if (dir == "/")
      r.fail(v, "runtime_dir must not be /", "use a directory of its own such as /run/vfabric");
    if (dir.size() > kMaxRuntimeDirLen)
      r.fail(v, fmt::format("runtime_dir is {} characters long; sockets under it would not fit a "
                            "UNIX socket address", dir.size()),
             fmt::format("use a path of at most {} characters", kMaxRuntimeDirLen));
    for (std::string_view part : {"/../", "/./"})
      if ((dir + "/").find(part) != std::string::npos)
        r.fail(v, "runtime_dir " + detail::quote(dir) + " contains '.' or '..' components",
               "write the directory without them");
    for (unsigned char c : dir)
      if (c < 0x20 || c == 0x7f)
        r.fail(v, "runtime_dir contains a control character", "use a plain path such as /run/vfabric");
    d.runtime_dir = dir;
  }

  if (const auto v = n["eal_args"]) {
    r.expect_seq(v, "daemon.eal_args", "eal_args: [--no-huge, -m, \"512\"]");
    d.eal_args.clear();
    if (v.size() > 64)
      r.fail(v, fmt::format("eal_args has {} entries", v.size()), "pass at most 64 EAL arguments");
    for (const auto& a : v) {
      std::string s = r.scalar(a, "an EAL argument", "--no-huge");
      if (s.empty() || s.size() > 256 || s.find('\0') != std::string::npos)
        r.fail(a, "EAL argument " + detail::quote(s) + " is empty or too long",
               "each argument must be 1..256 characters");
      d.eal_args.push_back(std::move(s));
    }
  }

  if (const auto v = n["time_dilation"]) {
    std::string s = r.scalar(v, "daemon.time_dilation", "time_dilation: 1");
    double x = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), x);
    if (ec != std::errc() || p != s.data() + s.size() || !std::isfinite(x))
      r.fail(v, "time_dilation " + detail::quote(s) + " is not a number",
             "write a number >= 1, e.g. time_dilation: 4");
    if (x < 1.0 || x > 10000.0)
      r.fail(v, fmt::format("time_dilation {} is out of range", s),
             "use 1 (real time) up to 10000; values below 1 would ask the host to be faster than it is");
    d.time_dilation = x;
  }

  if (const auto v = n["catch_up"]) {
    const std::string s = r.scalar(v, "daemon.catch_up", "catch_up: batched");
    if (s != "batched" && s != "exact")
      r.fail(v, "catch_up " + detail::quote(s) + " is not a catch-up mode",
             "write batched (the default: fastest) or exact (timers and ring work in emulated order "
             "after every late pass)");
    d.exact_catch_up = s == "exact";
  }

  if (const auto v = n["admin_group"]) {
    std::string g = r.scalar(v, "daemon.admin_group", "admin_group: vfabric-admin");
    // The portable user/group name set (useradd's default rule).
    bool ok = !g.empty() && g.size() <= 32 && (std::islower(static_cast<unsigned char>(g[0])) || g[0] == '_');
    for (unsigned char c : g) ok = ok && (std::islower(c) || std::isdigit(c) || c == '_' || c == '-');
    if (!ok)
      r.fail(v, "admin_group " + detail::quote(g) + " is not a group name",
             "use [a-z_][a-z0-9_-]*, at most 32 characters, e.g. admin_group: vfabric-admin");
    d.admin_gid = group_id(g);
    if (!d.admin_gid)
      r.fail(v, "admin_group " + detail::quote(g) + " does not exist on this host",
             fmt::format("create it (groupadd {}; usermod -aG {} <user>) or remove the key", g, g));
    d.admin_group = std::move(g);
  }

  if (const auto v = n["metrics_listen"]) {
    const std::string s = r.scalar(v, "daemon.metrics_listen", "metrics_listen: 127.0.0.1:9469");
    if (s == "off") d.metrics.reset();
    else if (auto m = parse_metrics_listen(s)) d.metrics = *m;
    else
      r.fail(v, "metrics_listen " + detail::quote(s) + " is not an address and port",
             "write IP:PORT with an IP address (not a host name), e.g. 127.0.0.1:9469 or [::1]:9469, or off");
  }
  if (const auto v = n["netdevs"]) {
    const std::string s = r.scalar(v, "daemon.netdevs", "netdevs: on");
    if (s == "on" || s == "true") d.netdevs = true;
    else if (s == "off" || s == "false") d.netdevs = false;
    else
      r.fail(v, "netdevs " + detail::quote(s) + " is neither on nor off",
             "write netdevs: on (each vHCA's address on a Linux interface, the default) or netdevs: off");
  }
  return d;
}

Config parse_checked(std::string_view text, const std::string& name, const Limits& limits);

// yaml-cpp can still throw from accessors on odd documents; such an error is
// reported like any other config problem instead of escaping as a crash.
Config parse(std::string_view text, const std::string& name, const Limits& limits) {
  try {
    return parse_checked(text, name, limits);
  } catch (const YAML::Exception& e) {
    throw ConfigError(name, e.mark.line >= 0 ? e.mark.line + 1 : 0, e.mark.column + 1,
                      "unexpected YAML structure: " + e.msg, "compare with configs/default.yaml");
  }
}

Config parse_checked(std::string_view text, const std::string& name, const Limits& limits) {
  Reader r(name);
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::ParserException& e) {
    // The classic: `subnet_prefix: fe80::` — a trailing ':' reads as a key.
    bool colon = e.msg == "illegal map value";
    r.fail(Pos{e.mark.line + 1, e.mark.column + 1}, "YAML syntax error: " + e.msg,
           colon ? "quote values that contain ': ' or end in ':', e.g. subnet_prefix: \"fe80::\""
                 : "fix the YAML at this position (indentation, quoting, brackets)");
  } catch (const YAML::Exception& e) {
    r.fail(Pos{e.mark.line + 1, e.mark.column + 1}, "YAML error: " + e.msg,
           "fix the YAML at this position");
  }
  if (!root.IsDefined() || root.IsNull())
    r.fail(Pos{1, 1}, "the config is empty", "start from configs/default.yaml");
  r.expect_map(root, "the top level", {"daemon", "fabrics"});

  Config c;
  c.source = name;
  c.daemon = read_daemon(r, root["daemon"]);

  YAML::Node fabrics = r.required(root, "fabrics", "the config", "fabrics: [{name: ib, link_layer: infiniband, ...}]");
  r.expect_seq(fabrics, "fabrics", "fabrics: [{name: ib, link_layer: infiniband, ...}]");
  if (fabrics.size() == 0)
    r.fail(fabrics, "no fabrics are defined", "add at least one fabric (see configs/default.yaml)");

  detail::Registry reg;
  reg.limits = limits;
  reg.netdevs_on = c.daemon.netdevs;
  std::vector<detail::FabricExtras> extras(fabrics.size());
  std::size_t i = 0;
  for (const auto& f : fabrics) {
    c.fabrics.push_back(detail::read_fabric(r, f, i, reg, extras[i]));
    ++i;
  }
  if (reg.hca_count == 0)
    r.fail(fabrics, "no HCAs are defined", "add HCAs to a fabric's hcas list");
  detail::derive_identifiers(r, c.fabrics, extras, reg);
  return c;
}

}  // namespace

ConfigError::ConfigError(std::string file, int line, int column, std::string problem, std::string fix)
    : std::runtime_error(format_error(file, line, column, problem, fix)),
      file_(std::move(file)),
      line_(line),
      column_(column),
      problem_(std::move(problem)),
      fix_(std::move(fix)) {}

Config load_config(const std::string& path, const Limits& limits) {
  // Open first, then check what was opened: no window for a swap between a
  // stat() and the read. O_NONBLOCK keeps a FIFO from hanging the daemon.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0)
    throw ConfigError(path, 0, 0, fmt::format("cannot open the config: {}", std::strerror(errno)),
                      "check the path (fabricd --config, fabricctl config check FILE)");
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw ConfigError(path, 0, 0, "the config is not a regular file", "point --config at a YAML file");
  }
  std::string text;
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int e = errno;
      ::close(fd);
      throw ConfigError(path, 0, 0, fmt::format("cannot read the config: {}", std::strerror(e)), "");
    }
    if (n == 0) break;
    text.append(buf, static_cast<std::size_t>(n));
    if (text.size() > kMaxConfigBytes) {
      ::close(fd);
      throw ConfigError(path, 0, 0, "the config is larger than 1 MiB",
                        "a fabric description is far smaller; check the path");
    }
  }
  ::close(fd);
  return parse(text, path, limits);
}

Config load_config_string(std::string_view yaml, const std::string& name, const Limits& limits) {
  if (yaml.size() > kMaxConfigBytes)
    throw ConfigError(name, 0, 0, "the config is larger than 1 MiB", "");
  return parse(yaml, name, limits);
}

std::string MetricsListen::text() const {
  return address.find(':') == std::string::npos ? fmt::format("{}:{}", address, port)
                                                 : fmt::format("[{}]:{}", address, port);
}

std::string Endpoint::text() const { return is_switch ? fmt::format("{}/{}", node, port) : node; }

const Link* Fabric::link_of(std::string_view node) const {
  for (const auto& l : links)
    if ((!l.a.is_switch && l.a.node == node) || (!l.b.is_switch && l.b.node == node)) return &l;
  return nullptr;
}

const Hca* Fabric::find_hca(std::string_view n) const {
  for (const auto& h : hcas)
    if (h.name == n) return &h;
  return nullptr;
}

const Switch* Fabric::find_switch(std::string_view n) const {
  for (const auto& s : switches)
    if (s.name == n) return &s;
  return nullptr;
}

std::vector<Config::HcaRef> Config::hcas() const {
  std::vector<HcaRef> out;
  for (const auto& f : fabrics)
    for (const auto& h : f.hcas) out.push_back({&f, &h, f.link_of(h.name)});
  // Indices follow config order already; sorting keeps that a stated contract.
  std::sort(out.begin(), out.end(), [](const HcaRef& a, const HcaRef& b) { return a.hca->index < b.hca->index; });
  return out;
}

std::optional<Config::HcaRef> Config::find_hca(std::string_view name) const {
  for (const auto& f : fabrics)
    if (const Hca* h = f.find_hca(name)) return HcaRef{&f, h, f.link_of(name)};
  return std::nullopt;
}

const char* to_string(LinkLayer ll) { return ll == LinkLayer::Infiniband ? "infiniband" : "ethernet"; }
const char* to_string(Routing r) { return r == Routing::UpDown ? "updn" : "minhop"; }

const char* to_string(IbSpeed s) {
  switch (s) {
    case IbSpeed::SDR: return "SDR";
    case IbSpeed::DDR: return "DDR";
    case IbSpeed::QDR: return "QDR";
    case IbSpeed::FDR10: return "FDR10";
    case IbSpeed::FDR: return "FDR";
    case IbSpeed::EDR: return "EDR";
    case IbSpeed::HDR: return "HDR";
    case IbSpeed::NDR: return "NDR";
  }
  return "?";
}

const char* to_string(IbWidth w) {
  switch (w) {
    case IbWidth::X1: return "1X";
    case IbWidth::X2: return "2X";
    case IbWidth::X4: return "4X";
    case IbWidth::X8: return "8X";
    case IbWidth::X12: return "12X";
  }
  return "?";
}

unsigned lanes(IbWidth w) { return static_cast<unsigned>(w); }

// ---- detail helpers -------------------------------------------------------

namespace detail {

Pos pos_of(const YAML::Node& n) {
  if (!n.IsDefined()) return Pos{};
  YAML::Mark m = n.Mark();
  if (m.line < 0) return Pos{};
  return Pos{m.line + 1, m.column + 1};
}

void Reader::fail(Pos at, std::string problem, std::string fix) const {
  throw ConfigError(file_, at.line, at.col, std::move(problem), std::move(fix));
}

std::string quote(std::string_view s) {
  std::string out = "'";
  std::size_t n = 0;
  for (unsigned char c : s) {
    if (++n > 40) {
      out += "...";
      break;
    }
    if (c < 0x20 || c == 0x7f) out += fmt::format("\\x{:02x}", c);
    else out.push_back(static_cast<char>(c));
  }
  return out + "'";
}

void Reader::expect_map(const YAML::Node& n, std::string_view what,
                        std::initializer_list<std::string_view> allowed) const {
  if (!n.IsMap())
    fail(n, fmt::format("{} must be a mapping of keys to values", what),
         fmt::format("write it as key: value lines; allowed keys: {}", fmt::join(allowed, ", ")));
  std::vector<std::string> names(allowed.begin(), allowed.end());
  std::map<std::string, Pos, std::less<>> seen;
  for (auto it = n.begin(); it != n.end(); ++it) {
    const YAML::Node k = it->first;  // a copy: it->first is a temporary proxy
    if (!k.IsScalar())
      fail(k, fmt::format("a key in {} is not a plain word", what),
           fmt::format("allowed keys: {}", fmt::join(allowed, ", ")));
    const std::string key = k.Scalar();
    if (auto prev = seen.find(key); prev != seen.end())
      fail(k, fmt::format("duplicate key {} in {} (first at line {})", quote(key), what, prev->second.line),
           "keep one of them");
    seen.emplace(key, pos_of(k));
    bool ok = false;
    for (auto a : allowed) ok = ok || a == key;
    if (!ok) {
      std::string hint = units::did_you_mean(key, names);
      fail(k, fmt::format("unknown key {} in {}", quote(key), what),
           hint.empty() ? fmt::format("allowed keys: {}", fmt::join(allowed, ", "))
                        : fmt::format("did you mean '{}'?", hint));
    }
  }
}

void Reader::expect_seq(const YAML::Node& n, std::string_view what, std::string_view example) const {
  if (n.IsDefined() && !n.IsNull() && !n.IsSequence())
    fail(n, fmt::format("{} must be a list", what), fmt::format("write it as a YAML list, e.g. {}", example));
}

YAML::Node Reader::required(const YAML::Node& map, std::string_view key, std::string_view what,
                            std::string_view example) const {
  YAML::Node v = map[std::string(key)];
  if (!v.IsDefined())
    fail(map, fmt::format("{} has no '{}'", what, key), fmt::format("add it, e.g. {}", example));
  return v;
}

std::string Reader::scalar(const YAML::Node& n, std::string_view what, std::string_view example) const {
  if (n.IsNull())
    fail(n, fmt::format("{} has no value", what), fmt::format("give it one, e.g. {}", example));
  if (!n.IsScalar())
    fail(n, fmt::format("{} must be a single value, not a list or mapping", what),
         fmt::format("e.g. {}", example));
  return n.Scalar();
}

Pos Reader::key_pos(const YAML::Node& map, std::string_view key) const {
  for (auto it = map.begin(); it != map.end(); ++it) {
    const YAML::Node k = it->first;
    if (k.IsScalar() && k.Scalar() == key) return pos_of(k);
  }
  return pos_of(map);
}

std::string read_name(const Reader& r, const YAML::Node& n, std::string_view what, Registry& reg) {
  std::string name = r.scalar(n, std::string(what) + " name", "name: vib0");
  bool ok = !name.empty() && name.size() <= kMaxNameLen;
  for (char c : name) ok = ok && ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_');
  if (!ok)
    r.fail(n, fmt::format("{} name {} is not valid", what, quote(name)),
           fmt::format("names become RDMA device names: use 1-{} characters from a-z, 0-9 and _",
                       kMaxNameLen));
  if (auto prev = reg.names.find(name); prev != reg.names.end())
    r.fail(n, fmt::format("name {} is already used (line {})", quote(name), prev->second.line),
           "fabric, switch and HCA names must be unique across the whole config");
  reg.names.emplace(name, pos_of(n));
  return name;
}

}  // namespace detail
}  // namespace vf::config
