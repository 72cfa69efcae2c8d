// `fabricctl env` and `fabricctl exec`: the environment under which an
// unmodified RDMA program sees the vHCAs. The daemon decides the variables
// (SYSFS_PATH, RDMAV_DRIVERS, VFABRIC_RUNTIME_DIR, maybe LD_PRELOAD);
// fabricctl only applies them.
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>

#include "ctl/commands_common.hpp"
#include "ctl/subcommands.hpp"

namespace vf::ctl {
namespace {

bool valid_name(const std::string& n) {
  if (n.empty() || n.size() > 128 || (n[0] >= '0' && n[0] <= '9')) return false;
  for (char c : n)
    if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
  return true;
}

// The daemon's variables, checked: names a shell accepts, values without NUL.
std::map<std::string, std::string> fetch_env(const Globals& g, json* raw = nullptr) {
  Client c(g.socket(), g.timeout);
  json env = c.call("env");
  if (raw) *raw = env;
  if (!env.is_object()) throw std::runtime_error("fabricd's env reply is not an object");
  std::map<std::string, std::string> out;
  for (auto it = env.begin(); it != env.end(); ++it) {
    if (!valid_name(it.key()) || !it->is_string())
      throw std::runtime_error("fabricd's env reply has an invalid variable: " + cell(it.key()));
    const auto& v = it->get_ref<const std::string&>();
    if (v.find('\0') != std::string::npos)
      throw std::runtime_error("fabricd's env reply has a value with a NUL byte: " + it.key());
    out[it.key()] = v;
  }
  return out;
}

// POSIX shell single-quoting: 'it'\''s'.
std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') out += "'\\''";
    else out.push_back(c);
  }
  return out + "'";
}

// LD_PRELOAD is a list: ours goes first, whatever the user preloads stays.
constexpr const char* kPreload = "LD_PRELOAD";

}  // namespace

int cmd_env(const Globals& g) {
  return guarded([&] {
    json raw;
    auto env = fetch_env(g, &raw);
    if (g.json) {
      print_json(raw);
      return 0;
    }
    for (const auto& [k, v] : env) {
      if (k == kPreload)
        std::cout << "export " << k << '=' << shell_quote(v) << "\"${LD_PRELOAD:+:$LD_PRELOAD}\"\n";
      else
        std::cout << "export " << k << '=' << shell_quote(v) << '\n';
    }
    return 0;
  });
}

int cmd_exec(const Globals& g, const std::vector<std::string>& argv) {
  if (argv.empty()) {
    std::cerr << "fabricctl: exec needs a command, e.g. fabricctl exec -- ibv_devinfo\n";
    return 2;
  }
  int rc = guarded([&] {
    for (const auto& [k, v] : fetch_env(g)) {
      std::string value = v;
      if (k == kPreload) {
        const char* old = std::getenv(kPreload);
        if (old && *old) value += std::string(":") + old;
      }
      if (::setenv(k.c_str(), value.c_str(), 1) != 0)
        throw std::runtime_error("setenv " + k + ": " + std::strerror(errno));
    }
    return 0;
  });
  if (rc != 0) return rc;
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::cout.flush();
  ::execvp(args[0], args.data());
  int e = errno;
  std::cerr << "fabricctl: cannot run " << argv[0] << ": " << std::strerror(e) << '\n';
  return e == ENOENT ? 127 : 126;  // what a shell returns
}

void add_env_commands(CLI::App& app, Dispatch& d) {
  auto* env = app.add_subcommand("env", "Print the environment that makes the vHCAs visible, as shell exports.");
  env->footer(
      "Use it as:  eval \"$(fabricctl env)\"\n"
      "The daemon supplies the variables: SYSFS_PATH (its fake sysfs), RDMAV_DRIVERS (the vHCA\n"
      "provider), VFABRIC_RUNTIME_DIR and LD_PRELOAD (the preload shim, prepended to yours).");
  set_handler(env, d, cmd_env);
}

void add_exec_commands(CLI::App& app, Dispatch& d) {
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
  set_handler(exec, d, [&d](const Globals& g) { return cmd_exec(g, d.exec_command); });
}

}  // namespace vf::ctl
