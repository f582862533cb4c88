// MachineGate: a timing waits for the units under way and holds new ones
// back; the waits are counted per thread (episodes leave them out of their
// time limit).
#include "agents/machine_gate.h"

#include <atomic>
#include <chrono>
#include <thread>

#include "gtest/gtest.h"

namespace hlogym {
namespace {

using std::chrono::milliseconds;

TEST(MachineGateTest, AUnitStartedDuringATimingWaitsAndCountsTheWait) {
  MachineGate& gate = MachineGate::Get();
  std::atomic<bool> timing{false};
  std::atomic<bool> unit_ran_during_timing{false};
  double paused = -1;
  std::thread timer([&] {
    gate.Time([&] {
      timing = true;
      std::this_thread::sleep_for(milliseconds(100));
      timing = false;
    });
  });
  while (!timing) std::this_thread::yield();
  double own = -1, wall = -1;
  std::thread worker([&] {
    const double before = MachineGate::PausedSeconds();
    const MachineGate::Stopwatch clock;
    MachineGate::Planning([&] { unit_ran_during_timing = timing.load(); });
    paused = MachineGate::PausedSeconds() - before;
    EXPECT_EQ(clock.paused(), paused);
    own = clock.own();
    wall = clock.wall();
  });
  worker.join();
  timer.join();
  EXPECT_FALSE(unit_ran_during_timing);
  EXPECT_GT(paused, 0.02);
  EXPECT_LT(paused, 5.0);
  // The stopwatch's own time leaves the wait out.
  EXPECT_LT(own, wall - 0.02);
  // Without a timing, a unit starts at once and counts nothing.
  const double before = MachineGate::PausedSeconds();
  EXPECT_EQ(MachineGate::Planning([] { return 7; }), 7);
  EXPECT_EQ(MachineGate::PausedSeconds(), before);
}

TEST(MachineGateTest, ATimingWaitsForTheUnitUnderWay) {
  MachineGate& gate = MachineGate::Get();
  std::atomic<bool> in_unit{false};
  std::atomic<bool> unit_done{false};
  bool unit_done_when_timed = false;
  std::thread worker([&] {
    MachineGate::Planning([&] {
      in_unit = true;
      std::this_thread::sleep_for(milliseconds(50));
      unit_done = true;
    });
  });
  while (!in_unit) std::this_thread::yield();
  gate.Time([&] { unit_done_when_timed = unit_done.load(); });
  worker.join();
  EXPECT_TRUE(unit_done_when_timed);
}

}  // namespace
}  // namespace hlogym
