// What fabricd may do with its capabilities (docs/security.md).
//
// fabricd never needs CAP_SYS_PTRACE: apps hand it their own /proc/self/mem
// (device/engine/dma.hpp). It is taken out of the effective set of every
// thread at start-up, before EAL or Asio create any (threads inherit it), so
// each process_vm_readv/writev fabricd makes is checked by the kernel against
// fabricd's own uid/gid and the target's dumpability, exactly as an ordinary
// debugger would be. It stays in the permitted set when fabricd was given it
// (a root shell, not the systemd unit, which bounds it away): the kernel's
// cap-subset rule compares a root app's permitted set with ours, and keeping
// it lets the fast direct path serve root apps that have it.
#pragma once

#include <sys/types.h>

#include <cstdint>

namespace vf {

// Removes `cap` (e.g. CAP_SYS_PTRACE) from the calling thread's effective
// and inheritable sets. Returns 0 or an errno.
int drop_effective_capability(int cap);
// Whether `cap` is in the calling thread's effective set.
bool capability_effective(int cap);
// The calling thread's effective set as a bit mask (bit n = capability n);
// 0 when it cannot be read.
uint64_t effective_capabilities();
// Process `pid`'s effective set (CapEff in /proc/PID/status); 0 when it
// cannot be read.
uint64_t process_capabilities(pid_t pid);

}  // namespace vf
