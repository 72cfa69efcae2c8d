// Stands in for a privileged program in the memory-isolation test: installed
// setuid root by the test, exec'd by an attacker in the pid that opened a
// vHCA context. It maps a secret at the address the attacker registered,
// says "ready" on fd READY, waits for a byte on fd DONE, and exits 0 only if
// its secret is still intact.
//   vf_it_secret_holder ADDR_HEX LEN READY_FD DONE_FD
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

int main(int argc, char** argv) {
  if (argc != 5) return 2;
  void* want = reinterpret_cast<void*>(std::strtoull(argv[1], nullptr, 16));
  const size_t len = std::strtoull(argv[2], nullptr, 0);
  const int ready = std::atoi(argv[3]), done = std::atoi(argv[4]);
  char* p = static_cast<char*>(mmap(want, len, PROT_READ | PROT_WRITE,
                                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0));
  if (p != want) {
    std::fprintf(stderr, "holder: cannot map %p\n", want);
    return 3;
  }
  static const char kSecret[] = "root:$y$j9T$VFABRIC-SECRET-HASH:19000:0:99999:7:::";
  std::memcpy(p, kSecret, sizeof(kSecret));
  std::printf("holder euid=%d\n", int(geteuid()));
  std::fflush(stdout);
  if (write(ready, "r", 1) != 1) return 4;
  char b;
  (void)!read(done, &b, 1);  // a byte, or EOF when the attacker ended: check either way
  if (std::memcmp(p, kSecret, sizeof(kSecret)) != 0) {
    std::printf("holder: secret OVERWRITTEN\n");
    return 1;
  }
  std::printf("holder: secret intact\n");
  return 0;
}
