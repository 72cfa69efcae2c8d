#include "ctl/interrupt.hpp"

#include <csignal>

namespace vf::ctl {
namespace {
volatile std::sig_atomic_t g_stop = 0;
void on_signal(int) { g_stop = 1; }
}  // namespace

void catch_interrupts() {
  struct sigaction sa{};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  std::signal(SIGPIPE, SIG_IGN);
}

bool interrupted() { return g_stop != 0; }
void interrupt() { g_stop = 1; }

}  // namespace vf::ctl
