// Temperature-dependent materials on the device (kernels/temperature_laws.hpp): each step of a
// CUDA-core backend's coefficient driver re-evaluates the faces' conductances from the field
// before its sweep, and advances the enthalpy of the nodes whose capacity varies after it, with
// the same law evaluations as the CPU reference (LawTables).
#pragma once

#include <cstdint>
#include <string>

#include "device_memory.cuh"
#include "stencil_common.cuh"

namespace heatsim::kernels::cuda {

// The laws the kernels read, from global memory (uniform across a warp, so cached): a copy
// passed by value and indexed by a node's law would sit in each thread's local memory.
constexpr int kMaxDeviceLaws = 16;
struct DeviceLawSet {
  int count = 0;
  LawTables law[kMaxDeviceLaws];  // pointers into DeviceTemperature's tables
};

// Why the device cannot take the problem's laws, empty when it can.
std::string temperature_unsupported_reason(const StencilProblem& problem);

// Radiating surfaces inside the body (CoefficientFields::radiation), at most this many
// ambients on the device.
constexpr int kMaxRadiationGroups = 4;

template <typename T>
struct DeviceTemperature {
  bool present = false;
  int radiation_groups = 0;
  DeviceArray radiation[kMaxRadiationGroups];  // T, padded: R per node
  bool varying_k = false;  // a law's conductivity varies: the faces are re-evaluated each step
  bool varying_c = false;  // a law's capacity varies: the enthalpy step after the sweep
  DeviceArray law;         // int32, padded; -1 outside the interior and for constant nodes
  DeviceArray share[3];    // double, padded like the faces
  DeviceArray contact[3];  // double, padded: the contacts' parts; unallocated (null) without
  DeviceArray reference[3];  // double, padded: the faces' reference conductances
  DeviceArray tables;        // the laws' pairs, flat
  DeviceArray pieces;        // the laws' enthalpy pieces
  DeviceArray laws;          // set.law[0 .. count) on the device
  DeviceLawSet set;
  // The faces between nodes of two laws (InterfaceFace, padded indices), which series_face
  // evaluates in a launch of their own; empty where no two laws meet.
  DeviceArray interfaces;
  std::int64_t interface_count = 0;

  // From the problem's CoefficientFields::temperature (nothing when it has none).
  void upload(const StencilProblem& problem, const DeviceGrid& grid);
};

// A face between nodes of two laws: its axis and its two nodes' padded indices (i the lower).
struct InterfaceFace {
  std::int64_t i = 0, j = 0;
  std::int32_t axis = 0;
};

// faces[a][i] = reference times law_mean_conductivity(u_i, u_j) between two nodes of one law,
// else series_face(reference, share, contact, law_i, law_j, u_i, u_j), for every face touching a
// node with a law, from u at the step's start, then the faces toward the ghosts (mirror;
// periodic: wrap).
template <typename T>
void launch_update_faces(const T* u, T* const* faces, const DeviceTemperature<T>& t,
                         const DeviceGrid& grid, const bool* periodic, cudaStream_t stream);

// next_i = T(h(u_i) + (next_i - u_i)) on the nodes whose law's capacity varies: the sweep's
// increment dt/C_ref (flow + sources) taken as a change of enthalpy.
template <typename T>
void launch_enthalpy_step(const T* u, T* next, const DeviceTemperature<T>& t,
                          const DeviceGrid& grid, cudaStream_t stream);

// next_i -= dt/C_i sum_g R_g,i (u_i^4 - ambient4[g]) (u the step's start, as the CPU adds it
// to the node's gain): the radiating surfaces inside the body.
template <typename T>
void launch_surface_radiation(const T* u, T* next, const T* dt_over_capacity,
                              const DeviceTemperature<T>& t, const double* ambient4,
                              const DeviceGrid& grid, cudaStream_t stream);

// The heat content sum w_i C_ref,i h(u_i) of a padded field (host arithmetic on a download).
template <typename T>
double enthalpy_content(const T* u, const StencilProblem& problem, const DeviceGrid& grid);

}  // namespace heatsim::kernels::cuda
