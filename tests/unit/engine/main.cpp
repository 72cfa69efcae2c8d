#include <gtest/gtest.h>

#include "tests/support/eal_env.hpp"

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new vf::test::EalEnvironment);
  return RUN_ALL_TESTS();
}
