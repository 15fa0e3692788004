#include "conductance.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "kernels/boundary_rules.hpp"

namespace heatsim::solver::multigrid {

using kernels::BoundaryKind;
using kernels::kMaxDims;

HeatFlowOperator::HeatFlowOperator(const kernels::StencilProblem& problem,
                                   std::shared_ptr<const kernels::CoefficientFields> fields)
    : problem_(problem), fields_(std::move(fields)) {
  if (!fields_) throw std::invalid_argument("heat-flow operator: no coefficient fields");
  const std::int64_t np = problem.points();
  const auto& k = fields_->conductivity;
  // The nodes' k are read only where no faces are given (CoefficientFields::face).
  if ((!fields_->has_faces() && k.size() != static_cast<std::size_t>(np)) ||
      fields_->capacity.size() != static_cast<std::size_t>(np))
    throw std::invalid_argument("heat-flow operator: coefficient fields do not match the grid");
  for (const auto& s : fields_->sources)
    if (s.density.size() != static_cast<std::size_t>(np))
      throw std::invalid_argument("heat-flow operator: a source field does not match the grid");
  const int dims = problem.dims;
  const auto& n = problem.n;
  for (int a = 0; a < dims; ++a)
    if (n[a] < 2) throw std::invalid_argument("heat-flow operator: fewer than 2 nodes on an axis");

  base_.dims = dims;
  base_.n = problem.n;
  for (int a = 0; a < kMaxDims; ++a) base_.periodic[a] = a < dims && problem.periodic(a);
  // The node arrays are written in full by the threads below (kernels::UnsetAllocator: no zero
  // fill on one thread first, the threads take the pages' first faults).
  base_.node_term = kernels::LevelWeights(static_cast<std::size_t>(np));
  base_.fixed.assign(static_cast<std::size_t>(np), 0);
  // Nodes inside a void (capacity 0): fixed, and no anchor of the temperature (floating()).
  std::vector<char> removed(static_cast<std::size_t>(np), 0);
  std::array<std::int64_t, kMaxDims> stride{1, n[0], n[0] * n[1]};
  for (int a = 0; a < dims; ++a) {
    base_.conductance[a] = kernels::LevelWeights(static_cast<std::size_t>(np));
  }
  // Weights and conductances: each node writes its own.
#pragma omp parallel for collapse(2) schedule(static) if (np >= 32768)
  for (std::int64_t z = 0; z < n[2]; ++z)
    for (std::int64_t y = 0; y < n[1]; ++y)
      for (std::int64_t x = 0; x < n[0]; ++x) {
        const std::int64_t i = (z * n[1] + y) * n[0] + x;
        const std::int64_t c[3] = {x, y, z};
        const double w[3] = {axis_weight(0, x), axis_weight(1, y), axis_weight(2, z)};
        const double share = w[0] * w[1] * w[2];
        // A node inside a void (no capacity) is no part of the body: fixed, its value kept.
        if (fields_->capacity[i] == 0.0) {
          base_.fixed[i] = kernels::kRemovedNode;
          removed[i] = 1;
        }
        // A surface inside the body: H u lost per unit volume, on the diagonal.
        double term = 0.0;
        if (!fields_->transfer.empty()) term += share * fields_->transfer[i];
        base_.node_term[i] = term;
        for (int a = 0; a < dims; ++a) {
          const bool last = c[a] == n[a] - 1;
          if (last && !base_.periodic[a]) {
            base_.conductance[a][i] = 0.0;
            continue;
          }
          const std::int64_t j = last ? i - (n[a] - 1) * stride[a] : i + stride[a];
          const double h = problem.h[a];
          base_.conductance[a][i] = fields_->face(a, i, j) / (h * h) * share / w[a];
        }
      }
  // The faces of the boundary nodes, in node order (face_loads_ keeps it): a row of x is on a
  // face along y or z, or only its two end nodes can be.
  const auto on_face = [&](int a, std::int64_t c) {
    return a < dims && !base_.periodic[a] && (c == 0 || c == n[a] - 1);
  };
  for (std::int64_t z = 0; z < n[2]; ++z)
    for (std::int64_t y = 0; y < n[1]; ++y) {
      const bool whole_row = on_face(1, y) || on_face(2, z);
      const std::int64_t step_x = whole_row || n[0] < 2 ? 1 : n[0] - 1;
      for (std::int64_t x = 0; x < n[0]; x += step_x) {
        const std::int64_t i = (z * n[1] + y) * n[0] + x;
        const std::int64_t c[3] = {x, y, z};
        for (int a = 0; a < dims; ++a) {
          if (base_.periodic[a]) continue;
          for (int side = 0; side < 2; ++side) {
            if (c[a] != (side == 0 ? 0 : n[a] - 1)) continue;
            const int face = 2 * a + side;
            const kernels::BoundaryFace& f = problem.faces[face];
            const std::int64_t m = side == 0 ? i + stride[a] : i - stride[a];
            const double h = problem.h[a];
            if (f.kind == BoundaryKind::periodic)
              throw std::invalid_argument("heat-flow operator: face " + std::to_string(face) +
                                          " is periodic but its opposite face is not");
            if (f.kind == BoundaryKind::dirichlet) {
              base_.fixed[i] = 1;
              continue;
            }
            // The face's law: an inflow (a flux, or du/dn through K_bm) and a transfer toward
            // its ambient (H on the diagonal, H ambient(t) in the load).
            const double inflow =
                kernels::face_inflow(f, fields_->face(a, std::min(i, m), std::max(i, m)), h);
            const double share = weight(x, y, z);
            const double transfer = share * 2.0 * kernels::face_transfer(f) / h;
            base_.node_term[i] += transfer;
            face_loads_.push_back({i, face, share * inflow, transfer});
          }
        }
      }
    }
  floating_ = true;
  for (std::size_t i = 0; i < base_.fixed.size() && floating_; ++i)
    if ((base_.fixed[i] && !removed[i]) || base_.node_term[i] > 0.0) floating_ = false;
}

kernels::LevelOperator HeatFlowOperator::level(double alpha, double beta) const {
  if (level_taken_)
    throw std::logic_error("heat-flow operator: the steady level was taken; no level is left");
  kernels::LevelOperator op = base_;
  scale_level(op, alpha, beta);
  return op;
}

template <typename F>
void HeatFlowOperator::for_weighted_nodes(F&& f) const {
  const auto& n = base_.n;
#pragma omp parallel for collapse(2) schedule(static) if (points() >= 32768)
  for (std::int64_t z = 0; z < n[2]; ++z)
    for (std::int64_t y = 0; y < n[1]; ++y) {
      const std::int64_t row = (z * n[1] + y) * n[0];
      for (std::int64_t x = 0; x < n[0]; ++x) f(row + x, weight(x, y, z));
    }
}

void HeatFlowOperator::scale_level(kernels::LevelOperator& op, double alpha, double beta) const {
  const double* capacity = fields_->capacity.data();
  for_weighted_nodes([&](std::int64_t i, double w) {
    op.node_term[i] = alpha * (w * capacity[i]) + beta * op.node_term[i];
    for (int a = 0; a < op.dims; ++a) op.conductance[a][i] *= beta;
  });
}

kernels::LevelOperator HeatFlowOperator::take_steady_level() {
  if (level_taken_)
    throw std::logic_error("heat-flow operator: the steady level was taken already");
  level_taken_ = true;
  // level(0, 1) computes 0 * w C + 1 * transfer and 1 * G: the values themselves, w C being
  // finite and non-negative.
  kernels::LevelOperator op;
  op.dims = base_.dims;
  op.n = base_.n;
  op.periodic = base_.periodic;
  op.fixed = base_.fixed;
  op.node_term = std::move(base_.node_term);
  for (int a = 0; a < kMaxDims; ++a) op.conductance[a] = std::move(base_.conductance[a]);
  return op;
}

kernels::LevelOperator HeatFlowOperator::take_level(double alpha, double beta) {
  if (level_taken_) throw std::logic_error("heat-flow operator: the level was taken already");
  scale_level(base_, alpha, beta);  // each value written over the one it is computed from
  return take_steady_level();
}

void HeatFlowOperator::release_fields() {
  if (!fields_) return;
  if (!level_taken_)
    throw std::logic_error("heat-flow operator: the fields are needed until the level is taken");
  for (std::size_t s = 0; s < fields_->sources.size(); ++s) {
    kernels::LevelWeights weighted(static_cast<std::size_t>(points()));
    weighted_source(s, weighted.data());
    weighted_sources_.push_back(std::move(weighted));
    schedules_.push_back(fields_->sources[s].schedule);
  }
  fields_.reset();
  problem_.coefficients.reset();
}

std::vector<double> HeatFlowOperator::weighted_capacity() const {
  if (!fields_) throw std::logic_error("heat-flow operator: the fields were released");
  std::vector<double> wc(static_cast<std::size_t>(points()));
  const double* capacity = fields_->capacity.data();
  for_weighted_nodes([&](std::int64_t i, double w) { wc[i] = w * capacity[i]; });
  return wc;
}

bool HeatFlowOperator::floating() const { return floating_; }

double implicit_source_factor(const kernels::Schedule& s, std::int64_t step, double dt, bool bdf2) {
  const double t0 = static_cast<double>(step) * dt, t1 = static_cast<double>(step + 1) * dt;
  if (s.constant()) return s.at(t1);
  const double mean = s.mean(t0, t1);
  if (!bdf2) return mean;
  return 1.5 * mean - 0.5 * s.mean(static_cast<double>(step - 1) * dt, t0);
}

void HeatFlowOperator::add_load(double t, std::vector<double>& out, std::int64_t step, double dt,
                                bool bdf2) const {
  add_load_with(t, out, [&](const kernels::Schedule& s) {
    return step >= 0 ? implicit_source_factor(s, step, dt, bdf2) : s.at(t);
  });
}

void HeatFlowOperator::add_load_between(double t0, double t1, std::vector<double>& out) const {
  add_load_with(t1, out, [&](const kernels::Schedule& s) {
    return s.constant() ? s.at(t1) : s.mean(t0, t1);
  });
}

void HeatFlowOperator::add_load_with(
    double t, std::vector<double>& out,
    const std::function<double(const kernels::Schedule&)>& source_factor) const {
  if (!fields_) throw std::logic_error("heat-flow operator: the fields were released");
  out.resize(static_cast<std::size_t>(points()), 0.0);
  for (const FaceLoad& f : face_loads_) {
    if (base_.fixed[f.node]) continue;
    out[f.node] += f.constant;
    if (f.ambient_weight != 0.0) out[f.node] += f.ambient_weight * problem_.faces[f.face].at(t);
  }
  for (const auto& s : fields_->sources) {
    const double factor = source_factor(s.schedule);
    if (factor == 0.0) continue;
    const double* q = s.density.data();
    for_weighted_nodes([&](std::int64_t i, double w) {
      if (!base_.fixed[i]) out[i] += w * factor * q[i];
    });
  }
}

void HeatFlowOperator::set_fixed(double t, std::vector<double>& u) const {
  const auto& n = problem_.n;
  for (int a = 0; a < problem_.dims; ++a)
    for (int side = 0; side < 2; ++side) {
      const kernels::BoundaryFace& f = problem_.faces[2 * a + side];
      if (f.kind != BoundaryKind::dirichlet) continue;
      const double g = f.at(t);
      // The face's plane only: the other two axes run over their whole range.
      std::int64_t lo[3] = {0, 0, 0}, hi[3] = {n[0], n[1], n[2]};
      lo[a] = side == 0 ? 0 : n[a] - 1;
      hi[a] = lo[a] + 1;
#pragma omp parallel for collapse(2) schedule(static) if (n[0] * n[1] * n[2] >= 32768)
      for (std::int64_t z = lo[2]; z < hi[2]; ++z)
        for (std::int64_t y = lo[1]; y < hi[1]; ++y)
          for (std::int64_t x = lo[0]; x < hi[0]; ++x) u[(z * n[1] + y) * n[0] + x] = g;
    }
}

void HeatFlowOperator::weighted_source(std::size_t s, double* out) const {
  const std::int64_t np = points();
  if (!fields_) {
    const double* w = weighted_sources_.at(s).data();
#pragma omp parallel for schedule(static) if (np >= 32768)
    for (std::int64_t i = 0; i < np; ++i) out[i] = w[i];
    return;
  }
  const double* q = fields_->sources.at(s).density.data();
  const std::uint8_t* fixed = base_.fixed.data();
  for_weighted_nodes([&](std::int64_t i, double w) { out[i] = fixed[i] ? 0.0 : w * q[i]; });
}

std::vector<HeatFlowOperator::FacePart> HeatFlowOperator::face_parts(bool dirichlet_nodes) const {
  std::array<FacePart, kernels::kFaces> per_face;
  for (const FaceLoad& f : face_loads_) {
    const std::uint8_t fixed = base_.fixed[f.node];
    if (fixed && !(dirichlet_nodes && fixed == 1)) continue;
    FacePart& p = per_face[f.face];
    p.face = f.face;
    p.nodes.push_back(f.node);
    p.constant.push_back(f.constant);
    p.ambient_weight.push_back(f.ambient_weight);
  }
  std::vector<FacePart> parts;
  for (FacePart& p : per_face)
    if (!p.nodes.empty()) parts.push_back(std::move(p));
  return parts;
}

std::vector<std::pair<int, std::vector<std::int64_t>>> HeatFlowOperator::dirichlet_faces() const {
  std::vector<std::pair<int, std::vector<std::int64_t>>> faces;
  const auto& n = problem_.n;
  for (int a = 0; a < problem_.dims; ++a)
    for (int side = 0; side < 2; ++side) {
      if (problem_.faces[2 * a + side].kind != BoundaryKind::dirichlet) continue;
      std::vector<std::int64_t> nodes;
      std::int64_t lo[3] = {0, 0, 0}, hi[3] = {n[0], n[1], n[2]};
      lo[a] = side == 0 ? 0 : n[a] - 1;
      hi[a] = lo[a] + 1;
      for (std::int64_t z = lo[2]; z < hi[2]; ++z)
        for (std::int64_t y = lo[1]; y < hi[1]; ++y)
          for (std::int64_t x = lo[0]; x < hi[0]; ++x) nodes.push_back((z * n[1] + y) * n[0] + x);
      faces.emplace_back(2 * a + side, std::move(nodes));
    }
  return faces;
}

double HeatFlowOperator::net_inflow(double t) const {
  std::vector<double> load(static_cast<std::size_t>(points()), 0.0);
  add_load(t, load);
  double sum = 0.0;
  for (double v : load) sum += v;
  return sum;
}

}  // namespace heatsim::solver::multigrid
