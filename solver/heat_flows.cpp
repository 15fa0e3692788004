#include "heat_flows.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <stdexcept>

#include "kernels/boundary_rules.hpp"
#include "kernels/temperature_laws.hpp"
#include "materials.hpp"
#include "multigrid/conductance.hpp"
#include "multigrid/linearize.hpp"

namespace heatsim::solver {

namespace {

const char* const kFaceNames[6] = {"x-", "x+", "y-", "y+", "z-", "z+"};

bool same_schedule(const kernels::Schedule& a, const kernels::Schedule& b) {
  return a.value == b.value && a.amplitude == b.amplitude && a.frequency == b.frequency &&
         a.table == b.table;
}

const kernels::Schedule kConstant{1.0, 0.0, 0.0, {}};

// A sum over nodes in fixed blocks, the blocks' sums added in order: the same bits whatever
// the threads. `block(begin, end)` sums the terms of nodes [begin, end) in node order.
template <typename Block>
double blocked_sum(std::int64_t count, Block block) {
  constexpr std::int64_t kBlock = 1 << 14;
  const std::int64_t blocks = (count + kBlock - 1) / kBlock;
  std::vector<double> partial(static_cast<std::size_t>(blocks), 0.0);
#pragma omp parallel for schedule(static) if (count >= 4 * kBlock)
  for (std::int64_t b = 0; b < blocks; ++b)
    partial[static_cast<std::size_t>(b)] = block(b * kBlock, std::min(count, (b + 1) * kBlock));
  double sum = 0.0;
  for (double p : partial) sum += p;
  return sum;
}

template <typename Term>
double block_sum(std::int64_t count, Term term) {
  return blocked_sum(count, [&](std::int64_t begin, std::int64_t end) {
    double s = 0.0;
    for (std::int64_t i = begin; i < end; ++i) s += term(i);
    return s;
  });
}

}  // namespace

const char* heat_rate_unit(int dims) { return dims == 3 ? "W" : dims == 2 ? "W/m" : "W/m^2"; }

double HeatFlowMeter::weight(std::int64_t i) const {
  const std::int64_t c[3] = {i % n_[0], i / n_[0] % n_[1], i / (n_[0] * n_[1])};
  double w = 1.0;
  for (int a = 0; a < dims_; ++a)
    if (halved(a, c[a])) w *= 0.5;
  return w;
}

HeatFlowMeter::HeatFlowMeter(const Case& c, const kernels::StencilProblem& problem,
                             std::shared_ptr<const kernels::CoefficientFields> fields,
                             const VoidSurfaces& surfaces, const multigrid::HeatFlowOperator* op)
    : fields_(std::move(fields)), dims_(problem.dims), n_(problem.n), volume_(cell_volume(c)) {
  if (!fields_) throw std::invalid_argument("heat flows: no coefficient fields");
  for (int a = 0; a < dims_; ++a) periodic_[a] = problem.periodic(a);
  // A nonlinear case's stepper linearises its operator at each outer iteration: the meter
  // builds its own from the reference fields and evaluates the laws at each field it is given.
  if (op && multigrid::is_nonlinear(problem, *fields_)) op = nullptr;
  std::optional<multigrid::HeatFlowOperator> own;
  if (!op) op = &own.emplace(problem, fields_);
  fixed_ = op->fixed();
  const std::int64_t np = problem.points();
  const std::int64_t stride[3] = {1, n_[0], n_[0] * n_[1]};

  // Outer faces: their loads (Neumann, convective), or what their fixed nodes pass on.
  std::array<int, kernels::kFaces> slot;
  slot.fill(-1);
  for (int f = 0; f < 2 * dims_; ++f) {
    if (periodic_[f / 2]) continue;
    slot[f] = static_cast<int>(faces_.size());
    faces_.push_back(FaceFlow{});
    const kernels::BoundaryFace& b = problem.faces[f];
    faces_.back().boundary = b;
    // Named as `validate` names them: a Neumann face of zero flux is insulated.
    const bool insulated =
        b.kind == kernels::BoundaryKind::neumann && !b.heat_flux && b.value == 0.0;
    const std::string kind = b.radiates()
                                 ? (b.transfer == 0.0 ? "radiative" : "convective, radiating")
                             : insulated ? "insulated"
                                         : kernels::to_string(b.kind);
    names_.push_back(std::string("face ") + kFaceNames[f] + " (" + kind +
                     (b.kind == kernels::BoundaryKind::neumann && b.heat_flux ? ", heat flux" : "") +
                     ")");
  }
  // The Dirichlet nodes of the body (a node inside a void on a Dirichlet face is none), and
  // the Dirichlet faces each lies on.
  std::vector<std::int32_t> owner_of(static_cast<std::size_t>(np), -1);
  std::vector<std::vector<int>> faces_of;
  for (const auto& [face, nodes] : op->dirichlet_faces())
    for (std::int64_t b : nodes) {
      const std::size_t at = static_cast<std::size_t>(b);
      if (fixed_[at] != 1 || fields_->capacity[at] == 0.0) continue;
      if (owner_of[at] < 0) {
        owner_of[at] = static_cast<std::int32_t>(dirichlet_.node.size());
        dirichlet_.node.push_back(b);
        faces_of.emplace_back();
      }
      faces_of[static_cast<std::size_t>(owner_of[at])].push_back(face);
    }
  const auto owner = [&](std::int64_t i) { return owner_of[static_cast<std::size_t>(i)]; };

  for (const auto& part : op->face_parts(true)) {
    FaceFlow& f = faces_[static_cast<std::size_t>(slot[part.face])];
    for (std::size_t k = 0; k < part.nodes.size(); ++k) {
      const std::int64_t i = part.nodes[k];
      if (fields_->capacity[static_cast<std::size_t>(i)] == 0.0) continue;
      f.nodes.push_back(i);
      f.constant.push_back(part.constant[k]);
      f.ambient_weight.push_back(part.ambient_weight[k]);
      f.owner.push_back(owner(i));
    }
  }
  // Each Dirichlet node's conductances to its neighbours in the body, and its shares.
  dirichlet_.share_begin.push_back(0);
  for (std::size_t d = 0; d < dirichlet_.node.size(); ++d) {
    const std::int64_t b = dirichlet_.node[d];
    const std::int64_t cb[3] = {b % n_[0], b / n_[0] % n_[1], b / (n_[0] * n_[1])};
    double along[3] = {0.0, 0.0, 0.0};
    for (int a = 0; a < dims_; ++a)
      for (int side = 0; side < 2; ++side) {
        // The neighbour j, and the face's lower node (CoefficientFields::face).
        std::int64_t j = -1, lower = -1;
        const bool first = cb[a] == 0, last = cb[a] == n_[a] - 1;
        if (side == 0 && !first) j = lower = b - stride[a];
        if (side == 0 && first && periodic_[a]) j = lower = b + (n_[a] - 1) * stride[a];
        if (side == 1 && !last) j = b + stride[a], lower = b;
        if (side == 1 && last && periodic_[a]) j = b - (n_[a] - 1) * stride[a], lower = b;
        if (j < 0 || fixed_[static_cast<std::size_t>(j)] == kernels::kRemovedNode) continue;
        const std::int64_t upper = lower == b ? j : b;
        // G as the operator weighs it: K / h^2 times the weights on the other axes.
        double across = 1.0;
        const std::int64_t cl[3] = {lower % n_[0], lower / n_[0] % n_[1], lower / (n_[0] * n_[1])};
        for (int o = 0; o < dims_; ++o)
          if (o != a && !periodic_[o] && (cl[o] == 0 || cl[o] == n_[o] - 1)) across *= 0.5;
        const double h = problem.h[a];
        const double G = fields_->face(a, lower, upper) / (h * h) * across;
        if (!(G > 0.0)) continue;
        dirichlet_.pair_owner.push_back(static_cast<std::int32_t>(d));
        dirichlet_.pair_neighbour.push_back(j);
        dirichlet_.pair_lower.push_back(lower);
        dirichlet_.pair_axis.push_back(a);
        dirichlet_.pair_conductance.push_back(G);
        along[a] += G;
      }
    // An edge or corner node's reaction goes to its faces as its conductances along their
    // axes: the heat a face passes enters along the face's normal.
    const std::vector<int>& on = faces_of[d];
    double total = 0.0;
    for (int f : on) total += along[f / 2];
    for (int f : on) {
      dirichlet_.share_row.push_back(static_cast<std::size_t>(slot[f]));
      dirichlet_.share.push_back(total > 0.0 ? along[f / 2] / total
                                             : 1.0 / static_cast<double>(on.size()));
    }
    dirichlet_.share_begin.push_back(dirichlet_.share.size());
  }

  // Radiating faces: their nodes in the body, weighed as the convective ghost's term.
  for (int f = 0; f < 2 * dims_; ++f) {
    const kernels::BoundaryFace& b = problem.faces[f];
    if (slot[f] < 0 || !b.radiates()) continue;
    FaceFlow& flow = faces_[static_cast<std::size_t>(slot[f])];
    const int a = f / 2;
    const std::int64_t plane = f % 2 == 0 ? 0 : n_[a] - 1;
    const double coefficient = 2.0 * b.emissivity * kernels::kStefanBoltzmann / problem.h[a];
    for (std::int64_t i = 0; i < np; ++i) {
      const std::size_t at = static_cast<std::size_t>(i);
      if (i / stride[a] % n_[a] != plane || fields_->capacity[at] == 0.0) continue;
      if (fixed_[at] && owner(i) < 0) continue;
      flow.radiating_nodes.push_back(i);
      flow.radiating_weight.push_back(weight(i) * coefficient);
      flow.radiating_owner.push_back(owner(i));
    }
  }

  // The faces' parts that a void holds, taken off (or handed on to the body beside them).
  for (const FaceCut& cut : surfaces.faces) {
    if (slot[cut.face] < 0) continue;
    FaceFlow& flow = faces_[static_cast<std::size_t>(slot[cut.face])];
    for (std::size_t k = 0; k < cut.nodes.size(); ++k) {
      const std::int64_t i = cut.nodes[k];
      if (fixed_[static_cast<std::size_t>(i)]) continue;
      flow.cut_nodes.push_back(i);
      flow.cut_weight.push_back(weight(i) * cut.excess[k]);
    }
  }

  // Void surfaces with a condition: h (ambient - u), eps sigma (ambient^4 - u^4) or the heat
  // flux over each node's share.
  const auto field_of = [&](const kernels::Schedule& s, bool surface) -> int {
    for (std::size_t f = 0; f < fields_->sources.size(); ++f)
      if (fields_->sources[f].surface == surface && same_schedule(fields_->sources[f].schedule, s))
        return static_cast<int>(f);
    return -1;
  };
  for (std::size_t r = 0; r < c.regions.size(); ++r) {
    const RegionSpec& region = c.regions[r];
    const kernels::BoundaryFace& f = region.surface;
    const VoidSurface* surface = surfaces.find(r);
    if (!region.is_void || !kernels::passes_heat(f) || !surface) continue;
    SurfaceFlow s;
    s.face = &f;
    for (std::size_t k = 0; k < surface->nodes.size(); ++k) {
      const std::int64_t i = surface->nodes[k];
      if (fixed_[static_cast<std::size_t>(i)] && owner(i) < 0) continue;
      s.nodes.push_back(i);
      s.weighted.push_back(weight(i) * surface->per_volume[k]);
      s.convective.push_back(weight(i) * surface->convective_per_volume[k]);
      s.owner.push_back(owner(i));
    }
    // Its load is a source field of its own (materials.cpp keeps the voids' surfaces apart from
    // the case's sources), which the sources' columns below leave out.
    surfaces_.push_back(std::move(s));
    names_.push_back("void regions[" + std::to_string(r) + "]" +
                     (region.name.empty() ? "" : " (" + region.name + ")"));
  }

  // Source fields, named by the case's sources they hold (materials.cpp groups them by
  // schedule in this order: physics.source, then sources[i]).
  std::vector<std::string> held(fields_->sources.size());
  const auto hold = [&](int field, const std::string& name) {
    if (field < 0) return;
    std::string& h = held[static_cast<std::size_t>(field)];
    h += (h.empty() ? "" : " + ") + name;
  };
  if (c.physics.source != 0.0) hold(field_of(kConstant, false), "physics.source");
  for (std::size_t s = 0; s < c.sources.size(); ++s)
    hold(field_of(c.sources[s].schedule, false), "sources[" + std::to_string(s) + "]");
  for (std::size_t f = 0; f < fields_->sources.size(); ++f) {
    if (held[f].empty()) continue;  // surfaces' loads alone
    const std::vector<double>& q = fields_->sources[f].density;
    // weight(i) * q_i over the free nodes, the weights taken row by row rather than from each
    // node's index by divisions: products of 1 and 1/2, so the same values in any order, and
    // the same terms summed in the same order.
    const double total = blocked_sum(np, [&](std::int64_t begin, std::int64_t end) {
      double sum = 0.0;
      for (std::int64_t row = begin / n_[0]; row * n_[0] < end; ++row) {
        double w_row = 1.0;
        if (dims_ > 1 && halved(1, row % n_[1])) w_row *= 0.5;
        if (dims_ > 2 && halved(2, row / n_[1])) w_row *= 0.5;
        const std::int64_t first = row * n_[0];
        for (std::int64_t i = std::max(begin, first); i < std::min(end, first + n_[0]); ++i) {
          const double w = halved(0, i - first) ? 0.5 * w_row : w_row;
          sum += fixed_[static_cast<std::size_t>(i)] ? 0.0 : w * q[static_cast<std::size_t>(i)];
        }
      }
      return sum;
    });
    SourceFlow source{&fields_->sources[f].schedule, total, {}, {}};
    for (std::size_t d = 0; d < dirichlet_.node.size(); ++d) {
      const std::int64_t i = dirichlet_.node[d];
      const double wq = weight(i) * q[static_cast<std::size_t>(i)];
      if (wq == 0.0) continue;
      source.owner.push_back(static_cast<std::int32_t>(d));
      source.weighted.push_back(wq);
      source.total += wq;
    }
    sources_.push_back(std::move(source));
    names_.push_back(held[f]);
  }
}

std::vector<double> HeatFlowMeter::flows(const std::vector<double>& u, double t, double dt,
                                         double* gross) const {
  return flows_with(
      u, t, [&](const kernels::Schedule& s) { return dt > 0.0 ? s.mean(t, t + dt) : s.at(t); },
      gross);
}

std::vector<double> HeatFlowMeter::implicit_flows(const std::vector<double>& u, double t,
                                                  std::int64_t step, double dt, bool bdf2,
                                                  double* gross) const {
  return flows_with(
      u, t,
      [&](const kernels::Schedule& s) {
        return multigrid::implicit_source_factor(s, step, dt, bdf2);
      },
      gross);
}

template <typename Factor>
std::vector<double> HeatFlowMeter::flows_with(const std::vector<double>& u, double t,
                                              const Factor& factor, double* gross) const {
  if (u.size() != fixed_.size())
    throw std::invalid_argument("heat flows: the field does not match the grid");
  std::vector<double> out;
  out.reserve(names_.size());
  // What the rows other than the Dirichlet faces put into each Dirichlet node.
  std::vector<double> into(dirichlet_.node.size(), 0.0);
  const auto at = [&](std::int64_t i) { return u[static_cast<std::size_t>(i)]; };
  double magnitude = 0.0;  // in the units of the rates before volume_
  for (const FaceFlow& f : faces_) {
    const double ambient = kernels::face_transfer(f.boundary) != 0.0 ? f.boundary.at(t) : 0.0;
    double rate = 0.0;
    for (std::size_t k = 0; k < f.nodes.size(); ++k) {
      const double term = f.constant[k] + f.ambient_weight[k] * (ambient - at(f.nodes[k]));
      rate += term;
      magnitude += std::abs(f.constant[k]) +
                   std::abs(f.ambient_weight[k]) * (std::abs(ambient) + std::abs(at(f.nodes[k])));
      if (f.owner[k] >= 0) into[static_cast<std::size_t>(f.owner[k])] += term;
    }
    if (!f.radiating_nodes.empty()) {
      const double a = f.boundary.at(t), a4 = a * a * a * a;
      for (std::size_t k = 0; k < f.radiating_nodes.size(); ++k) {
        const double ub = at(f.radiating_nodes[k]), ub2 = ub * ub;
        const double term = f.radiating_weight[k] * (a4 - ub2 * ub2);
        rate += term;
        magnitude += std::abs(f.radiating_weight[k]) * (a4 + ub2 * ub2);
        if (f.radiating_owner[k] >= 0) into[static_cast<std::size_t>(f.radiating_owner[k])] += term;
      }
    }
    // The void's part of the face, taken off on the free nodes (no Dirichlet node's).
    if (!f.cut_nodes.empty())
      rate +=
          law_rate(f.boundary, f.cut_nodes, f.cut_weight, u, t,
                   kernels::face_transfer(f.boundary) != 0.0 ? factor(f.boundary.schedule()) : 0.0,
                   nullptr, nullptr, nullptr, &magnitude);
    out.push_back(rate);
  }
  for (const SurfaceFlow& s : surfaces_) {
    double surface_magnitude = 0.0;
    out.push_back(
        law_rate(*s.face, s.nodes, s.weighted, u, t,
                 kernels::face_transfer(*s.face) != 0.0 ? factor(s.face->schedule()) : 0.0,
                 &s.owner, &into, &s.convective, &surface_magnitude) *
        volume_);
    magnitude += surface_magnitude;
  }
  for (const SourceFlow& s : sources_) {
    const double f = factor(*s.schedule);
    for (std::size_t k = 0; k < s.owner.size(); ++k)
      into[static_cast<std::size_t>(s.owner[k])] += f * s.weighted[k];
    out.push_back(f * s.total * volume_);
    magnitude += std::abs(f * s.total);
  }
  // The Dirichlet nodes' reactions: their conduction out, less what the other rows put in.
  std::vector<double> reaction(dirichlet_.node.size(), 0.0);
  for (std::size_t k = 0; k < dirichlet_.pair_owner.size(); ++k) {
    const std::size_t d = static_cast<std::size_t>(dirichlet_.pair_owner[k]);
    const std::int64_t b = dirichlet_.node[d];
    const double G = scaled(b, k, u);
    reaction[d] += G * (at(b) - at(dirichlet_.pair_neighbour[k]));
    magnitude += std::abs(G) * (std::abs(at(b)) + std::abs(at(dirichlet_.pair_neighbour[k])));
  }
  for (std::size_t d = 0; d < dirichlet_.node.size(); ++d) {
    const double r = reaction[d] - into[d];
    for (std::size_t k = dirichlet_.share_begin[d]; k < dirichlet_.share_begin[d + 1]; ++k)
      out[dirichlet_.share_row[k]] += dirichlet_.share[k] * r;
  }
  for (std::size_t f = 0; f < faces_.size(); ++f) out[f] *= volume_;
  if (gross) *gross = magnitude * volume_;
  return out;
}

double HeatFlowMeter::law_rate(const kernels::BoundaryFace& f,
                               const std::vector<std::int64_t>& nodes,
                               const std::vector<double>& weighted, const std::vector<double>& u,
                               double t, double ambient, const std::vector<std::int32_t>* owner,
                               std::vector<double>* into, const std::vector<double>* convective,
                               double* gross) {
  // The law (kernels::face_transfer, face_flux, radiates), term by term.
  double rate = 0.0, magnitude = 0.0;
  const auto add = [&](std::size_t k, double term, double size) {
    rate += term;
    magnitude += size;
    if (owner && (*owner)[k] >= 0) (*into)[static_cast<std::size_t>((*owner)[k])] += term;
  };
  const auto at = [&](std::size_t k) { return u[static_cast<std::size_t>(nodes[k])]; };
  const double transfer = kernels::face_transfer(f), flux = kernels::face_flux(f);
  if (transfer != 0.0) {
    const std::vector<double>& w = convective ? *convective : weighted;
    for (std::size_t k = 0; k < nodes.size(); ++k)
      add(k, w[k] * transfer * (ambient - at(k)),
          std::abs(w[k] * transfer) * (std::abs(ambient) + std::abs(at(k))));
  }
  if (f.radiates()) {
    // The steps take a radiating surface's ambient at the step's start (no mean).
    const double a = f.at(t), a4 = a * a * a * a;
    const double es = f.emissivity * kernels::kStefanBoltzmann;
    for (std::size_t k = 0; k < nodes.size(); ++k) {
      const double ub = at(k), ub2 = ub * ub;
      add(k, weighted[k] * es * (a4 - ub2 * ub2), std::abs(weighted[k] * es) * (a4 + ub2 * ub2));
    }
  }
  if (flux != 0.0)
    for (std::size_t k = 0; k < nodes.size(); ++k)
      add(k, weighted[k] * flux, std::abs(weighted[k] * flux));
  if (gross) *gross += magnitude;
  return rate;
}

double HeatFlowMeter::stored_at(std::int64_t i, const std::vector<double>& u,
                                const std::vector<double>& before) const {
  const std::size_t at = static_cast<std::size_t>(i);
  const double C = fields_->capacity[at];
  const kernels::TemperatureDependence* laws = fields_->temperature.get();
  const std::int32_t l = laws ? laws->law[at] : -1;
  if (l >= 0) {
    const kernels::TemperatureLaw& law = laws->laws[static_cast<std::size_t>(l)];
    if (law.varying_capacity())
      return weight(i) * C * (law.enthalpy(u[at]) - law.enthalpy(before[at]));
  }
  return weight(i) * C * (u[at] - before[at]);
}

double HeatFlowMeter::stored_change(const std::vector<double>& u,
                                    const std::vector<double>& before) const {
  if (u.size() != fixed_.size() || before.size() != fixed_.size())
    throw std::invalid_argument("heat flows: the field does not match the grid");
  // Nodes inside a void hold nothing; the Dirichlet nodes' storage is part of their reaction.
  const double sum = block_sum(static_cast<std::int64_t>(u.size()), [&](std::int64_t i) {
    const std::size_t at = static_cast<std::size_t>(i);
    if (fixed_[at] == kernels::kRemovedNode || fields_->capacity[at] == 0.0) return 0.0;
    return stored_at(i, u, before);
  });
  return sum * volume_;
}

double HeatFlowMeter::stored_magnitude(const std::vector<double>& u,
                                       const std::vector<double>& before) const {
  if (u.size() != fixed_.size() || before.size() != fixed_.size())
    throw std::invalid_argument("heat flows: the field does not match the grid");
  const double sum = block_sum(static_cast<std::int64_t>(u.size()), [&](std::int64_t i) {
    const std::size_t at = static_cast<std::size_t>(i);
    return weight(i) * fields_->capacity[at] * (std::abs(u[at]) + std::abs(before[at]));
  });
  return sum * volume_;
}

std::vector<double> HeatFlowMeter::dirichlet_stored_change(
    const std::vector<double>& u, const std::vector<double>& before) const {
  if (u.size() != fixed_.size() || before.size() != fixed_.size())
    throw std::invalid_argument("heat flows: the field does not match the grid");
  std::vector<double> out(names_.size(), 0.0);
  for (std::size_t d = 0; d < dirichlet_.node.size(); ++d) {
    const double change = stored_at(dirichlet_.node[d], u, before) * volume_;
    for (std::size_t k = dirichlet_.share_begin[d]; k < dirichlet_.share_begin[d + 1]; ++k)
      out[dirichlet_.share_row[k]] += dirichlet_.share[k] * change;
  }
  return out;
}

double HeatFlowMeter::scaled(std::int64_t b, std::size_t k, const std::vector<double>& u) const {
  const kernels::TemperatureDependence* laws = fields_->temperature.get();
  const double G = dirichlet_.pair_conductance[k];
  if (!laws) return G;
  const std::int64_t lower = dirichlet_.pair_lower[k];
  const std::int64_t upper = b == lower ? dirichlet_.pair_neighbour[k] : b;
  return laws->face(dirichlet_.pair_axis[k], lower, upper, G, u[static_cast<std::size_t>(lower)],
                    u[static_cast<std::size_t>(upper)]);
}

HeatFlowReport HeatFlowMeter::report(const std::vector<double>& u, double t) const {
  HeatFlowReport r;
  const std::vector<double> rates = flows_with(
      u, t, [&](const kernels::Schedule& s) { return s.at(t); }, &r.gross);
  for (std::size_t k = 0; k < rates.size(); ++k) {
    r.flows.push_back({names_[k], rates[k]});
    r.imbalance += rates[k];
    r.largest = std::max(r.largest, std::abs(rates[k]));
  }
  return r;
}

HeatFlowRows::HeatFlowRows(const HeatFlowMeter& meter, TimeMethod method, double dt)
    : meter_(meter), method_(method), dt_(dt) {}

int HeatFlowRows::lead(TimeMethod method) {
  return method == TimeMethod::steady ? 0 : method == TimeMethod::bdf2 ? 2 : 1;
}

std::optional<HeatFlowRow> HeatFlowRows::take(std::int64_t step, const std::vector<double>& u,
                                              bool row) {
  const double t = static_cast<double>(step) * dt_;
  const bool follows = have_last_ && last_step_ == step - 1;
  const double change = follows ? meter_.stored_change(u, last_u_) : 0.0;
  // The Dirichlet nodes' part of the change, per row: their faces' reactions hold its rate.
  std::vector<double> dirichlet_change =
      follows ? meter_.dirichlet_stored_change(u, last_u_) : std::vector<double>();
  std::optional<HeatFlowRow> out;
  const auto sum = [](const std::vector<double>& v) {
    double s = 0.0;
    for (double x : v) s += x;
    return s;
  };
  if (row && method_ == TimeMethod::steady) {
    out.emplace();
    out->flows = meter_.flows(u, 0.0, 0.0, &out->gross);
    out->storage = 0.0;
  } else if (row && follows) {
    out.emplace();
    const double t0 = t - dt_;
    switch (method_) {
      case TimeMethod::explicit_euler:
        out->flows = meter_.flows(last_u_, t0, dt_, &out->gross);
        break;
      case TimeMethod::crank_nicolson: {
        double end_gross = 0.0;
        out->flows = meter_.implicit_flows(last_u_, t0, step - 1, dt_, false, &out->gross);
        const std::vector<double> end =
            meter_.implicit_flows(u, t, step - 1, dt_, false, &end_gross);
        for (std::size_t k = 0; k < end.size(); ++k) out->flows[k] = 0.5 * (out->flows[k] + end[k]);
        out->gross = 0.5 * (out->gross + end_gross);
        break;
      }
      default:
        out->flows = meter_.implicit_flows(
            u, t, step - 1, dt_, method_ == TimeMethod::bdf2 && have_last_change_, &out->gross);
        break;
    }
    out->gross += meter_.stored_magnitude(u, last_u_) / dt_;
    // bdf2 steps as BDF2 once two fields lie behind it, as the stepper does.
    const bool bdf2 = method_ == TimeMethod::bdf2 && have_last_change_;
    out->storage = bdf2 ? (3.0 * change - last_change_) / (2.0 * dt_) : change / dt_;
    for (std::size_t k = 0; k < dirichlet_change.size(); ++k)
      if (dirichlet_change[k] != 0.0 || (bdf2 && last_dirichlet_change_[k] != 0.0))
        out->flows[k] += bdf2
                             ? (3.0 * dirichlet_change[k] - last_dirichlet_change_[k]) / (2.0 * dt_)
                             : dirichlet_change[k] / dt_;
  } else if (row && step == 0) {
    out.emplace();
    out->flows = meter_.flows(u, t, 0.0, &out->gross);
    out->storage = sum(out->flows);
  }
  if (out) out->imbalance = sum(out->flows) - out->storage;
  last_change_ = change;
  last_dirichlet_change_ = std::move(dirichlet_change);
  have_last_change_ = follows;
  last_step_ = step;
  last_u_ = u;
  have_last_ = true;
  return out;
}

namespace {

template <typename T>
std::vector<double> heat_flux(const kernels::StencilProblem& p,
                              const kernels::CoefficientFields* fields, double alpha, const T* u) {
  const std::int64_t np = p.points();
  const auto& n = p.n;
  const std::int64_t stride[3] = {1, n[0], n[0] * n[1]};
  std::vector<double> q(static_cast<std::size_t>(3 * np), 0.0);
  const kernels::TemperatureDependence* laws = fields ? fields->temperature.get() : nullptr;
#pragma omp parallel for schedule(static) if (np >= 32768)
  for (std::int64_t i = 0; i < np; ++i) {
    if (fields && fields->capacity[static_cast<std::size_t>(i)] == 0.0) continue;  // a void
    const std::int64_t c[3] = {i % n[0], i / n[0] % n[1], i / (n[0] * n[1])};
    for (int a = 0; a < p.dims; ++a) {
      const bool periodic = p.periodic(a);
      // The flux through the face to the neighbour below and above (W/m^2 along +axis), and
      // whether that face lies in the body.
      double sum = 0.0;
      int faces = 0;
      for (int side = 0; side < 2; ++side) {
        std::int64_t j = -1;
        if (side == 0 && c[a] > 0) j = i - stride[a];
        if (side == 0 && c[a] == 0 && periodic) j = i + (n[a] - 1) * stride[a];
        if (side == 1 && c[a] < n[a] - 1) j = i + stride[a];
        if (side == 1 && c[a] == n[a] - 1 && periodic) j = i - (n[a] - 1) * stride[a];
        if (j < 0) continue;
        const std::int64_t lower = side == 0 ? j : i, upper = side == 0 ? i : j;
        double K = fields ? fields->face(a, lower, upper) : alpha;
        if (laws)
          K = laws->face(a, lower, upper, K, static_cast<double>(u[lower]),
                         static_cast<double>(u[upper]));
        if (!(K > 0.0)) continue;
        sum += -K * (static_cast<double>(u[upper]) - static_cast<double>(u[lower])) / p.h[a];
        ++faces;
      }
      if (faces > 0) q[static_cast<std::size_t>(3 * i + a)] = sum / faces;
    }
  }
  return q;
}

// Per node: law(l, T) for a node of law l >= 0 at T = u_i, `otherwise(i)` for the others.
template <typename T, typename Law, typename Otherwise>
std::vector<double> per_node_law(const kernels::CoefficientFields& fields, const T* u, Law law,
                                 Otherwise otherwise) {
  const std::size_t np = fields.capacity.size();
  const kernels::TemperatureDependence* laws = fields.temperature.get();
  std::vector<double> out(np);
  for (std::size_t i = 0; i < np; ++i) {
    const std::int32_t l = laws ? laws->law[i] : -1;
    out[i] = l >= 0 ? law(laws->laws[static_cast<std::size_t>(l)], static_cast<double>(u[i]), i)
                    : otherwise(i);
  }
  return out;
}

template <typename T>
std::vector<double> conductivity_at(const kernels::CoefficientFields& fields, const T* u) {
  return per_node_law(
      fields, u,
      [&](const kernels::TemperatureLaw& l, double t, std::size_t i) {
        return fields.conductivity[i] * l.conductivity_ratio(t);
      },
      [&](std::size_t i) { return fields.conductivity[i]; });
}

template <typename T>
std::vector<double> liquid_fraction_at(const kernels::CoefficientFields& fields, const T* u) {
  return per_node_law(
      fields, u,
      [](const kernels::TemperatureLaw& l, double t, std::size_t) { return l.liquid_fraction(t); },
      [](std::size_t) { return 0.0; });
}

}  // namespace

std::vector<double> node_conductivity(const kernels::CoefficientFields& fields, const double* u) {
  return conductivity_at(fields, u);
}
std::vector<double> node_conductivity(const kernels::CoefficientFields& fields, const float* u) {
  return conductivity_at(fields, u);
}
std::vector<double> node_liquid_fraction(const kernels::CoefficientFields& fields,
                                         const double* u) {
  return liquid_fraction_at(fields, u);
}
std::vector<double> node_liquid_fraction(const kernels::CoefficientFields& fields,
                                         const float* u) {
  return liquid_fraction_at(fields, u);
}

std::vector<double> node_heat_flux(const kernels::StencilProblem& problem,
                                   const kernels::CoefficientFields* fields, double alpha,
                                   const double* u) {
  return heat_flux(problem, fields, alpha, u);
}

std::vector<double> node_heat_flux(const kernels::StencilProblem& problem,
                                   const kernels::CoefficientFields* fields, double alpha,
                                   const float* u) {
  return heat_flux(problem, fields, alpha, u);
}

}  // namespace heatsim::solver
