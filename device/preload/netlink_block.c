/* libibverbs 44 discovers devices over RDMA netlink when the kernel offers
 * it, and then never scans SYSFS_PATH, where fabricd publishes the vHCAs.
 * Making NETLINK_RDMA sockets fail sends it down its sysfs fallback, the path
 * it takes on kernels without RDMA netlink. Every other socket is untouched. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <linux/netlink.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

typedef int (*socket_fn)(int, int, int);

__attribute__((visibility("default"))) int socket(int domain, int type, int protocol) {
  if (domain == AF_NETLINK && protocol == NETLINK_RDMA) {
    errno = EPROTONOSUPPORT;
    return -1;
  }
  static socket_fn next;
  socket_fn f = __atomic_load_n(&next, __ATOMIC_ACQUIRE);
  if (!f) {
    f = (socket_fn)dlsym(RTLD_NEXT, "socket");
    __atomic_store_n(&next, f, __ATOMIC_RELEASE);
  }
  if (f) return f(domain, type, protocol);
  return (int)syscall(SYS_socket, domain, type, protocol);
}
