// The comparison's wall-clock half: a real fabricd of its own (own runtime
// dir, no metrics listener, so it runs beside a lab's service) with an IB and
// a RoCEv2 fabric of the same shape, and unmodified perftest run through
// `fabricctl exec`. What these figures include -- the host's software,
// scheduling on a shared CPU -- is stated with them.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "compare/scenarios.hpp"
#include "core/subprocess.hpp"

namespace vf::compare {

class LiveFabric {
 public:
  // Starts fabricd on a generated config under `work_dir`/`name`; waits
  // until fabricctl can reach it. Throws std::runtime_error with fabricd's
  // output when it does not come up.
  LiveFabric(const Options& o, const std::string& name, unsigned time_dilation);
  ~LiveFabric();
  LiveFabric(const LiveFabric&) = delete;
  LiveFabric& operator=(const LiveFabric&) = delete;

  // `fabricctl exec -- argv...` (the vHCAs and the provider in its environment).
  std::vector<std::string> exec(const std::vector<std::string>& argv) const;
  unsigned dilation() const { return dilation_; }

  static std::string config_yaml(const std::string& runtime_dir, unsigned time_dilation);

 private:
  const Options& o_;
  std::string dir_, runtime_;
  unsigned dilation_;
  std::unique_ptr<proc::Process> fabricd_;
};

// A perftest client/server pair on one fabricd; the client's output.
proc::RunResult perftest(const LiveFabric& f, const std::string& tool, const std::string& server_dev,
                         const std::string& client_dev, const std::vector<std::string>& args, int port);

// The result line of perftest's latency or bandwidth report: the columns
// after "#bytes", as numbers; empty if the output has none.
std::vector<double> perftest_result(const std::string& out, uint32_t bytes);

// Scenario 1's wall-clock rows: ib_write_bw on both fabrics under time dilation.
void add_live_bandwidth(const Options& o, Section& sec);
// Scenario 2's wall-clock rows: ib_send_lat on both fabrics, idle and beside ib_write_bw.
void add_live_latency(const Options& o, Section& sec, Findings& f);

}  // namespace vf::compare
