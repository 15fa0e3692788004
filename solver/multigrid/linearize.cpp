#include "linearize.hpp"

#include <cmath>

namespace heatsim::solver::multigrid {

using kernels::BoundaryFace;
using kernels::CoefficientFields;
using kernels::StencilProblem;

bool radiates(const StencilProblem& problem, const CoefficientFields* fields) {
  if (fields && !fields->radiation.empty()) return true;
  for (int f = 0; f < 2 * problem.dims; ++f)
    if (problem.faces[f].radiates()) return true;
  return false;
}

bool is_nonlinear(const StencilProblem& problem, const CoefficientFields& fields) {
  return fields.temperature || radiates(problem, &fields);
}

std::vector<double> enthalpies(const CoefficientFields& fields, const std::vector<double>& u) {
  std::vector<double> h = u;
  if (!fields.temperature) return h;
  const kernels::TemperatureDependence& laws = *fields.temperature;
  for (std::size_t i = 0; i < h.size(); ++i) {
    const std::int32_t l = laws.law[i];
    if (l >= 0) h[i] = laws.laws[static_cast<std::size_t>(l)].enthalpy(u[i]);
  }
  return h;
}

std::shared_ptr<const CoefficientFields> linearize(const StencilProblem& problem,
                                                   const CoefficientFields& base,
                                                   const std::vector<double>& u, double t) {
  auto out = std::make_shared<CoefficientFields>(base);
  out->temperature = nullptr;
  const auto& n = problem.n;
  const std::int64_t points = problem.points();
  if (base.temperature) {
    const kernels::TemperatureDependence& laws = *base.temperature;
    for (int a = 0; a < problem.dims; ++a) {
      const std::int64_t stride = a == 0 ? 1 : a == 1 ? n[0] : n[0] * n[1];
      const bool periodic = problem.periodic(a);
      std::vector<double>& K = out->faces[static_cast<std::size_t>(a)];
#pragma omp parallel for schedule(static) if (points >= 32768)
      for (std::int64_t i = 0; i < points; ++i) {
        const std::int64_t ia = i / stride % n[a];
        std::int64_t j = i + stride;
        if (ia == n[a] - 1) {
          if (!periodic) continue;
          j = i - (n[a] - 1) * stride;
        }
        const std::size_t si = static_cast<std::size_t>(i), sj = static_cast<std::size_t>(j);
        K[si] = laws.face(a, i, j, base.faces[static_cast<std::size_t>(a)][si], u[si], u[sj]);
      }
    }
    for (std::int64_t i = 0; i < points; ++i) {
      const std::size_t si = static_cast<std::size_t>(i);
      const std::int32_t l = laws.law[si];
      if (l < 0) continue;
      const kernels::TemperatureLaw& law = laws.laws[static_cast<std::size_t>(l)];
      out->capacity[si] *= law.capacity_ratio(u[si]);
    }
  }
  // Radiating faces: node terms on the face's plane.
  std::vector<double> source;
  for (int a = 0; a < problem.dims; ++a)
    for (int side = 0; side < 2; ++side) {
      const BoundaryFace& f = problem.faces[2 * a + side];
      if (!f.radiates()) continue;
      if (out->transfer.empty()) out->transfer.assign(static_cast<std::size_t>(points), 0.0);
      if (source.empty()) source.assign(static_cast<std::size_t>(points), 0.0);
      const double es = f.emissivity * kernels::kStefanBoltzmann * 2.0 / problem.h[a];
      const double amb = f.at(t), amb4 = amb * amb * amb * amb;
      const std::int64_t stride = a == 0 ? 1 : a == 1 ? n[0] : n[0] * n[1];
      const std::int64_t plane = side == 0 ? 0 : n[a] - 1;
      for (std::int64_t i = 0; i < points; ++i) {
        if (i / stride % n[a] != plane) continue;
        const std::size_t si = static_cast<std::size_t>(i);
        if (base.capacity[si] == 0.0) continue;  // inside a void
        const double ub = u[si], ub3 = ub * ub * ub;
        out->transfer[si] += 4.0 * es * ub3;
        source[si] += es * (3.0 * ub3 * ub + amb4);
      }
    }
  // Radiating surfaces inside the body, linearised alike (R in place of 2 eps sigma / h).
  for (const auto& r : base.radiation) {
    if (out->transfer.empty()) out->transfer.assign(static_cast<std::size_t>(points), 0.0);
    if (source.empty()) source.assign(static_cast<std::size_t>(points), 0.0);
    const double amb = r.ambient.at(t), amb4 = amb * amb * amb * amb;
    for (std::size_t i = 0; i < static_cast<std::size_t>(points); ++i) {
      const double R = r.coefficient[i];
      if (R == 0.0) continue;
      const double ub3 = u[i] * u[i] * u[i];
      out->transfer[i] += 4.0 * R * ub3;
      source[i] += R * (3.0 * ub3 * u[i] + amb4);
    }
  }
  out->radiation.clear();
  if (!source.empty()) out->sources.push_back({std::move(source), kernels::Schedule{1.0, 0.0, 0.0, {}}});
  return out;
}

}  // namespace heatsim::solver::multigrid
