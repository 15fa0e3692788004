#include "linearize.hpp"

#include <cmath>

#include "kernels/threads.hpp"

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
  const std::int64_t points = static_cast<std::int64_t>(h.size());
  kernels::for_each_index(0, points, points >= 32768, [&](std::int64_t i) {
    const std::int32_t l = laws.law[i];
    if (l >= 0) h[i] = laws.laws[static_cast<std::size_t>(l)].enthalpy(u[i]);
  });
  return h;
}

std::shared_ptr<const CoefficientFields> linearize(const StencilProblem& problem,
                                                   const CoefficientFields& base,
                                                   const std::vector<double>& u, double t) {
  // What the linear problem keeps of base, copied; the faces the laws scale are written in
  // full below rather than copied first, and the radiating surfaces become node terms. The
  // nodes' conductivities only where no faces are given (the operator reads the faces).
  auto out = std::make_shared<CoefficientFields>();
  if (!base.has_faces()) out->conductivity = base.conductivity;
  out->capacity = base.capacity;
  out->sources = base.sources;
  out->transfer = base.transfer;
  for (int a = base.temperature ? problem.dims : 0; a < kernels::kMaxDims; ++a)
    out->faces[static_cast<std::size_t>(a)] = base.faces[static_cast<std::size_t>(a)];
  const auto& n = problem.n;
  const std::int64_t points = problem.points();
  if (base.temperature) {
    const kernels::TemperatureDependence& laws = *base.temperature;
    // Row by row: a node's coordinate on the axis from the loops, not divided out of its index.
    for (int a = 0; a < problem.dims; ++a) {
      const std::int64_t stride = a == 0 ? 1 : a == 1 ? n[0] : n[0] * n[1];
      const bool periodic = problem.periodic(a);
      std::vector<double>& K = out->faces[static_cast<std::size_t>(a)];
      const std::vector<double>& K0 = base.faces[static_cast<std::size_t>(a)];
      K.resize(K0.size());
      kernels::for_each_index(0, n[2] * n[1], points >= 32768, [&](std::int64_t zy) {
        const std::int64_t z = zy / n[1], y = zy % n[1];
        const std::int64_t row = zy * n[0];
        const std::int64_t c[3] = {0, y, z};
        for (std::int64_t x = 0; x < n[0]; ++x) {
          const std::int64_t i = row + x;
          const std::int64_t ia = a == 0 ? x : c[a];
          std::int64_t j = i + stride;
          const std::size_t si = static_cast<std::size_t>(i);
          if (ia == n[a] - 1) {
            if (!periodic) {
              K[si] = K0[si];  // no face: the entry is unused, kept as base's
              continue;
            }
            j = i - (n[a] - 1) * stride;
          }
          K[si] = laws.face(a, i, j, K0[si], u[si], u[static_cast<std::size_t>(j)]);
        }
      });
    }
    kernels::for_each_index(0, points, points >= 32768, [&](std::int64_t i) {
      const std::size_t si = static_cast<std::size_t>(i);
      const std::int32_t l = laws.law[si];
      if (l < 0) return;
      const kernels::TemperatureLaw& law = laws.laws[static_cast<std::size_t>(l)];
      out->capacity[si] *= law.capacity_ratio(u[si]);
    });
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
      // The face's plane only: the other two axes run over their whole range (in node order,
      // each node's terms summed over its faces in the order above).
      std::int64_t lo[3] = {0, 0, 0}, hi[3] = {n[0], n[1], n[2]};
      lo[a] = side == 0 ? 0 : n[a] - 1;
      hi[a] = lo[a] + 1;
      double* transfer = out->transfer.data();
      double* load = source.data();
#pragma omp parallel for collapse(2) schedule(static) if (points >= 32768)
      for (std::int64_t z = lo[2]; z < hi[2]; ++z)
        for (std::int64_t y = lo[1]; y < hi[1]; ++y)
          for (std::int64_t x = lo[0]; x < hi[0]; ++x) {
            const std::size_t si = static_cast<std::size_t>((z * n[1] + y) * n[0] + x);
            if (base.capacity[si] == 0.0) continue;  // inside a void
            const double ub = u[si], ub3 = ub * ub * ub;
            transfer[si] += 4.0 * es * ub3;
            load[si] += es * (3.0 * ub3 * ub + amb4);
          }
    }
  // Radiating surfaces inside the body, linearised alike (R in place of 2 eps sigma / h).
  for (const auto& r : base.radiation) {
    if (out->transfer.empty()) out->transfer.assign(static_cast<std::size_t>(points), 0.0);
    if (source.empty()) source.assign(static_cast<std::size_t>(points), 0.0);
    const double amb = r.ambient.at(t), amb4 = amb * amb * amb * amb;
    double* transfer = out->transfer.data();
    double* load = source.data();
    kernels::for_each_index(0, points, points >= 32768, [&](std::int64_t k) {
      const std::size_t i = static_cast<std::size_t>(k);
      const double R = r.coefficient[i];
      if (R == 0.0) return;
      const double ub3 = u[i] * u[i] * u[i];
      transfer[i] += 4.0 * R * ub3;
      load[i] += R * (3.0 * ub3 * u[i] + amb4);
    });
  }
  if (!source.empty())
    out->sources.push_back({std::move(source), kernels::Schedule{1.0, 0.0, 0.0, {}}});
  return out;
}

}  // namespace heatsim::solver::multigrid
