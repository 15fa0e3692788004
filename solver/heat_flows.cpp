#include "heat_flows.hpp"

#include <cmath>

#include "materials.hpp"
#include "multigrid/conductance.hpp"
#include "subgrid.hpp"

namespace heatsim::solver {

HeatFlowReport heat_flows(const Case& c, const kernels::StencilProblem& problem,
                          std::shared_ptr<const kernels::CoefficientFields> fields,
                          const std::vector<std::int32_t>& ids, const std::vector<double>& u,
                          double t) {
  static const char* names[6] = {"x-", "x+", "y-", "y+", "z-", "z+"};
  const multigrid::HeatFlowOperator flow(problem, fields);
  const kernels::LevelOperator A = flow.level(0.0, 1.0);
  const double volume = cell_volume(c);
  const int dims = problem.dims;
  const auto& n = problem.n;
  const std::int64_t stride[3] = {1, n[0], n[0] * n[1]};
  HeatFlowReport report;

  // Faces with a load: Neumann loads, and h_c (ambient - u) on convective faces.
  for (const auto& part : flow.face_parts()) {
    const kernels::BoundaryFace& f = problem.faces[part.face];
    const double ambient = f.kind == kernels::BoundaryKind::convective ? f.at(t) : 0.0;
    double rate = 0.0;
    for (std::size_t k = 0; k < part.nodes.size(); ++k) {
      const std::size_t i = static_cast<std::size_t>(part.nodes[k]);
      rate += part.constant[k] + part.ambient_weight[k] * (ambient - u[i]);
    }
    report.flows.push_back({std::string("face ") + names[part.face] + " (" +
                                kernels::to_string(f.kind) + (f.heat_flux ? ", heat flux" : "") +
                                ")",
                            rate * volume});
  }
  // Dirichlet faces: what their nodes pass to the free nodes next to them.
  std::vector<char> counted(static_cast<std::size_t>(problem.points()), 0);
  for (const auto& [face, nodes] : flow.dirichlet_faces()) {
    double rate = 0.0;
    for (std::int64_t b : nodes) {
      if (counted[static_cast<std::size_t>(b)]) continue;
      counted[static_cast<std::size_t>(b)] = 1;
      std::int64_t cb[3] = {b % n[0], b / n[0] % n[1], b / (n[0] * n[1])};
      for (int a = 0; a < dims; ++a)
        for (int side = 0; side < 2; ++side) {
          std::int64_t j = -1, lower = -1;
          if (side == 0 && cb[a] > 0) j = lower = b - stride[a];
          if (side == 0 && cb[a] == 0 && A.periodic[a]) j = lower = b + (n[a] - 1) * stride[a];
          if (side == 1 && cb[a] < n[a] - 1) {
            j = b + stride[a];
            lower = b;
          }
          if (side == 1 && cb[a] == n[a] - 1 && A.periodic[a]) {
            j = b - (n[a] - 1) * stride[a];
            lower = b;
          }
          if (j < 0 || A.fixed[static_cast<std::size_t>(j)]) continue;
          const double G = A.conductance[a][static_cast<std::size_t>(lower)];
          rate += G * (u[static_cast<std::size_t>(b)] - u[static_cast<std::size_t>(j)]);
        }
    }
    report.flows.push_back({std::string("face ") + names[face] + " (dirichlet)", rate * volume});
  }
  // Void surfaces: h (ambient - u) or the heat flux over each node's share of the area; the
  // ambient part is among the fields' sources, so it is taken out of them below.
  double surface_loads = 0.0;
  for (std::size_t r = 0; r < c.regions.size(); ++r) {
    const RegionSpec& region = c.regions[r];
    const kernels::BoundaryFace& f = region.surface;
    const bool convective = f.kind == kernels::BoundaryKind::convective && f.transfer != 0.0;
    const bool flux = f.kind == kernels::BoundaryKind::neumann && f.heat_flux && f.value != 0.0;
    if (!region.is_void || (!convective && !flux)) continue;
    const std::vector<double> per_volume = surface_per_volume(c, ids, r);
    double rate = 0.0, load = 0.0;
    for (std::size_t i = 0; i < per_volume.size(); ++i) {
      if (per_volume[i] == 0.0 || A.fixed[i]) continue;
      const double w = node_weight(c, static_cast<std::int64_t>(i));
      if (convective) {
        rate += w * f.transfer * per_volume[i] * (f.at(t) - u[i]);
        load += w * f.transfer * per_volume[i] * f.schedule().at(t);
      } else {
        rate += w * f.value * per_volume[i];
        load += w * f.value * per_volume[i];
      }
    }
    surface_loads += load;
    report.flows.push_back(
        {"void regions[" + std::to_string(r) + "]" + (region.name.empty() ? "" : " (" + region.name + ")"),
         rate * volume});
  }
  // The sources at time t, less the surfaces' parts.
  double sources = 0.0;
  for (const auto& s : fields->sources) {
    const double factor = s.schedule.at(t);
    double sum = 0.0;
    for (std::size_t i = 0; i < s.density.size(); ++i)
      if (!A.fixed[i]) sum += node_weight(c, static_cast<std::int64_t>(i)) * s.density[i];
    sources += factor * sum;
  }
  if (!fields->sources.empty() || surface_loads != 0.0)
    report.flows.push_back({"sources", (sources - surface_loads) * volume});
  for (const HeatFlow& f : report.flows) {
    report.imbalance += f.rate;
    report.largest = std::max(report.largest, std::abs(f.rate));
  }
  return report;
}

}  // namespace heatsim::solver
