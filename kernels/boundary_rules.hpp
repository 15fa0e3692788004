// The ghost rule of each face kind, once: what the CPU backend, the CUDA kernels and the
// fusion planning read, in two forms.
//
// Constant weights (layout.hpp), on a node-centred grid (boundary nodes are grid points): the
// ghost `layer` nodes beyond a face takes the value of one node of the line, its source
// (ghost_source: the mirror node `layer` inside, or the periodic image), and
//   periodic:  u(source), the node one period away;
//   dirichlet: 2 g - u(source), the odd reflection about g, which keeps sine modes exact
//              eigenvectors of S for every symmetric stencil (2 g formed in double, rounded once);
//   neumann:   u(source) + 2 layer h q (q = du/dn outward), the even reflection plus the flux,
//              which makes cosine modes exact and conserves the trapezoidal total heat (the
//              offset formed in double, rounded once).
//
// Coefficient fields (StencilProblem::coefficients): one ghost layer, from the boundary node b,
// its mirror m one node inside, the face conductance K_bm between them and the conductance K_g
// of the face toward the ghost (ghost_face_conductance: K_bm, or k_b where K_bm is 0: a void
// between b and m; there u_b stands for u_m, so that the ghost face passes the condition's flux
// alone, as the implicit operator's face terms do; 0 in a void):
//   dirichlet:  2 g(t) - u_m
//   neumann:    u_m + 2 h value                 (heat_flux: u_m + (2 h value) / K_g)
//   convective: u_m - (2 h transfer) * (u_b - ambient(t)) / K_g
//   radiating:  u_m - ((2 h transfer) * (u_b - ambient(t))
//                      + (2 h eps sigma) * (u_b^4 - ambient(t)^4)) / K_g
// Constants in parentheses are formed in double and rounded to T once; the rest is in T
// (u_b^4 as u_b^2 squared). A du/dn face passes K_bm du/dn, so nothing where K_bm is 0.
//
// What a kind needs: convective and heat-flux faces read conductances, so only the coefficient
// form holds them (needs_coefficients); which constant-weight rules stay exact under S^k
// fusion is constant_rule_exact_under_fusion. The physics beyond the ghost rule (the implicit
// operator, a void's surface, the heat-flow report, whether a steady state is anchored) reads a
// face through its law (face_transfer, face_flux, face_inflow, anchors), not by its kind.
//
// A new face kind: its name in backend.hpp and backend.cpp; its ghost rules, what it needs and
// its law here; its keys in io/case_boundary.cpp and their checks in io/case_check_fields.cpp;
// its line in `validate`'s description (app/info_validate.cpp). No backend, solver or kernel
// file names a kind that passes heat by a law.
#pragma once

#include <cstdint>

#include "backend.hpp"
#include "face_conductance.hpp"  // HEATSIM_HOST_DEVICE

namespace heatsim::kernels {

// ---- Constant weights ----------------------------------------------------------------------

// The position along the axis (0 .. n-1) whose value the ghost `layer` nodes beyond face
// `side` (0: low, 1: high) takes: the periodic image one period away, else the mirror node
// `layer` inside.
HEATSIM_HOST_DEVICE inline std::int64_t ghost_source(BoundaryKind kind, int side, int layer,
                                                     std::int64_t n) {
  if (side == 0) return kind == BoundaryKind::periodic ? n - layer : layer;
  return kind == BoundaryKind::periodic ? layer - 1 : n - 1 - layer;
}

// The ghost `layer` nodes beyond a face, from its source node's value `source`; `value` is g
// (dirichlet) or the outward du/dn (neumann), `h` the spacing along the axis. Kinds other than
// dirichlet and periodic take the neumann rule (a convective face never reaches the constant
// form; a made-up inner face of a band is a neumann one).
template <typename T>
HEATSIM_HOST_DEVICE inline T constant_ghost(BoundaryKind kind, double value, int layer, double h,
                                            T source) {
  if (kind == BoundaryKind::dirichlet) return static_cast<T>(2.0 * value) - source;
  if (kind == BoundaryKind::periodic) return source;
  return source + static_cast<T>(2.0 * layer * h * value);
}

// ---- Coefficient fields --------------------------------------------------------------------

// a * b rounded on its own, so that a sum it enters is formed from the rounded product on every
// backend and in every kernel: a device compiler may fuse a product with the addition after it
// (one rounding), in one kernel and not in another, and two paths that must agree bit for bit
// (the fields and the classes of a material map) then did not. A CPU without fused
// multiply-add rounds it so anyway.
template <typename T>
HEATSIM_HOST_DEVICE inline T rounded_product(T a, T b) {
#if defined(__CUDA_ARCH__)
  if constexpr (sizeof(T) == 8) return __dmul_rn(a, b);
  else return __fmul_rn(a, b);
#else
  return a * b;
#endif
}

// One face's condition at one time, in double: what coefficient_ghost reads.
struct CoefficientGhostRule {
  BoundaryKind kind = BoundaryKind::dirichlet;
  bool heat_flux = false;  // neumann: value is the heat flux into the body
  double value = 0.0;      // at(t): g, ambient or du/dn (heat flux)
  double transfer = 0.0;   // convective
  double h = 1.0;          // the spacing along the face's axis
  double radiation = 0.0;  // radiation_coefficient: 2 h eps sigma, 0: none
  double ambient4 = 0.0;   // ambient(t)^4 of a radiating face
};

HEATSIM_HOST_DEVICE inline CoefficientGhostRule coefficient_ghost_rule(
    BoundaryKind kind, bool heat_flux, double value, double transfer, double h, double radiation,
    double ambient4) {
  CoefficientGhostRule r;
  r.kind = kind;
  r.heat_flux = kind == BoundaryKind::neumann && heat_flux;
  r.value = value;
  r.transfer = transfer;
  r.h = h;
  r.radiation = radiation;
  r.ambient4 = ambient4;
  return r;
}

// 2 h eps sigma of a radiating face (h the spacing along its axis), else 0.
inline double radiation_coefficient(const BoundaryFace& f, double h) {
  return f.radiates() ? 2.0 * h * f.emissivity * kStefanBoltzmann : 0.0;
}

// K_g: the conductance of the face toward the ghost, from the mirror face's K_bm and the
// boundary node's k_b.
template <typename T>
HEATSIM_HOST_DEVICE inline T ghost_face_conductance(T K_bm, T k_b) {
  return K_bm > T(0) ? K_bm : k_b;
}

// The faces toward the two ghosts of one line of n nodes along an axis (K: the line's faces,
// K[i] between nodes i and i + 1, stride st; k: its nodes' conductivities): the wrap face on a
// periodic axis (the last node's), else ghost_face_conductance of the mirror face.
template <typename T>
HEATSIM_HOST_DEVICE inline void fill_ghost_faces(T* K, const T* k, std::int64_t n, std::int64_t st,
                                                 bool periodic) {
  if (periodic) {
    K[-st] = K[(n - 1) * st];
    return;
  }
  K[(n - 1) * st] = ghost_face_conductance(K[(n - 2) * st], k[(n - 1) * st]);
  K[-st] = ghost_face_conductance(K[0], k[0]);
}

// The ghost of a non-periodic face (periodic ones take the image, ghost_source). The face's
// constants are formed where they are used, each in double and rounded to T once; every
// product that enters a sum is rounded first (rounded_product), on the CPU and the GPU alike.
template <typename T>
HEATSIM_HOST_DEVICE inline T coefficient_ghost(const CoefficientGhostRule& r, T ub, T um, T K_bm,
                                               T K_g) {
  const T m = K_bm > T(0) ? um : ub;
  const bool carries = K_g > T(0);
  switch (r.kind) {
    case BoundaryKind::dirichlet: return static_cast<T>(2.0 * r.value) - m;
    case BoundaryKind::neumann:
      if (!r.heat_flux)
        return K_bm > T(0) ? m + static_cast<T>(rounded_product(2.0 * r.h, r.value)) : m;
      return carries ? m + static_cast<T>(2.0 * r.h * r.value) / K_g : m;
    case BoundaryKind::convective:
      if (!carries) return m;
      if (r.radiation != 0.0) {
        const T ub2 = ub * ub;
        const T convected =
            rounded_product(static_cast<T>(2.0 * r.h * r.transfer), ub - static_cast<T>(r.value));
        const T radiated = rounded_product(
            static_cast<T>(r.radiation), rounded_product(ub2, ub2) - static_cast<T>(r.ambient4));
        return m - (convected + radiated) / K_g;
      }
      return m - static_cast<T>(2.0 * r.h * r.transfer) * (ub - static_cast<T>(r.value)) / K_g;
    case BoundaryKind::periodic: break;
  }
  return m;
}

// ---- What a kind needs ---------------------------------------------------------------------

// Convective and heat-flux faces read the conductances: only the coefficient form holds them.
inline bool needs_coefficients(const BoundaryFace& f) {
  return f.kind == BoundaryKind::convective ||
         (f.kind == BoundaryKind::neumann && f.heat_flux);
}

// The law by which a face that holds no temperature (or a void's surface) passes heat into the
// body, per unit area, at a node of temperature u:
//   q = face_transfer (ambient - u) + face_flux + emissivity sigma (ambient^4 - u^4),
// the ambient the face's value at the time (its schedule). The physics beyond the ghost rule
// (the implicit operator, a void's surface, the heat-flow report, what anchors the body) reads
// a face through these, not by its kind.
inline double face_transfer(const BoundaryFace& f) {
  return f.kind == BoundaryKind::convective ? f.transfer : 0.0;
}
inline double face_flux(const BoundaryFace& f) {
  return f.kind == BoundaryKind::neumann && f.heat_flux ? f.value : 0.0;
}

// Whether the face passes heat at all (what a void's surface needs its area for).
inline bool passes_heat(const BoundaryFace& f) {
  return face_transfer(f) != 0.0 || face_flux(f) != 0.0 || f.radiates();
}

// Whether the face ties the body to a temperature outside it: it holds one, or passes heat
// toward its ambient (a transfer coefficient or an emissivity).
inline bool anchors(const BoundaryFace& f) {
  return f.kind == BoundaryKind::dirichlet || face_transfer(f) > 0.0 || f.radiates();
}

// The implicit operator's inflow at a face that holds no temperature (solver/multigrid/
// conductance.cpp): the flux its ghost face passes with the ghost eliminated, 2/h times the
// heat per unit area entering, Q itself for a heat-flux face, K_bm du/dn for a du/dn one (so
// nothing where K_bm is 0, as in coefficient_ghost); the transfer term (face_transfer) is not
// part of it.
inline double face_inflow(const BoundaryFace& f, double K_bm, double h) {
  if (f.kind != BoundaryKind::neumann) return 0.0;
  return f.heat_flux ? 2.0 * f.value / h : 2.0 * K_bm * f.value / h;
}

// Whether S^k computed from ghosts k*r wide, filled once by the constant-weight rules, equals
// k single steps at the nodes near face `face` of `faces` (dims active axes). `reflecting`:
// the stencil is mirror-symmetric with weights summing to 1; `source_increment`: the constant
// source per step. See convstencil/fusion_plan.hpp (face_is_exact_under_fusion) for the
// argument.
bool constant_rule_exact_under_fusion(const BoundaryFace* faces, int dims, int face,
                                      bool reflecting, double source_increment);

}  // namespace heatsim::kernels
