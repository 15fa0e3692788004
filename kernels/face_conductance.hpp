// The conductance of the face between two nodes of conductivities k_i and k_j, once for every
// place that needs it: the CPU and CUDA backends' steps, their ghost rules, the multigrid's
// heat-flow operator, the materials' stability limit and the bench's coefficient case.
#pragma once

#if defined(__CUDACC__)
#define HEATSIM_HOST_DEVICE __host__ __device__
#else
#define HEATSIM_HOST_DEVICE
#endif

namespace heatsim::kernels {

// The harmonic mean 2 k_i k_j / (k_i + k_j), evaluated as ((2 k_i) k_j) / (k_i + k_j): the
// series conductance of the two half cells between the nodes (what makes a layered wall exact
// where an interface lies halfway). k_i itself when k_j equals it, which the formula reproduces
// to within an ulp (2 k^2 rounds once, the quotient once): faces inside one material, nearly
// all of a material map's, skip the division (an fp64 division is a long sequence on a GPU's
// FP64 pipe; five per node in 3D made the device sweep compute-bound). Exactly symmetric in i
// and j either way (the doubling is exact and a product commutes), so the flow i -> j is
// exactly minus the flow j -> i, and a sweep may compute a face once for its two nodes.
template <typename T>
HEATSIM_HOST_DEVICE inline T face_conductance(T ki, T kj) {
  return ki == kj ? ki : T(2) * ki * kj / (ki + kj);
}

}  // namespace heatsim::kernels
