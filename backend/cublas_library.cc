#include "backend/cublas_library.h"

#ifdef HLOGYM_HAVE_CUDA

#include <dlfcn.h>

#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"

namespace hlogym {

absl::StatusOr<CublasLibrary*> CublasLibrary::Get(const GpuContext& gpu) {
  static const absl::StatusOr<CublasLibrary*> library =
      [&gpu]() -> absl::StatusOr<CublasLibrary*> {
    void* handle = nullptr;
    for (const char* name : {"libcublas.so.13", "libcublas.so.12", "libcublas.so"}) {
      handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
      if (handle != nullptr) break;
    }
    if (handle == nullptr) {
      return absl::UnavailableError("cannot open cuBLAS (libcublas.so.13): add the CUDA "
                                    "toolkit's lib64 to LD_LIBRARY_PATH");
    }
    auto* cublas = new CublasLibrary();
    cublas->create_ = reinterpret_cast<decltype(create_)>(dlsym(handle, "cublasCreate_v2"));
    cublas->set_stream_ = reinterpret_cast<decltype(set_stream_)>(dlsym(handle, "cublasSetStream_v2"));
    cublas->set_math_mode_ = reinterpret_cast<decltype(set_math_mode_)>(dlsym(handle, "cublasSetMathMode"));
    cublas->gemm_ = reinterpret_cast<decltype(gemm_)>(dlsym(handle, "cublasGemmStridedBatchedEx"));
    if (!cublas->create_ || !cublas->set_stream_ || !cublas->set_math_mode_ || !cublas->gemm_) {
      return absl::UnavailableError("libcublas lacks cublasCreate_v2 or cublasGemmStridedBatchedEx");
    }
    RETURN_IF_ERROR(gpu.MakeCurrent());
    if (cublas->create_(&cublas->handle_) != CUBLAS_STATUS_SUCCESS ||
        cublas->set_stream_(cublas->handle_, reinterpret_cast<cudaStream_t>(gpu.stream())) !=
            CUBLAS_STATUS_SUCCESS ||
        // Pedantic: no TF32 and no reduced-precision shortcuts, so dots match
        // the reference within float tolerances.
        cublas->set_math_mode_(cublas->handle_, CUBLAS_PEDANTIC_MATH) != CUBLAS_STATUS_SUCCESS) {
      return absl::InternalError("cuBLAS initialization failed");
    }
    return cublas;
  }();
  return library;
}

absl::Status CublasLibrary::Gemm(cudaDataType a_type, cudaDataType b_type, cudaDataType c_type,
                                 bool f64, int64_t batch, int64_t m, int64_t n, int64_t k,
                                 bool a_transposed, bool b_transposed, CUdeviceptr a,
                                 CUdeviceptr b, CUdeviceptr c) const {
  // Column-major cuBLAS computes C^T (n x m) = op(B)^T op(A)^T.
  const float alpha32 = 1, beta32 = 0;
  const double alpha64 = 1, beta64 = 0;
  const void* alpha = f64 ? static_cast<const void*>(&alpha64) : &alpha32;
  const void* beta = f64 ? static_cast<const void*>(&beta64) : &beta32;
  const cublasStatus_t status = gemm_(
      handle_, b_transposed ? CUBLAS_OP_T : CUBLAS_OP_N, a_transposed ? CUBLAS_OP_T : CUBLAS_OP_N,
      static_cast<int>(n), static_cast<int>(m), static_cast<int>(k), alpha,
      reinterpret_cast<const void*>(b), b_type, static_cast<int>(b_transposed ? k : n), k * n,
      reinterpret_cast<const void*>(a), a_type, static_cast<int>(a_transposed ? m : k), m * k,
      beta, reinterpret_cast<void*>(c), c_type, static_cast<int>(n), m * n,
      static_cast<int>(batch), f64 ? CUBLAS_COMPUTE_64F : CUBLAS_COMPUTE_32F,
      CUBLAS_GEMM_DEFAULT);
  if (status != CUBLAS_STATUS_SUCCESS) {
    return absl::InternalError(absl::StrCat("cublasGemmStridedBatchedEx failed: status ",
                                            static_cast<int>(status)));
  }
  return absl::OkStatus();
}

}  // namespace hlogym

#endif  // HLOGYM_HAVE_CUDA
