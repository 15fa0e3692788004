#include "boundary_rules.hpp"

namespace heatsim::kernels {
namespace {

// Whether the reflections of two faces on different axes compose at their common edge into
// an extension that both reproduce. Fill order (x, then y over the x ghosts, then z) puts
// 2 g_b - (2 g_a - u) = u + 2 (g_b - g_a) in a Dirichlet-Dirichlet corner, the odd
// reflection of both only when g_a = g_b; a Dirichlet-Neumann corner carries the flux term
// 2 j h q into the odd reflection, harmless only when q = 0. Even-plus-linear reflections
// (Neumann-Neumann) and periods compose freely.
bool corner_compatible(const BoundaryFace& a, const BoundaryFace& b) {
  using K = BoundaryKind;
  if (a.kind == K::periodic || b.kind == K::periodic) return true;
  if (a.kind == K::neumann && b.kind == K::neumann) return true;
  if (a.kind == K::dirichlet && b.kind == K::dirichlet)
    return !a.time_dependent() && !b.time_dependent() && a.value == b.value;
  return (a.kind == K::neumann ? a : b).value == 0.0;
}

}  // namespace

bool constant_rule_exact_under_fusion(const BoundaryFace* faces, int dims, int face,
                                      bool reflecting, double source_increment) {
  const BoundaryFace& f = faces[face];
  if (f.kind == BoundaryKind::periodic) return true;
  if (!reflecting) return false;
  // A Dirichlet value that changes within a pass (a sine or a table) is not the one the
  // ghosts were filled with at the pass's start.
  if (f.kind == BoundaryKind::dirichlet && (f.time_dependent() || source_increment != 0.0))
    return false;
  for (int other = 0; other < 2 * dims; ++other)
    if (other / 2 != face / 2 && !corner_compatible(f, faces[other])) return false;
  return true;
}

}  // namespace heatsim::kernels
