#include "daemon/lcore/lcore.hpp"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

namespace vf {
namespace {

uint64_t mono_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

int checked(int fd, const char* what) {
  if (fd < 0) throw std::runtime_error(std::string(what) + ": " + std::strerror(errno));
  return fd;
}

void drain(int fd) {
  uint64_t v;
  while (read(fd, &v, sizeof(v)) == sizeof(v)) {
  }
}

// Timers closer than this are waited for by polling, not by a syscall sleep.
constexpr uint64_t kMinSleepNs = 60'000;
// Engine passes after each deadline, at most.
constexpr int kPassesPerDeadline = 8;

}  // namespace

Lcore::Lcore(double time_dilation, Nanos catch_up_after) : clock_(time_dilation), catch_up_after_(catch_up_after) {
  doorbell_fd_ = checked(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK), "eventfd");
  wake_fd_ = checked(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK), "eventfd");
  status_fd_ = checked(memfd_create("vfabric-engine-status", MFD_CLOEXEC | MFD_ALLOW_SEALING),
                       "memfd_create");
  if (ftruncate(status_fd_, 4096)) throw std::runtime_error("ftruncate status page");
  fcntl(status_fd_, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL);
  void* p = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, status_fd_, 0);
  if (p == MAP_FAILED) throw std::runtime_error("mmap status page");
  status_ = static_cast<vhca_engine_status*>(p);
  status_->abi_version = VHCA_ABI_VERSION;
  // Apps get a read-only descriptor of the same page: they can watch the
  // engine's sleep flag but never write it.
  std::string self = "/proc/self/fd/" + std::to_string(status_fd_);
  status_ro_fd_ = checked(open(self.c_str(), O_RDONLY | O_CLOEXEC), "reopen status page");
  start_ns_ = mono_ns();
}

Lcore::~Lcore() {
  Task* t;
  while (tasks_.pop(t)) delete t;
  if (status_) munmap(status_, 4096);
  for (int fd : {doorbell_fd_, wake_fd_, status_fd_, status_ro_fd_})
    if (fd >= 0) close(fd);
}

Nanos Lcore::clock_now() const { return clock_.peek(mono_ns() - start_ns_); }

bool Lcore::post(Task t) {
  auto* task = new Task(std::move(t));
  if (!tasks_.push(task)) {
    delete task;
    return false;
  }
  uint64_t one = 1;
  if (write(wake_fd_, &one, sizeof(one)) < 0) {
    // EAGAIN: counter saturated, the lcore is awake anyway.
  }
  return true;
}

void Lcore::stop() {
  stop_.store(true);
  uint64_t one = 1;
  if (write(wake_fd_, &one, sizeof(one)) < 0) {
  }
}

bool Lcore::run_tasks() {
  bool any = false;
  Task* t;
  while (tasks_.pop(t)) {
    (*t)();
    delete t;
    tasks_run_.add();
    any = true;
  }
  return any;
}

bool Lcore::poll_all() {
  bool any = false;
  for (auto& p : pollers_) any |= p();
  return any;
}

// After each deadline the engines do what became possible then (owed ACKs,
// WQEs a window now admits) until idle, or for a bounded number of passes:
// apps that keep posting must not hold the clock.
void Lcore::work_due() {
  for (int pass = 0; pass < kPassesPerDeadline && poll_all(); ++pass) {
  }
}

void Lcore::sleep_until_work() {
  __atomic_store_n(&status_->sleeping, 1u, __ATOMIC_RELAXED);
  std::atomic_thread_fence(std::memory_order_seq_cst);
  // Re-check after announcing sleep: a producer that published before seeing
  // the flag will not ring, so its work must be found here.
  if (poll_all() || !tasks_.empty() || stop_.load()) {
    __atomic_store_n(&status_->sleeping, 0u, __ATOMIC_RELAXED);
    return;
  }
  const Nanos next = sched_.next_deadline();
  timespec ts{}, *tsp = nullptr;
  if (next != kNever) {
    const Nanos now = clock_now();
    const uint64_t wait_emul = next > now ? next - now : 0;
    const uint64_t wait_real = uint64_t(double(wait_emul) * clock_.dilation());
    if (wait_real < kMinSleepNs) {  // a frame lands soon: wait for it on the CPU
      __atomic_store_n(&status_->sleeping, 0u, __ATOMIC_RELAXED);
      __builtin_ia32_pause();
      return;
    }
    ts.tv_sec = time_t(wait_real / 1000000000ull);
    ts.tv_nsec = long(wait_real % 1000000000ull);
    tsp = &ts;
  }
  pollfd fds[2] = {{doorbell_fd_, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
  sleeps_.add();
  ppoll(fds, 2, tsp, nullptr);
  __atomic_store_n(&status_->sleeping, 0u, __ATOMIC_RELAXED);
  drain(doorbell_fd_);
  drain(wake_fd_);
  wakeups_.add();
}

// The lcore is the HCA: when an app rings the doorbell it must run now, not
// after the busy-polling apps' time slices (on 2 cores, 64 KiB ping-pongs
// stalled for milliseconds). It sleeps whenever idle, so a real-time policy
// costs the apps nothing then; the kernel's RT throttling bounds a runaway.
void Lcore::make_realtime() {
  sched_param sp{};
  sp.sched_priority = 10;
  if (int err = pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp))
    spdlog::warn("lcore: cannot use SCHED_FIFO ({}); latency will depend on the apps' load",
                 std::strerror(err));
}

// No spinning once idle: apps busy-poll their CQs, and on a 2-core machine a
// spinning lcore takes the CPU they need (measured: ibv_rc_pingpong went from
// 10 ms per iteration with a 50 µs spin + sched_yield to 0.14 ms without).
// A thread that sleeps often also wins the scheduler's wake-up preemption.
void Lcore::run() {
  make_realtime();
  // Emulated time runs from here: building the fabric took real time in
  // which nothing was due to happen yet, so it is no stall.
  clock_.begin(mono_ns() - start_ns_, sched_.now());
  while (!stop_.load(std::memory_order_relaxed)) {
    loops_.add();
    // Timers and ring work in emulated-time order, however late this pass is.
    const Nanos now = clock_.tick(mono_ns() - start_ns_, sched_.next_deadline());
    bool did = run_pass_timers(sched_, now, [this] { work_due(); }, catch_up_after_);
    did |= run_tasks();
    did |= poll_all();
    if (!did) sleep_until_work();
  }
  run_tasks();
}

}  // namespace vf
