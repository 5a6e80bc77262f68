#pragma once
// Every CUDA / cuBLAS call goes through these: a failure throws with the call, file and line, so
// the harness reports it and exits non-zero instead of measuring garbage.
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace kvcap::kern {

[[noreturn]] inline void cuda_fail(const char* call, const char* file, int line, const std::string& why) {
  throw std::runtime_error(std::string(file) + ":" + std::to_string(line) + ": " + call + " failed: " + why);
}

}  // namespace kvcap::kern

#define CUDA_CHECK(call)                                                              \
  do {                                                                                \
    cudaError_t err_ = (call);                                                        \
    if (err_ != cudaSuccess) ::kvcap::kern::cuda_fail(#call, __FILE__, __LINE__, cudaGetErrorString(err_)); \
  } while (0)

/// After a kernel launch: launch-configuration errors now, execution errors at the next sync.
#define CUDA_CHECK_LAUNCH() CUDA_CHECK(cudaGetLastError())

#define CUBLAS_CHECK(call)                                                             \
  do {                                                                                 \
    cublasStatus_t st_ = (call);                                                       \
    if (st_ != CUBLAS_STATUS_SUCCESS)                                                  \
      ::kvcap::kern::cuda_fail(#call, __FILE__, __LINE__, "cuBLAS status " + std::to_string(static_cast<int>(st_))); \
  } while (0)
