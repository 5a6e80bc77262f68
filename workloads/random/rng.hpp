#pragma once
// The workload's only random number generator: xoshiro256** seeded through splitmix64, written
// out here so every platform and standard library produces the same stream (std::mt19937_64 is
// portable too, but std::*_distribution is not, so samplers below are our own transforms).
#include <cstdint>
#include <string>

namespace kvcap {

/// splitmix64 step: a good 64-bit mixer, used for seeding and deriving sub-seeds.
inline uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

class Rng {
 public:
  explicit Rng(uint64_t seed) {
    uint64_t st = seed;
    for (auto& w : s_) w = splitmix64(st);
  }
  uint64_t next_u64() {
    const uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }
  /// Uniform in the open interval (0, 1): 53 random bits, centred, never 0 (safe for log).
  double uniform01() { return (static_cast<double>(next_u64() >> 11) + 0.5) * 0x1.0p-53; }
  /// Uniform integer in [0, n) (n >= 1), by 128-bit multiply (Lemire; bias < 2^-64 * n).
  uint64_t below(uint64_t n) {
    return static_cast<uint64_t>((static_cast<unsigned __int128>(next_u64()) * n) >> 64);
  }

 private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
};

/// Independent seed for a named stream under a base seed (sources, samplers, loops).
inline uint64_t derive_seed(uint64_t base, uint64_t stream) {
  uint64_t st = base ^ (stream * 0xD1B54A32D192ED03ull);
  splitmix64(st);
  return splitmix64(st);
}

}  // namespace kvcap
