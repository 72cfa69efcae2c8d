// Which link `fabricctl link set` means, resolved against configs/fat-tree.yaml.
#include "daemon/commands/link_lookup.hpp"

#include <gtest/gtest.h>

namespace vf {
namespace {

const config::Config& fat_tree() {
  static const config::Config c = config::load_config(std::string(VF_SOURCE_DIR) + "/configs/fat-tree.yaml");
  return c;
}

std::string ends(const std::variant<LinkRef, LinkLookupError>& r) {
  if (const auto* e = std::get_if<LinkLookupError>(&r)) return "error: " + e->message;
  const auto ref = std::get<LinkRef>(r);
  const auto& l = fat_tree().fabrics[ref.fabric].links[ref.link];
  return l.a.text() + " " + l.b.text();
}

TEST(LinkLookup, OneEndNamesTheLink) {
  EXPECT_EQ(ends(find_link(fat_tree(), "leaf0/5")), "leaf0/5 spine0/1");
  EXPECT_EQ(ends(find_link(fat_tree(), "spine0/1")), "leaf0/5 spine0/1");
  EXPECT_EQ(ends(find_link(fat_tree(), "vib6")), "vib6 leaf1/3");
}

TEST(LinkLookup, TwoNodesNameTheLinkBetweenThemEitherWayRound) {
  EXPECT_EQ(ends(find_link(fat_tree(), "leaf2", "spine1")), "leaf2/6 spine1/3");
  EXPECT_EQ(ends(find_link(fat_tree(), "spine1", "leaf2")), "leaf2/6 spine1/3");
  EXPECT_EQ(ends(find_link(fat_tree(), "leaf2/6", "spine1/3")), "leaf2/6 spine1/3");
}

TEST(LinkLookup, WhatDoesNotNameExactlyOneLinkIsRefusedWithAHint) {
  const auto err = [](std::string_view a, std::string_view b = {}) {
    const auto r = find_link(fat_tree(), a, b);
    const auto* e = std::get_if<LinkLookupError>(&r);
    return e ? e->message + " | " + e->hint : std::string("found ") + ends(r);
  };
  EXPECT_EQ(err("leaf0"), "6 links at leaf0 | name the switch port, e.g. leaf0/N");
  EXPECT_EQ(err("spine0", "spine1"), "no link between spine0 and spine1 | the config's links: section says which ports are cabled");
  EXPECT_EQ(err("leaf0/7"), "no link at leaf0/7 | the config's links: section says which ports are cabled");
  EXPECT_EQ(err("nosuch"), "no switch or vHCA named 'nosuch' | fabricctl status lists the fabrics; the config names their switches");
  for (const char* bad : {"leaf0/", "leaf0/x", "/3", "leaf0/0", ""})
    EXPECT_NE(err(bad).find("is not a link end"), std::string::npos) << bad << ": " << err(bad);
}

}  // namespace
}  // namespace vf
