// Device-side random fill for the timing sweep: gigabytes of valid encodings in milliseconds
// (filling from the host would dominate the run). Values never matter for correctness here, only
// that they are not zeros or NaNs, which can take different hardware paths.
#include "kernels/cuda/cuda_check.cuh"
#include "kernels/cuda/kernels.cuh"

namespace kvcap::kern {

namespace {

__device__ __forceinline__ uint64_t mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

__global__ void fill_random_kernel(uint8_t* data, int64_t words, KvStorage s, uint64_t seed) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < words;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    uint64_t r = mix(seed + 0x9e3779b97f4a7c15ull * static_cast<uint64_t>(i + 1));
    uint8_t bytes[8];
    if (s == KvStorage::kBF16 || s == KvStorage::kFP16) {
      for (int j = 0; j < 4; ++j) {
        const float u = static_cast<float>((r >> (16 * j)) & 0xffff) / 32768.0f - 1.0f;  // [-1, 1)
        const uint16_t h = s == KvStorage::kBF16 ? float_to_bf16(u) : float_to_fp16(u);
        bytes[2 * j] = static_cast<uint8_t>(h & 0xff);
        bytes[2 * j + 1] = static_cast<uint8_t>(h >> 8);
      }
    } else {
      for (int j = 0; j < 8; ++j) {
        uint8_t b = static_cast<uint8_t>(r >> (8 * j));
        if (s == KvStorage::kFP8E4M3 && (b & 0x7f) == 0x7f) b ^= 1;  // never NaN
        bytes[j] = b;
      }
    }
    memcpy(data + 8 * i, bytes, 8);
  }
}

__global__ void fill_scales_kernel(float* data, int64_t count, float lo, float hi, uint64_t seed) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const uint64_t r = mix(seed + 0x9e3779b97f4a7c15ull * static_cast<uint64_t>(i + 1));
    data[i] = lo + (hi - lo) * static_cast<float>(r >> 40) * 0x1.0p-24f;
  }
}

}  // namespace

void launch_fill_random(uint8_t* data, int64_t bytes, KvStorage s, uint64_t seed, cudaStream_t stream) {
  const int64_t words = bytes / 8;  // callers allocate multiples of 8 bytes (pages are)
  if (words == 0) return;
  fill_random_kernel<<<1024, 256, 0, stream>>>(data, words, s, seed);
  CUDA_CHECK_LAUNCH();
}

void launch_fill_scales(float* data, int64_t count, float lo, float hi, uint64_t seed, cudaStream_t stream) {
  if (count == 0) return;
  fill_scales_kernel<<<1024, 256, 0, stream>>>(data, count, lo, hi, seed);
  CUDA_CHECK_LAUNCH();
}

}  // namespace kvcap::kern
