#pragma once
// Lets the reference headers that the CUDA kernels share compile as plain C++ on the CPU.
#if defined(__CUDACC__)
#define KVCAP_HD __host__ __device__ inline
#else
#define KVCAP_HD inline
#endif
