// gtest main for binaries that move mbufs: initialises the EAL once and fails
// the run when any test ends with more or fewer mbufs in use than it began.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/support/eal_env.hpp"

namespace {

unsigned mbufs_in_use() { return rte_mempool_in_use_count(vf::test::test_mbuf_pool()); }

// Every test gives back every mbuf it took -- none leaked, none freed twice
// (the engine holds them in bursts and its placement queue). Checked once the
// test's fixture, and with it every Hca and the test wire, is gone.
class MbufBalance : public ::testing::EmptyTestEventListener {
 public:
  void OnTestStart(const ::testing::TestInfo&) override { before_ = mbufs_in_use(); }
  void OnTestEnd(const ::testing::TestInfo& t) override {
    const unsigned now = mbufs_in_use();
    if (now != before_)
      bad_.push_back(std::string(t.test_suite_name()) + "." + t.name() + ": " +
                     std::to_string(before_) + " mbufs in use before, " + std::to_string(now) +
                     " after");
  }
  std::vector<std::string> bad_;

 private:
  unsigned before_ = 0;
};

class MbufCheck : public ::testing::Environment {
 public:
  explicit MbufCheck(MbufBalance* b) : b_(b) {}
  void TearDown() override {
    for (const auto& s : b_->bad_) ADD_FAILURE() << s;
  }

 private:
  MbufBalance* b_;
};

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new vf::test::EalEnvironment);
  auto* balance = new MbufBalance;
  ::testing::UnitTest::GetInstance()->listeners().Append(balance);  // gtest owns it
  ::testing::AddGlobalTestEnvironment(new MbufCheck(balance));
  return RUN_ALL_TESTS();
}
