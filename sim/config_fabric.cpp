#include "sim/config_fabric.hpp"

#include <cstring>
#include <stdexcept>

#include "sim/mbuf_pool.hpp"
#include "sim/virtual_run.hpp"

namespace vf::sim {
namespace {

bool ipv4_mapped(const Gid& g) {
  static constexpr uint8_t kPrefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  return std::memcmp(g.data(), kPrefix, sizeof kPrefix) == 0;
}

}  // namespace

ConfigFabric::ConfigFabric(const config::Config& cfg)
    : topology_(std::make_unique<Topology>(cfg, sched, mbuf_pool())) {
  const size_t n = topology_->vhcas().size();
  wake_ctx_ = std::make_unique<WakeCtx[]>(n);
  is_active_.assign(n, 0);
  for (size_t i = 0; i < n; ++i) {
    apps_.push_back(std::make_unique<App>(topology_->engine(i), engine::ClientId(i + 1)));
    wake_ctx_[i] = {this, i};
    topology_->engine(i).set_wake([](void* ctx) {
      auto* w = static_cast<WakeCtx*>(ctx);
      w->f->wake(w->i);
    }, &wake_ctx_[i]);
  }
}

ConfigFabric::~ConfigFabric() {
  for (size_t i = 0; i < apps_.size(); ++i) topology_->engine(i).set_wake(nullptr, nullptr);
  apps_.clear();  // their objects live in the engines
  topology_.reset();
}

size_t ConfigFabric::index(const std::string& name) const {
  const auto& v = topology_->vhcas();
  for (size_t i = 0; i < v.size(); ++i)
    if (v[i].name == name) return i;
  throw std::out_of_range("no vHCA named '" + name + "' in the config");
}

ibv_ah_attr ConfigFabric::av_to(size_t to, uint8_t sl) const {
  const PortInfo& port = topology_->port_info(to);
  ibv_ah_attr a{};
  a.port_num = 1;
  a.sl = sl;
  if (vhca(to).link_layer == config::LinkLayer::Infiniband) {
    a.dlid = port.lid;
    return a;
  }
  uint8_t index = 0;
  for (size_t g = 0; g < port.gids.size(); ++g)
    if (ipv4_mapped(port.gids[g])) {
      index = uint8_t(g);
      break;
    }
  a.is_global = 1;
  a.grh.sgid_index = index;
  a.grh.hop_limit = 64;
  if (index < port.gids.size()) std::memcpy(a.grh.dgid.raw, port.gids[index].data(), 16);
  return a;
}

int ConfigFabric::resolve_av(size_t h, const ibv_ah_attr& av) {
  auto err = std::make_shared<int>(-1);
  topology_->engine(h).resolve_route(av, [err](int e) { *err = e; });
  run_until([&] { return *err >= 0; }, sched.now() + 2'000'000'000ULL);
  return *err < 0 ? ETIMEDOUT : *err;
}

void ConfigFabric::connect(size_t a, AppQp& qa, size_t b, AppQp& qb, const ConnParams& p, uint8_t sl) {
  connect_pair(app(a), qa, av_to(b, sl), app(b), qb, av_to(a, sl), p,
               [&](int side, const ibv_ah_attr& av) { return resolve_av(side ? b : a, av); });
}

void ConfigFabric::settle() {
  for (int i = 0; i < 1'000'000; ++i)
    if (!topology_->poll()) return;
  throw std::runtime_error("engines never went idle: one keeps finding work without time passing");
}

void ConfigFabric::wake(size_t i) {
  if (is_active_[i]) return;
  is_active_[i] = 1;
  active_.push_back(i);
}

bool ConfigFabric::poll_active(std::vector<size_t>& polled) {
  polling_.swap(active_);
  active_.clear();
  bool any = false;
  for (size_t i : polling_) is_active_[i] = 0;
  for (size_t i : polling_) {
    polled.push_back(i);
    if (topology_->engine(i).poll(64)) {
      any = true;
      wake(i);  // a budget's worth: more may be left
    }
  }
  polling_.clear();
  return any;
}

bool ConfigFabric::run_until(const std::function<bool()>& done, Nanos limit) {
  return run_virtual(sched, [this] { settle(); }, done, limit);
}

}  // namespace vf::sim
