// The GPU's deliberately broken kernel, for testing fault isolation: one
// thread stores through a null pointer, which leaves the CUDA context in a
// sticky error state (CUDA_ERROR_ILLEGAL_ADDRESS) that no later call in the
// process recovers from. A custom-call to hlogym.inject_fault with
// backend_config="illegal_address" runs it (backend/host_ops.h). Plain text,
// so that it is checked with ptxas where there is no GPU.
#pragma once

namespace hlogym {

inline constexpr char kIllegalAddressKernelName[] = "hlogym_fault";
inline constexpr char kIllegalAddressKernelPtx[] = R"(.version 7.8
.target sm_90
.address_size 64

.visible .entry hlogym_fault()
{
	.reg .b32 	%r<2>;
	.reg .b64 	%rd<2>;
	mov.u64 	%rd1, 0;
	mov.u32 	%r1, 1;
	st.global.u32 	[%rd1], %r1;
	ret;
}
)";

}  // namespace hlogym
