// Randomness that is not secret: the store's random picks (RANDOMKEY, SPOP,
// SRANDMEMBER, ZRANDMEMBER), from one small generator per thread, and the
// key hash's per-process seed (shard.h).  Lock tokens and session ids come
// from the operating system's CSPRNG instead (ext/, session/).
//
// The generator is small on purpose.  Every thread_local of the PHP
// extension lives in the module's TLS block, and the hot ones
// (section::held, db_scope, the hit-counter slot) are read with the
// initial-exec model, which makes glibc place that whole block in
// the static TLS surplus when PHP dlopens the module: a few hundred bytes
// fit, three std::mt19937_64 (2.5 KB each) did not.

#ifndef EPHPM_CORE_RANDOM_H_
#define EPHPM_CORE_RANDOM_H_

#include <cstdint>
#include <limits>

namespace ephpm {

// SplitMix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number
// generators", OOPSLA 2014): 8 bytes of state, every 64-bit output once per
// period of 2^64.  A UniformRandomBitGenerator, so the standard
// distributions accept it.
class SplitMix64 {
 public:
  using result_type = uint64_t;

  explicit constexpr SplitMix64(uint64_t seed) : state_(seed) {}

  static constexpr result_type min() { return 0; }
  static constexpr result_type max() { return std::numeric_limits<result_type>::max(); }

  result_type operator()() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
  }

 private:
  uint64_t state_;
};

// The calling thread's generator, seeded from std::random_device on the
// thread's first call.
SplitMix64& ThreadRandom();

// A uniformly distributed integer in [0, n); n must be positive.
uint64_t RandomBelow(uint64_t n);

// 64 bits from std::random_device, for seeds (the key hash's: shard.h).
uint64_t ProcessSeed();

}  // namespace ephpm

#endif  // EPHPM_CORE_RANDOM_H_
