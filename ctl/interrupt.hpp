// Commands that run until interrupted (capture, events, counters -w) end
// their loop on SIGINT/SIGTERM instead of dying, so they can tidy up (remove
// a capture's taps, print counts); a reader that went away is a failed
// write, not a SIGPIPE.
#pragma once

namespace vf::ctl {

void catch_interrupts();
bool interrupted();
void interrupt();  // ends the loop as a signal would

}  // namespace vf::ctl
