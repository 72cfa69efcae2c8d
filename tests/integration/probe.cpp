// A small program the integration tests run in a child process, where the
// environment (LD_PRELOAD, SYSFS_PATH) is the one an app gets from
// `fabricctl exec`:
//   vf_it_probe netlink       which sockets the preload shim lets through
//   vf_it_probe async <dev>   prints "ready", then the first async event
#include <dlfcn.h>
#include <infiniband/verbs.h>
#include <linux/netlink.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

namespace {

void try_socket(const char* what, int domain, int type, int protocol) {
  int fd = socket(domain, type, protocol);
  if (fd >= 0) {
    std::printf("%s ok\n", what);
    close(fd);
  } else {
    std::printf("%s %s\n", what, errno == EPROTONOSUPPORT ? "EPROTONOSUPPORT" : std::strerror(errno));
  }
}

int netlink() {
  // Which object the program's socket() binds to: the shim when preloaded.
  Dl_info info{};
  void* sym = dlsym(RTLD_DEFAULT, "socket");
  std::printf("socket from %s\n", sym && dladdr(sym, &info) && info.dli_fname ? info.dli_fname : "?");
  try_socket("rdma", AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_RDMA);
  try_socket("route", AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
  try_socket("udp", AF_INET, SOCK_DGRAM, 0);
  try_socket("unix", AF_UNIX, SOCK_STREAM, 0);
  return 0;
}

int async(const std::string& dev) {
  int n = 0;
  ibv_device** list = ibv_get_device_list(&n);
  ibv_context* ctx = nullptr;
  for (int i = 0; list && i < n; ++i)
    if (dev == ibv_get_device_name(list[i])) ctx = ibv_open_device(list[i]);
  if (list) ibv_free_device_list(list);
  if (!ctx) {
    std::printf("cannot open %s\n", dev.c_str());
    return 1;
  }
  std::printf("ready\n");
  std::fflush(stdout);
  ibv_async_event ev{};
  if (ibv_get_async_event(ctx, &ev)) {
    std::printf("no event: %s\n", std::strerror(errno));
    return 1;
  }
  std::printf("event %d port %d (%s)\n", int(ev.event_type), ev.element.port_num,
              ibv_event_type_str(ev.event_type));
  std::fflush(stdout);
  ibv_ack_async_event(&ev);
  // The daemon is gone: the context must still close without hanging.
  ibv_close_device(ctx);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "netlink") return netlink();
  if (mode == "async" && argc > 2) return async(argv[2]);
  std::fprintf(stderr, "usage: vf_it_probe netlink | async <dev>\n");
  return 2;
}
