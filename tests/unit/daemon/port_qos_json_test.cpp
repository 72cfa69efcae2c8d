// A port's VL record as fabricctl shows it, and the defaults it starts with.
#include <gtest/gtest.h>

#include "core/port_qos.hpp"
#include "daemon/telemetry/port_qos_json.hpp"

namespace vf {
namespace {

TEST(PortQos, DefaultsGiveEverySlAnOperationalVlAndEveryVlAnEqualShare) {
  for (uint8_t vls : {1, 2, 4, 8}) {
    const PortQos q = default_port_qos(vls);
    EXPECT_EQ(q.data_vls, vls);
    for (unsigned sl = 0; sl < kNumSls; ++sl) EXPECT_EQ(q.sl2vl[sl], sl % vls) << "SL " << sl;
    EXPECT_EQ(q.vlarb_high.size, 0);
    EXPECT_EQ(q.vlarb_high_limit, 0);
    ASSERT_EQ(q.vlarb_low.size, vls);
    for (uint8_t vl = 0; vl < vls; ++vl) EXPECT_EQ(q.vlarb_low.entries[vl], (VlArbEntry{vl, 64}));
  }
}

TEST(PortQos, SetSl2VlAcceptsOperationalVlsAndVl15Only) {
  PortQos q = default_port_qos(4);
  EXPECT_TRUE(q.set_sl2vl(15, 3));
  EXPECT_TRUE(q.set_sl2vl(2, kVl15));
  EXPECT_FALSE(q.set_sl2vl(1, 4));
  EXPECT_FALSE(q.set_sl2vl(16, 0));
  EXPECT_EQ(q.sl2vl[15], 3);
  EXPECT_EQ(q.sl2vl[2], kVl15);
  EXPECT_EQ(q.sl2vl[1], 1);
}

TEST(PortQosJson, ShowsSl2VlAndBothArbitrationLists) {
  PortQos q = default_port_qos(2);
  q.set_sl2vl(0, 1);
  q.vlarb_high.entries[0] = {1, 10};
  q.vlarb_high.size = 1;
  q.vlarb_high_limit = 255;
  const nlohmann::json want = nlohmann::json::parse(R"({
    "operational_vls": 2,
    "sl2vl": [1, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1],
    "vl_arbitration": {
      "high": [{"vl": 1, "weight": 10}],
      "low": [{"vl": 0, "weight": 64}, {"vl": 1, "weight": 64}],
      "high_limit": 255
    }
  })");
  EXPECT_EQ(port_qos_json(q), want) << port_qos_json(q).dump(2);
}

}  // namespace
}  // namespace vf
