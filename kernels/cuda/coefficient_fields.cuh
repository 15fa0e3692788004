// The coefficient fields of a varying-coefficient problem on the device (k, dt/C, the source
// densities, C for the heat content), and the ghost fill of u that goes with them. The rules
// are backend.hpp's (StencilProblem::coefficients): ghost layers one node wide, k's ghosts
// filled once at setup from the mirror node (periodic axes: the node one period away), u's
// ghosts each step from the face's condition with K_bm, the conductance between the boundary
// node b and its mirror m.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "coefficient_sweep.cuh"
#include "device_memory.cuh"
#include "stencil_common.cuh"

namespace heatsim::kernels::cuda {

// One step's face conditions: kind, and g(t) (Dirichlet), ambient(t) (convective) or the
// Neumann value, the transfer coefficient h and whether a Neumann value is a heat flux.
struct CoefficientFaces {
  int kind[kFaces] = {};
  double value[kFaces] = {};
  double transfer[kFaces] = {};
  bool heat_flux[kFaces] = {};
  // Radiating faces: 2 h eps sigma (0: none) and ambient(t)^4, in double.
  double radiation[kFaces] = {};
  double ambient4[kFaces] = {};
  double spacing[3] = {1.0, 1.0, 1.0};
};

// The faces of `problem` at time t.
CoefficientFaces coefficient_faces_at(const StencilProblem& problem, double t);
// The same as the rules a sweep applies itself (CoefficientArgs::rules): every face of an
// active axis that is not periodic.
FaceRules face_rules_at(const StencilProblem& problem, double t);

// Fills the one-node ghost layer of u on every face of the active axes (the faces only: the
// radius-1 star never reads an edge or corner ghost), one launch.
// K_bm comes from `face_k` (K(i, i + e_a) per axis, as CoefficientArgs::faces) when given,
// else from the harmonic mean of `conductivity`.
template <typename T>
void launch_coefficient_ghosts(T* u, const T* conductivity, const T* const* face_k,
                               const DeviceGrid& grid, const CoefficientFaces& faces,
                               cudaStream_t stream);

// The device copies of StencilProblem::coefficients, in the padded layout `grid` (ghost 1).
template <typename T>
struct DeviceCoefficients {
  DeviceArray conductivity;              // T, padded, ghosts filled
  DeviceArray dt_over_capacity;          // T, padded, dt / (rho c_p) on the interior
  DeviceArray source[kMaxSourceFields];  // T, padded, q on the interior
  DeviceArray capacity;                  // double, compact [z][y][x]: the heat content's weights
  DeviceArray faces[3];                  // T, padded, K(i, i + e_a), ghost faces filled
  DeviceArray transfer;                  // T, padded: H of surfaces inside the body
  bool has_transfer = false;
  int sources = 0;
  bool has_faces = false;
  // The compact form (node_classes.hpp) where the problem has one, the sweep reads it and
  // HEATSIM_CUDA_CLASSES is not 0: per node its class (uint8, padded, ghosts as k's), and the
  // ClassTable<T>, with the pairs' conductances where the faces are not given (then at most
  // kPairClasses classes; more keep the fields). classes is 0 without it. The fields above
  // are uploaded either way.
  DeviceArray node_class;
  DeviceArray class_table;
  // The compact form's table on the host too (CoefficientArgs::host_class_table).
  std::unique_ptr<ClassTable<T>> host_class_table;
  // With the surfaces' transfer in the compact form (Capabilities::compact_transfer): each
  // class's H, on the host (CoefficientArgs::host_class_transfer); empty otherwise.
  std::vector<T> class_transfer;
  int classes = 0;
  // With the faces given: per axis, each face's class (uint8, padded as faces[a]) and the
  // number of distinct conductances in ClassTable::face[a].
  DeviceArray face_class[3];
  int face_classes[3] = {0, 0, 0};
  // In 2D and 3D with the faces as classes: the node's class and its faces' classes in one
  // word per element (CoefficientArgs::packed_class).
  DeviceArray packed_class;
  // In 3D with the compact form: a word per tile of the grid (CoefficientArgs::uniform_tile),
  // formed on the device from the bytes above at upload.
  DeviceArray uniform_tile;
  DeviceGrid tile_grid;

  // The compact form's pointers for a sweep (CoefficientArgs::node_class, class_table).
  void class_pointers(const std::uint8_t*& ids, const ClassTable<T>*& table,
                      const ClassTable<T>*& host_table, const T*& host_transfer, int& count) const {
    host_table = classes > 0 ? host_class_table.get() : nullptr;
    host_transfer = classes > 0 && !class_transfer.empty() ? class_transfer.data() : nullptr;
    ids = classes > 0 ? node_class.template as<std::uint8_t>() : nullptr;
    table = classes > 0 ? class_table.template as<ClassTable<T>>() : nullptr;
    count = classes;
  }
  // The faces' classes for a sweep (CoefficientArgs::face_class, face_classes): null unless the
  // faces are given and compacted.
  void face_class_pointers(const std::uint8_t* (&ids)[3], int (&counts)[3],
                           const std::uint32_t*& packed) const {
    for (int a = 0; a < 3; ++a) {
      const bool on = classes > 0 && has_faces && face_classes[a] > 0;
      ids[a] = on ? face_class[a].template as<std::uint8_t>() : nullptr;
      counts[a] = on ? face_classes[a] : 0;
    }
    packed = ids[0] && face_classes[1] > 0 ? packed_class.template as<std::uint32_t>() : nullptr;
  }
  // The uniform tiles for a sweep (CoefficientArgs::uniform_tile, tile_grid): null without.
  void tile_pointers(const std::uint32_t*& tiles, DeviceGrid& grid) const {
    tiles = classes > 0 && uniform_tile.bytes() > 0 ? uniform_tile.template as<std::uint32_t>()
                                                    : nullptr;
    grid = tile_grid;
  }

  // The faces' pointers (CoefficientArgs::faces): null unless the problem gives the faces.
  void face_pointers(const T* (&out)[3]) const {
    for (int a = 0; a < 3; ++a) out[a] = has_faces ? faces[a].template as<T>() : nullptr;
  }

  // Checks the fields' sizes against the problem, then uploads them (synchronous), and the
  // compact form where the sweep reads it (`caps`: Capabilities::compact_materials, and
  // compact_faces with the faces given).
  void upload(const StencilProblem& problem, const DeviceGrid& grid, const Capabilities& caps);

  // The uniform tiles over `grid` (the padded grid, or the box of it the sweeps take), in 3D
  // with the compact form; none otherwise. upload() forms them over its grid.
  void form_tiles(const DeviceGrid& grid);

  // Bytes a sweep reads and writes per node in the compact form (u in and out, a node's class,
  // the faces' classes or arrays); 0 without it.
  double compact_bytes_per_point(int dims) const {
    if (classes == 0) return 0.0;
    const double value = sizeof(T);
    const double faces = has_faces ? dims * (face_classes[0] > 0 ? 1.0 : value) : 0.0;
    return 2.0 * value + 1.0 + faces;
  }

 private:
  // The compact form's ids and table, or none (upload's last part).
  void upload_classes(const StencilProblem& problem, const DeviceGrid& grid,
                      const std::array<std::vector<T>, 3>& padded_faces, const Capabilities& caps);
};

}  // namespace heatsim::kernels::cuda
