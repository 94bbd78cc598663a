#include "random.h"

#include <random>

namespace ephpm {

namespace {
// Trivially constructible, so the thread-local needs no guard or wrapper.
struct ThreadState {
  SplitMix64 rng{0};
  bool seeded = false;
};
thread_local ThreadState tl_random;
}  // namespace

uint64_t ProcessSeed() {
  std::random_device rd;
  return (static_cast<uint64_t>(rd()) << 32) ^ rd();
}

SplitMix64& ThreadRandom() {
  ThreadState& t = tl_random;
  if (!t.seeded) {
    t.rng = SplitMix64(ProcessSeed());
    t.seeded = true;
  }
  return t.rng;
}

uint64_t RandomBelow(uint64_t n) {
  return std::uniform_int_distribution<uint64_t>(0, n - 1)(ThreadRandom());
}

}  // namespace ephpm
