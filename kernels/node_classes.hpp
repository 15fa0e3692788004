// Nodes grouped by their coefficients: where materials come from regions or a map, a
// varying-coefficient problem (StencilProblem::coefficients) has only a few distinct tuples
// (k, rho c_p, the source densities) among millions of nodes. A device sweep can then read a
// byte per node and a small table instead of a field per coefficient: 17 bytes per node and
// step in fp64 instead of 32 for k and dt/C, and 8 more per source field.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "backend.hpp"
#include "performance_model.hpp"

namespace heatsim::kernels {

// The most classes a problem may have for the compact form (a byte per node).
constexpr int kMaxNodeClasses = 256;
// The most a problem may have where the faces' conductances are not given: a sweep looks every
// face's conductance up in a table of the pairs' (kPairClasses^2 entries).
constexpr int kPairClasses = 16;

struct NodeClasses {
  // Per node, in the fields' order [z][y][x]: its class, numbered in order of first appearance.
  std::vector<std::uint8_t> id;
  // Per class: k, rho c_p and the density of each source (kMaxSourceFields, 0 beyond the
  // problem's sources), the values of the class's nodes bit for bit.
  std::vector<double> conductivity;
  std::vector<double> capacity;
  std::vector<std::array<double, kMaxSourceFields>> source;
  std::vector<double> transfer;  // H (CoefficientFields::transfer); 0 without surfaces
  int count() const { return static_cast<int>(conductivity.size()); }
};

// The classes of `c`'s nodes (equal when k, rho c_p, every source density and, `with_transfer`,
// the surfaces' transfer are equal bit for bit), or nothing where the compact form does not
// describe the problem: more than `max_classes` classes, surfaces inside the body (unless
// `with_transfer`), radiating surfaces or temperature-dependent materials. The faces' conductances,
// when given, are not part of a node's class (a device compacts them apart, per axis). `points` is
// the grid's node count.
std::optional<NodeClasses> find_node_classes(const CoefficientFields& c, std::int64_t points,
                                             int max_classes = kMaxNodeClasses,
                                             bool with_transfer = false);

// The distinct values of an array, bit for bit (a face array's conductances on a device's
// layout): each element's class, numbered in order of first appearance, and the values.
template <typename T>
struct ValueClasses {
  std::vector<std::uint8_t> id;
  std::vector<T> value;
};
// Nothing where there are more than `max_classes` (at most 256) distinct values.
template <typename T>
std::optional<ValueClasses<T>> find_value_classes(const std::vector<T>& values,
                                                  int max_classes = kMaxNodeClasses);

// What a one-step CUDA sweep of `p`'s coefficients reads and writes per node (u in and out and
// the layout's arrays), and the layout, on a backend of `caps` (Capabilities::compact_materials,
// compact_faces): the choice the device's upload makes (cuda/coefficient_fields.cu), the faces'
// distinct values counted in double. Nothing without coefficients, and for temperature-dependent
// materials (whose sweeps evaluate their laws).
struct CoefficientTraffic {
  CoefficientLayout layout = CoefficientLayout::fields;
  double bytes = 0.0;
};
std::optional<CoefficientTraffic> coefficient_traffic(const StencilProblem& p,
                                                      const Capabilities& caps);

}  // namespace heatsim::kernels
