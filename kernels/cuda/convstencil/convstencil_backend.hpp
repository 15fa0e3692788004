// The `convstencil` backend: stencils as fp64 tensor-core matrix multiplications after
// ConvStencil, with exact temporal fusion (StencilProblem::fusion_depth). fp64 only: for
// fp32 problems unsupported_reason() says so and setup() throws.
#pragma once

#include <memory>

#include "../../backend.hpp"

namespace heatsim::kernels {

std::unique_ptr<Backend> make_convstencil_backend(Precision precision);

}  // namespace heatsim::kernels
