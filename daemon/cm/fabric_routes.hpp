// The routes the connection manager resolves, from the fabric itself: on
// InfiniBand it asks the SA for a PathRecord through the vHCA's own MAD path
// (a SubnAdmGet from QP1 to the SM's LID, as the kernel's rdma_cm does); on
// RoCE the path is the two ports' GIDs and the smaller MTU, with rdma_cm's
// RoCE packet lifetime and the IP hop limit.
#pragma once

#include <utility>  // before Asio (Boost 1.74 + g++ 12 in C++20)

#include <boost/asio/io_context.hpp>
#include <memory>
#include <vector>

#include "daemon/cm/path.hpp"
#include "daemon/cm/ports.hpp"

namespace vf {
class UmadBackend;
}

namespace vf::cm {

class FabricRoutes final : public RouteResolver {
 public:
  // `mads[i]`: vHCA i's way to the fabric's management agents.
  FabricRoutes(boost::asio::io_context& io, const std::vector<Port>& ports, std::vector<UmadBackend*> mads);
  void resolve(size_t src, size_t dst, std::function<void(std::optional<Path>)> done) override;

 private:
  boost::asio::io_context& io_;
  const std::vector<Port>& ports_;
  std::vector<UmadBackend*> mads_;
  uint32_t next_tid_ = 1;
  std::shared_ptr<int> alive_ = std::make_shared<int>(0);
};

// A RoCE path between two ports.
Path roce_path(const Port& src, const Port& dst);
// The SubnAdmGet(PathRecord) from `src` for the path to `dst`, and the path
// its response names (nullopt: an error status or a malformed answer).
std::array<uint8_t, 256> path_query(const Port& src, const Port& dst, uint64_t tid);
std::optional<Path> path_from_response(const std::array<uint8_t, 256>& resp);

}  // namespace vf::cm
