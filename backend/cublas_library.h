// cuBLAS, opened at run time (dlopen) like the driver, with one handle on the
// GPU context's stream. Built only with CUDA.
#pragma once

#ifdef HLOGYM_HAVE_CUDA

#include <cublas_api.h>

#include "absl/status/statusor.h"
#include "backend/gpu_context.h"

namespace hlogym {

class CublasLibrary {
 public:
  // Loaded once per process: UnavailableError naming the library when
  // libcublas cannot be opened.
  static absl::StatusOr<CublasLibrary*> Get(const GpuContext& gpu);

  // Row-major C[b] (m x n) = op(A[b]) (m x k) * op(B[b]) (k x n) for b < batch,
  // each operand dense per batch, transposed meaning stored as (k x m) for A
  // and (n x k) for B. fp32 accumulation for f32/f16/bf16 (never TF32), f64
  // for f64.
  absl::Status Gemm(cudaDataType a_type, cudaDataType b_type, cudaDataType c_type, bool f64,
                    int64_t batch, int64_t m, int64_t n, int64_t k, bool a_transposed,
                    bool b_transposed, CUdeviceptr a, CUdeviceptr b, CUdeviceptr c) const;

 private:
  CublasLibrary() = default;
  decltype(&::cublasCreate_v2) create_ = nullptr;
  decltype(&::cublasSetStream_v2) set_stream_ = nullptr;
  decltype(&::cublasSetMathMode) set_math_mode_ = nullptr;
  // cublas_api.h overloads the name in C++, so spell out the C signature.
  using GemmFn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int,
                                    int, const void*, const void*, cudaDataType, int, long long,
                                    const void*, cudaDataType, int, long long, const void*, void*,
                                    cudaDataType, int, long long, int, cublasComputeType_t,
                                    cublasGemmAlgo_t);
  GemmFn gemm_ = nullptr;
  cublasHandle_t handle_ = nullptr;
};

}  // namespace hlogym

#endif  // HLOGYM_HAVE_CUDA
