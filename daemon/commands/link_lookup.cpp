#include "daemon/commands/link_lookup.hpp"

#include <charconv>
#include <optional>
#include <vector>

namespace vf {
namespace {

struct EndSpec {
  std::string_view node;
  std::optional<uint32_t> port;  // nullopt: any port of the node
};

std::optional<EndSpec> parse_end(std::string_view text) {
  const size_t slash = text.find('/');
  if (slash == std::string_view::npos) return text.empty() ? std::nullopt : std::optional(EndSpec{text, {}});
  uint32_t port = 0;
  const std::string_view num = text.substr(slash + 1);
  const auto [p, ec] = std::from_chars(num.data(), num.data() + num.size(), port);
  if (slash == 0 || ec != std::errc() || p != num.data() + num.size() || port == 0) return std::nullopt;
  return EndSpec{text.substr(0, slash), port};
}

bool matches(const config::Endpoint& e, const EndSpec& s) {
  return e.node == s.node && (!s.port || (e.is_switch && e.port == *s.port));
}

bool node_exists(const config::Config& cfg, std::string_view node) {
  for (const auto& f : cfg.fabrics)
    if (f.find_hca(node) || f.find_switch(node)) return true;
  return false;
}

}  // namespace

std::variant<LinkRef, LinkLookupError> find_link(const config::Config& cfg, std::string_view a, std::string_view b) {
  const std::optional<EndSpec> ea = parse_end(a);
  const std::optional<EndSpec> eb = b.empty() ? std::optional(EndSpec{}) : parse_end(b);
  if (!ea || !eb)
    return LinkLookupError{"'" + std::string(ea ? b : a) + "' is not a link end",
                           "name a switch port (leaf0/3), a vHCA (vib0), or two nodes (leaf0 spine1)"};
  for (const EndSpec* e : {&*ea, &*eb})
    if (!e->node.empty() && !node_exists(cfg, e->node))
      return LinkLookupError{"no switch or vHCA named '" + std::string(e->node) + "'",
                             "fabricctl status lists the fabrics; the config names their switches"};
  std::vector<LinkRef> found;
  for (size_t fi = 0; fi < cfg.fabrics.size(); ++fi) {
    const auto& links = cfg.fabrics[fi].links;
    for (size_t li = 0; li < links.size(); ++li) {
      const config::Link& l = links[li];
      const bool hit = eb->node.empty() ? matches(l.a, *ea) || matches(l.b, *ea)
                                        : (matches(l.a, *ea) && matches(l.b, *eb)) ||
                                              (matches(l.a, *eb) && matches(l.b, *ea));
      if (hit) found.push_back({fi, li});
    }
  }
  const std::string what = eb->node.empty() ? std::string(a) : std::string(a) + " and " + std::string(b);
  if (found.empty())
    return LinkLookupError{eb->node.empty() ? "no link at " + what : "no link between " + what,
                           "the config's links: section says which ports are cabled"};
  if (found.size() > 1)
    return LinkLookupError{std::to_string(found.size()) + " links at " + what,
                           "name the switch port, e.g. " + std::string(ea->node) + "/N"};
  return found.front();
}

}  // namespace vf
