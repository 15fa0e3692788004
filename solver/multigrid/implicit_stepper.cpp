#include "implicit_stepper.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <limits>
#include <thread>

#include "hierarchy.hpp"
#include "kernels/threads.hpp"
#include "linearize.hpp"

namespace heatsim::solver::multigrid {

const char* to_string(TimeMethod m) {
  switch (m) {
    case TimeMethod::explicit_euler:
      return "explicit";
    case TimeMethod::backward_euler:
      return "backward-euler";
    case TimeMethod::crank_nicolson:
      return "crank-nicolson";
    case TimeMethod::bdf2:
      return "bdf2";
    case TimeMethod::steady:
      return "steady";
  }
  return "?";
}

std::optional<TimeMethod> time_method_from_string(const std::string& s) {
  for (TimeMethod m : {TimeMethod::explicit_euler, TimeMethod::backward_euler,
                       TimeMethod::crank_nicolson, TimeMethod::bdf2, TimeMethod::steady})
    if (s == to_string(m)) return m;
  return std::nullopt;
}

double crank_nicolson_stiffest_factor(double dt, double dt_limit) {
  const double r = dt / dt_limit;
  return (1.0 - r) / (1.0 + r);
}

std::string large_step_warning(TimeMethod m, double dt, double dt_limit) {
  if (m != TimeMethod::crank_nicolson || !(dt > 0.0 && dt_limit > 0.0)) return {};
  const double factor = crank_nicolson_stiffest_factor(dt, dt_limit);
  if (!(factor < kRingingFactor)) return {};
  // r = 3 gives the factor -0.5: the largest step that keeps the stiffest mode's decay.
  const double r_max = (1.0 - kRingingFactor) / (1.0 + kRingingFactor);
  // How fast the ringing fades: the steps it takes to fall to a hundredth.
  const double to_hundredth = std::log(0.01) / std::log(std::abs(factor));
  char decay[120];
  if (std::abs(factor) > 0.9)
    std::snprintf(decay, sizeof decay, "hardly decays (a hundredth after %.0f steps)",
                  to_hundredth);
  else
    std::snprintf(decay, sizeof decay, "falls to a hundredth only after %.0f steps",
                  std::ceil(to_hundredth));
  char text[700];
  std::snprintf(text, sizeof text,
                "crank-nicolson at dt = %.6g, %.3g times the explicit limit %.6g, multiplies the "
                "stiffest mode by %.6f per step: it flips sign every step and %s, so a heated "
                "node, a sharp initial edge or a sudden boundary change rings; use bdf2 (second "
                "order, damps it) or backward-euler, or a dt of at most %.6g (%g explicit limits, "
                "factor %g)",
                dt, dt / dt_limit, dt_limit, factor, decay, r_max * dt_limit, r_max,
                kRingingFactor);
  return text;
}

std::shared_ptr<const kernels::CoefficientFields> uniform_fields(std::int64_t points, double alpha,
                                                                 double source) {
  auto f = std::make_shared<kernels::CoefficientFields>();
  const auto n = static_cast<std::size_t>(points);
  kernels::CoefficientFields::Source s;
  s.schedule.value = 1.0;
  // A vector's pages are first touched by the thread that fills it, at a few GB/s: on a large
  // grid each array fills on a thread of its own (256^3: 0.15 s of 400 MB on one thread).
  std::vector<std::function<void()>> fills{[&] { f->conductivity.assign(n, alpha); },
                                           [&] { f->capacity.assign(n, 1.0); }};
  if (source != 0.0) fills.push_back([&] { s.density.assign(n, source); });
  constexpr std::size_t kThreadedPoints = std::size_t{1} << 20;
  if (n < kThreadedPoints) {
    for (const auto& fill : fills) fill();
  } else {
    std::vector<std::exception_ptr> failed(fills.size());
    const auto run = [&](std::size_t i) {
      try {
        fills[i]();
      } catch (...) {
        failed[i] = std::current_exception();
      }
    };
    std::vector<std::thread> threads;
    for (std::size_t i = 1; i < fills.size(); ++i) threads.emplace_back(run, i);
    run(0);
    for (std::thread& t : threads) t.join();
    for (const std::exception_ptr& e : failed)
      if (e) std::rethrow_exception(e);
  }
  if (source != 0.0) f->sources.push_back(std::move(s));
  return f;
}

namespace {

// alpha and beta of the level operator alpha * wC + beta * A for the method.
std::pair<double, double> scalars(TimeMethod m, double dt) {
  switch (m) {
    case TimeMethod::backward_euler:
      return {1.0 / dt, 1.0};
    case TimeMethod::crank_nicolson:
      return {1.0 / dt, 0.5};
    case TimeMethod::bdf2:
      return {1.5 / dt, 1.0};
    case TimeMethod::steady:
      return {0.0, 1.0};
    case TimeMethod::explicit_euler:
      break;
  }
  throw std::invalid_argument("the explicit method takes no implicit solve");
}

}  // namespace

ImplicitStepper::HostSetup ImplicitStepper::prepare(
    const kernels::StencilProblem& problem,
    std::shared_ptr<const kernels::CoefficientFields> fields, TimeMethod method, double dt,
    bool coarse_levels) {
  PhaseClock clock;
  const bool nonlinear = fields && is_nonlinear(problem, *fields);
  HeatFlowOperator flow(problem, fields);
  if (method != TimeMethod::steady && !(dt > 0.0 && std::isfinite(dt)))
    throw std::invalid_argument(std::string(to_string(method)) + " needs a time step dt > 0");
  // A radiating face or surface anchors the temperature too: its linearisation (linearize.hpp)
  // puts 4 eps sigma u^3 on the diagonal of every outer iteration's operator.
  if (method == TimeMethod::steady && flow.floating() && !radiates(problem, fields.get()))
    throw std::invalid_argument(
        "steady: the problem has no steady state to solve for: no face is Dirichlet, "
        "convective or radiating, so the temperature is fixed only up to a constant (and a "
        "steady state exists only if the sources and boundary fluxes balance exactly); make a "
        "face dirichlet, convective or radiative, or run the transient with backward-euler");
  if (nonlinear && method == TimeMethod::crank_nicolson)
    throw std::invalid_argument(
        "crank-nicolson: temperature-dependent materials and radiating faces take "
        "backward-euler, bdf2 or steady (or the explicit method)");
  std::vector<SetupPhase> phases;
  phases.push_back({"heat-flow operator", clock.lap()});
  // A steady solve builds its levels once: the operator's arrays become the finest level's.
  // So do a nonlinear step's, whose outer iterations linearise the operator anew and never
  // ask this one for a level again.
  const auto [alpha, beta] = scalars(method, dt);
  LevelOperator finest = method == TimeMethod::steady && !nonlinear ? flow.take_steady_level()
                         : nonlinear                                ? flow.take_level(alpha, beta)
                                                                    : flow.level(alpha, beta);
  phases.push_back({"finest level", clock.lap()});
  std::vector<LevelOperator> levels;
  levels.push_back(std::move(finest));
  HostSetup setup{problem,         std::move(fields), method,           dt, nonlinear,
                  std::move(flow), std::move(levels), std::move(phases)};
  setup.coarse_levels_built = false;
  if (coarse_levels) setup.build_coarse_levels();
  return setup;
}

void ImplicitStepper::HostSetup::build_coarse_levels() {
  if (coarse_levels_built) return;
  std::vector<SetupTime> times;
  LevelOperator finest = std::move(levels.at(0));
  levels = build_hierarchy(std::move(finest), 0, &times);
  for (std::size_t l = 0; l < times.size(); ++l)
    phases.push_back({"level " + std::to_string(l + 1), times[l], true});
  coarse_levels_built = true;
}

bool ImplicitStepper::HostSetup::release_fields() {
  if (method != TimeMethod::steady || nonlinear) return false;
  flow.release_fields();
  fields.reset();
  problem.coefficients.reset();
  return true;
}

ImplicitStepper::ImplicitStepper(const kernels::StencilProblem& problem,
                                 std::shared_ptr<const kernels::CoefficientFields> fields,
                                 TimeMethod method, double dt,
                                 std::unique_ptr<kernels::LevelOps> ops, SolveOptions options)
    : ImplicitStepper(prepare(problem, std::move(fields), method, dt), std::move(ops),
                      std::move(options)) {}

ImplicitStepper::ImplicitStepper(HostSetup setup, std::unique_ptr<kernels::LevelOps> ops,
                                 SolveOptions options)
    : setup_phases_(std::move(setup.phases)),
      built_levels_(std::move(setup.levels)),
      method_(setup.method),
      dt_(setup.dt),
      problem_(std::move(setup.problem)),
      base_fields_(std::move(setup.fields)),
      nonlinear_(setup.nonlinear),
      flow_(std::move(setup.flow)),
      ops_(std::move(ops)),
      options_(std::move(options)) {
  build_levels(method_);
  // The loads' parts, uploaded once; each step combines them with its times' factors. A
  // nonlinear step assembles its load on the host from each outer iteration's operator
  // (advance_nonlinear) and keeps only BDF2's field of step - 1 here.
  if (method_ != TimeMethod::steady && !nonlinear_) {
    std::vector<double> wc = flow_.weighted_capacity();
    const std::vector<std::uint8_t>& fixed = flow_.fixed();
    for (std::size_t i = 0; i < wc.size(); ++i)
      if (fixed[i]) wc[i] = 0.0;
    capacity_ = ops_->create_vector(0);
    ops_->upload(capacity_, wc);
    saved_ = ops_->create_vector(0);
  }
  if (method_ == TimeMethod::bdf2) previous_ = ops_->create_vector(0);
  // A linear steady solve assembles its load once an advance: where the level operations keep
  // their vectors in host memory, its sources' weighted densities are written into the
  // multigrid's scratch vector then, not kept in vectors of their own (8 bytes a node each,
  // beside the levels through the solve). On a device they are uploaded here, once: written
  // at the load's assembly, each would be a host-to-device copy of the grid inside the solve's
  // time (steady Heat-3D at 256^3 on an H200: the time loop 0.045 -> 0.083 s).
  const bool keep_sources =
      !nonlinear_ && (method_ != TimeMethod::steady || !ops_->host_values(mg_->scratch()));
  for (std::size_t s = 0; s < flow_.sources(); ++s) {
    int v = -1;
    if (keep_sources) {
      v = ops_->create_vector(0);
      write_source(s, v);
    }
    sources_.push_back({v, flow_.source_schedule(s)});
  }
  for (const HeatFlowOperator::FacePart& part : flow_.face_parts()) {
    const auto any = [](const std::vector<double>& v) {
      for (double x : v)
        if (x != 0.0) return true;
      return false;
    };
    faces_.push_back(
        {part.face, any(part.constant) ? ops_->create_sparse(part.nodes, part.constant) : -1,
         any(part.ambient_weight) ? ops_->create_sparse(part.nodes, part.ambient_weight) : -1});
  }
  for (const auto& [face, nodes] : flow_.dirichlet_faces())
    dirichlet_.emplace_back(face,
                            ops_->create_sparse(nodes, std::vector<double>(nodes.size(), 1.0)));
  end_phase("loads");
}

void ImplicitStepper::write_source(std::size_t s, int v) {
  if (double* values = ops_->host_values(v)) {
    // In place: no second array of the grid's size beside the levels' (the set-up's peak).
    flow_.weighted_source(s, values);
    return;
  }
  kernels::LevelWeights weighted(static_cast<std::size_t>(flow_.points()));
  flow_.weighted_source(s, weighted.data());
  ops_->upload_from(v, weighted.data(), weighted.size());
}

void ImplicitStepper::end_phase(std::string name, bool hierarchy) {
  setup_phases_.push_back({std::move(name), phase_clock_.lap(), hierarchy});
}

SetupTime ImplicitStepper::hierarchy_setup() const {
  SetupTime sum;
  for (const SetupPhase& p : setup_phases_)
    if (p.hierarchy) {
      sum.seconds += p.time.seconds;
      sum.cpu_seconds += p.time.cpu_seconds;
    }
  return sum;
}

void ImplicitStepper::build_levels(TimeMethod m) {
  if (mg_) {
    // The hierarchy in use goes before the next is built, so that the two never lie side by
    // side (BDF2's first step: a backward Euler hierarchy, then BDF2's again).
    const auto [alpha, beta] = scalars(m, dt_);
    mg_->release_levels();
    mg_->replace_levels(build_hierarchy(flow_.level(alpha, beta)));
    return;
  }
  // The first time: the levels prepare() built (of the method's operator).
  mg_ = std::make_unique<Multigrid>(*ops_, std::move(built_levels_));
  built_levels_ = {};
  end_phase("level operations and multigrid vectors", true);
}

void ImplicitStepper::set_field(const std::vector<double>& u) { set_field(u.data(), u.size()); }

void ImplicitStepper::set_field(const double* u, std::size_t count) {
  if (count != static_cast<std::size_t>(flow_.points()))
    throw std::invalid_argument("implicit step: the field has the wrong number of values");
  ++field_version_;
  if (!ops_) {
    released_field_.assign(u, u + count);
    return;
  }
  ops_->upload_from(mg_->solution(), u, count);
}

double* ImplicitStepper::field_values() {
  ++field_version_;
  return ops_ ? ops_->host_values(mg_->solution()) : released_field_.data();
}

void ImplicitStepper::field(std::vector<double>& u) {
  if (!ops_) {
    u.assign(released_field_.begin(), released_field_.end());
    return;
  }
  ops_->download(mg_->solution(), u);
}

void ImplicitStepper::field_to(double* u, std::size_t count) {
  if (!ops_) {
    kernels::LevelOps::check_download(released_field_.size(), count);
    std::copy(released_field_.begin(), released_field_.end(), u);
    return;
  }
  ops_->download_to(mg_->solution(), u, count);
}

void ImplicitStepper::release_levels() {
  if (!ops_) return;
  ops_->take_vector(mg_->solution(), released_field_);
  released_levels_ = mg_->levels();
  released_pieces_ = mg_->deflation_found() ? mg_->deflated_pieces() : 0;
  sources_.clear();
  faces_.clear();
  dirichlet_.clear();
  capacity_ = saved_ = previous_ = -1;
  previous_step_ = -1;
  mg_.reset();
  ops_.reset();
}

std::optional<std::vector<double>> ImplicitStepper::previous_field(std::int64_t step) {
  if (method_ != TimeMethod::bdf2 || previous_step_ < 0 || previous_step_ != step - 1)
    return std::nullopt;
  std::vector<double> u;
  ops_->download(previous_, u);
  return u;
}

void ImplicitStepper::set_previous_field(std::int64_t step, const std::vector<double>& u) {
  if (method_ != TimeMethod::bdf2) return;
  if (u.size() != static_cast<std::size_t>(flow_.points()))
    throw std::invalid_argument("bdf2: the previous field has the wrong number of values");
  ops_->upload(previous_, u);
  previous_step_ = step - 1;
}

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace

void ImplicitStepper::assemble_load(double t, double scale, bool add, std::int64_t step, bool bdf2,
                                    bool faces) {
  const int rhs = mg_->rhs();
  if (!add) ops_->zero_free(0, rhs);  // the fixed nodes' entries are 0 already
  for (std::size_t k = 0; k < sources_.size(); ++k) {
    const Source& s = sources_[k];
    const double factor =
        step >= 0 ? implicit_source_factor(s.schedule, step, dt_, bdf2) : s.schedule.at(t);
    if (factor == 0.0) continue;
    int v = s.vector;
    if (v < 0) {  // not kept: written now (rhs is not the scratch vector)
      v = mg_->scratch();
      write_source(k, v);
    }
    ops_->axpby(scale * factor, v, 1.0, rhs);
  }
  if (faces) add_face_loads(t, scale);
}

void ImplicitStepper::add_face_loads(double t, double scale) {
  const int rhs = mg_->rhs();
  for (const Face& f : faces_) {
    if (f.constant >= 0) ops_->scatter(scale, f.constant, rhs, false);
    if (f.ambient >= 0) ops_->scatter(scale * flow_.face(f.face).at(t), f.ambient, rhs, false);
  }
}

void ImplicitStepper::set_fixed(double t) {
  for (const auto& [face, nodes] : dirichlet_)
    ops_->scatter(flow_.face(face).at(t), nodes, mg_->solution(), true);
}

SolveReport ImplicitStepper::advance(std::vector<double>& u, std::int64_t step) {
  set_field(u);
  const SolveReport report = advance(step);
  field(u);
  return report;
}

// The lowest temperature a radiating steady solve starts from (see advance_nonlinear).
constexpr double kLeastRadiatingStart = 1.0;
// The largest rise of a node's temperature in one outer iteration of a radiating steady solve
// from below 100 K (above: doubling).
constexpr double kSteadyRadiationRise = 100.0;
// From outer iteration kRelaxFrom on (a step that converges does so in fewer: its first
// iterations may grow as a melting front or a conductivity's kink is entered), one whose change
// is at least kRelaxWhenShrunkLessThan of the one before halves the relaxation of the next
// (ImplicitStepper::advance_nonlinear), down to kLeastRelaxation, and one that shrinks it more
// raises it by half again, up to the full update (Newton's own convergence once past the kink).
constexpr int kRelaxFrom = 4;
// A steady iteration whose conductivities vary takes Newton's steps from the first outer
// iteration whose change is above this share of the one before (advance_nonlinear).
constexpr double kNewtonWhenShrunkLessThan = 0.1;
constexpr double kRelaxWhenShrunkLessThan = 0.9;
constexpr double kLeastRelaxation = 1.0 / 64;
// A steady nonlinear iteration at its limit goes on while it contracts (see advance_nonlinear).
constexpr int kSteadyContracting = 5;
constexpr double kContraction = 0.95;
constexpr int kSteadyOuterLimits = 10;
// A transient step that does not converge whole is taken in parts, halved where they do not
// converge, down to 1 / kMostStepParts of the step (a power of 2).
constexpr int kMostStepParts = 256;
// A nonlinear solve's outer iteration keeps the coarse levels of the last hierarchy while its
// solve takes at most this many iterations more than the one on that hierarchy's own operator.
constexpr int kKeptCoarseSlack = 2;
// ... and the outer iteration before it changed no node by more than this share of the largest
// temperature (the first iterations from a far start change the operator too much). A
// transient step's first iteration moves the field by the step's own change (some 10 K of
// 300 in a heated block), after which a hierarchy built for that iterate is barely a better
// preconditioner than the one before: at 1% of the scale every such step built two (the 97^3
// wax block, docs/performance.md), at 10% one, with 2% more PCG iterations.
constexpr double kKeptCoarseChange = 0.1;
// A solve on kept coarse levels stops after this many iterations more than twice the last
// built hierarchy's, and is taken again on a new one: a preconditioner that has drifted too far
// costs at most that many iterations.
constexpr int kKeptCoarseExtra = 10;

// HEATSIM_KEEP_COARSE_LEVELS=0 builds every outer iteration's hierarchy (for measurements).
bool keep_coarse_levels() {
  static const bool keep = [] {
    const char* v = std::getenv("HEATSIM_KEEP_COARSE_LEVELS");
    return !(v && std::string(v) == "0");
  }();
  return keep;
}

namespace {

// Newton's form of a steady outer iteration where conductivities vary with temperature (see
// advance_nonlinear). On entry `level` is the operator A linearised about u (Picard's:
// conductances K_ij(u), the faces' and radiation's node terms) and rhs its load b; on return
// rhs is the residual r = b - A u (0 on the fixed nodes), s the node scales and `level` the
// operator J' of the Jacobian J = J' diag(s), which the solve inverts for w = s du.
//
// A face between two nodes of one law conducts F = K_ref (R(u_i) - R(u_j)), R the Kirchhoff
// transform of the law's ratio r: its slopes are K_ref r(u_i) and K_ref r(u_j), so with
// s_i = r(u_i) sigma_g (g the node's law, or the constant materials together, sigma_g one
// number per group) J' takes K_ref / sigma_g there: symmetric, as the multigrid needs, and
// exact. A face between two groups has slopes d F / d u_i and -d F / d u_j (central
// differences of TemperatureDependence::face) whose ratios to s_i and s_j agree only where
// sigma_A / sigma_B matches the two laws' ratios where they meet; the sigmas are chosen so by
// least squares over all such faces (log sigma, a system of the groups' size), and J' takes
// the mean of the two there: the step is exact Newton inside each group and nearly so across
// its interfaces. The node terms (convection, radiation's 4 eps sigma u^3) are divided by s_i.
void newton_form(const kernels::CoefficientFields& base, const kernels::CoefficientFields& at_u,
                 const std::vector<double>& u, LevelOperator& level, std::vector<double>& rhs,
                 std::vector<double>& s) {
  const kernels::TemperatureDependence& laws = *base.temperature;
  const std::int64_t points = level.points();
  const auto& n = level.n;
  const std::int64_t strides[3] = {1, n[0], n[0] * n[1]};
  const auto coordinate = [&](int a, std::int64_t i) { return (i / strides[a]) % n[a]; };
  // The neighbour of node i across its upper / lower face along axis a, or -1.
  const auto upper = [&](int a, std::int64_t i) -> std::int64_t {
    if (coordinate(a, i) < n[a] - 1) return i + strides[a];
    return level.periodic[a] && n[a] > 1 ? i - (n[a] - 1) * strides[a] : -1;
  };
  const auto lower = [&](int a, std::int64_t i) -> std::int64_t {
    if (coordinate(a, i) > 0) return i - strides[a];
    return level.periodic[a] && n[a] > 1 ? i + (n[a] - 1) * strides[a] : -1;
  };
  // The residual, and each node's ratio r(u_i) in s for now.
  s.assign(static_cast<std::size_t>(points), 1.0);
  kernels::for_each_index(0, points, kernels::worth_threads(points), [&](std::int64_t i) {
    if (level.fixed[i]) {
      rhs[i] = 0.0;
      return;
    }
    double au = level.node_term[i] * u[i];
    for (int a = 0; a < level.dims; ++a) {
      const std::int64_t up = upper(a, i), down = lower(a, i);
      if (up >= 0) au += level.conductance[a][i] * (u[i] - u[up]);
      if (down >= 0) au += level.conductance[a][down] * (u[i] - u[down]);
    }
    rhs[i] -= au;
    s[i] = laws.conductivity_ratio(i, u[i]);
  });
  // A face between two groups: its slopes over the nodes' ratios, (d F / d u_i) / r_i and
  // (-d F / d u_j) / r_j, or false where it conducts nothing.
  const int groups = static_cast<int>(laws.laws.size()) + 1;
  const auto group = [&](std::int64_t i) { return laws.law[static_cast<std::size_t>(i)] + 1; };
  const auto slopes = [&](int a, std::int64_t i, std::int64_t j, double& mi, double& mj) {
    const double reference = base.faces[a][i];
    const double ui = u[i], uj = u[j];
    const double e = 1e-6 * std::max({1.0, std::abs(ui), std::abs(uj)});
    const auto flow = [&](double x, double y) {
      return laws.face(a, i, j, reference, x, y) * (x - y);
    };
    mi = (flow(ui + e, uj) - flow(ui - e, uj)) / (2.0 * e) / laws.conductivity_ratio(i, ui);
    mj = (flow(ui, uj - e) - flow(ui, uj + e)) / (2.0 * e) / laws.conductivity_ratio(j, uj);
    return mi > 0.0 && mj > 0.0 && std::isfinite(mi) && std::isfinite(mj);
  };
  const auto interface = [&](int a, std::int64_t i, std::int64_t& j) {
    j = upper(a, i);
    return j >= 0 && level.conductance[a][i] != 0.0 && at_u.faces[a][i] > 0.0 &&
           group(i) != group(j);
  };
  // log sigma by least squares: sum over the interfaces of (x_A - x_B - log(mi / mj))^2, each
  // face weighing alike, with a small pull of every x to 0 (a group that meets no other keeps
  // sigma = 1; the groups that meet are fixed up to a constant, which the pull sets).
  // The loads are sums of logarithms: summed per chunk of nodes (chunks fixed by the grid, not
  // by the threads), then the chunks in order, so that the result is the same on any number
  // of threads (and so under mpirun, whose ranks run one thread each by default). The normal
  // matrix counts faces: whole numbers, exact in any order.
  std::vector<double> normal(static_cast<std::size_t>(groups * groups), 0.0),
      load(static_cast<std::size_t>(groups), 0.0);
  const std::int64_t chunks = std::min<std::int64_t>(256, std::max<std::int64_t>(1, points));
  std::vector<double> chunk_load(static_cast<std::size_t>(chunks * groups), 0.0);
  bool any = false;
#pragma omp parallel if (kernels::worth_threads(points))
  {
    std::vector<double> nt(normal.size(), 0.0);
    bool found = false;
#pragma omp for schedule(static)
    for (std::int64_t k = 0; k < chunks; ++k) {
      double* lt = chunk_load.data() + k * groups;
      for (std::int64_t i = k * points / chunks; i < (k + 1) * points / chunks; ++i)
        for (int a = 0; a < level.dims; ++a) {
          std::int64_t j;
          double mi, mj;
          if (!interface(a, i, j) || !slopes(a, i, j, mi, mj)) continue;
          const int A = group(i), B = group(j);
          const double lambda = std::log(mi / mj);
          nt[A * groups + A] += 1.0;
          nt[B * groups + B] += 1.0;
          nt[A * groups + B] -= 1.0;
          nt[B * groups + A] -= 1.0;
          lt[A] += lambda;
          lt[B] -= lambda;
          found = true;
        }
    }
#pragma omp critical
    {
      for (std::size_t k = 0; k < normal.size(); ++k) normal[k] += nt[k];
      any = any || found;
    }
  }
  for (std::int64_t k = 0; k < chunks; ++k)
    for (int g = 0; g < groups; ++g)
      load[static_cast<std::size_t>(g)] += chunk_load[k * groups + g];
  std::vector<double> sigma(static_cast<std::size_t>(groups), 1.0);
  if (any) {
    // Gaussian elimination (symmetric positive definite with the pull; a few groups).
    double largest = 0.0;
    for (int g = 0; g < groups; ++g) largest = std::max(largest, normal[g * groups + g]);
    for (int g = 0; g < groups; ++g) normal[g * groups + g] += 1e-9 * largest + 1e-300;
    for (int c = 0; c < groups; ++c)
      for (int r = c + 1; r < groups; ++r) {
        const double f = normal[r * groups + c] / normal[c * groups + c];
        if (f == 0.0) continue;
        for (int k = c; k < groups; ++k) normal[r * groups + k] -= f * normal[c * groups + k];
        load[r] -= f * load[c];
      }
    for (int r = groups - 1; r >= 0; --r) {
      double x = load[r];
      for (int k = r + 1; k < groups; ++k) x -= normal[r * groups + k] * std::log(sigma[k]);
      sigma[r] = std::exp(x / normal[r * groups + r]);
    }
  }
  for (std::int64_t i = 0; i < points; ++i) s[i] *= sigma[group(i)];
  kernels::for_each_index(0, points, kernels::worth_threads(points), [&](std::int64_t i) {
    if (!level.fixed[i]) level.node_term[i] /= s[i];
    for (int a = 0; a < level.dims; ++a) {
      std::int64_t j;
      double& g = level.conductance[a][i];
      const double k = at_u.faces[a][i];
      if (interface(a, i, j)) {
        double mi, mj;
        if (slopes(a, i, j, mi, mj)) g *= 0.5 * (mi / sigma[group(i)] + mj / sigma[group(j)]) / k;
      } else if (j >= 0 && g != 0.0 && k > 0.0) {
        // One group: K_ref / sigma (K_ref itself between constant materials).
        g *= base.faces[a][i] / k / sigma[group(i)];
      }
    }
  });
}

}  // namespace

SolveReport ImplicitStepper::advance_nonlinear(std::int64_t step) {
  const bool steady = method_ == TimeMethod::steady;
  const bool radiating_steady = steady && radiates(problem_, base_fields_.get());
  const double t = static_cast<double>(steady ? step : step + 1) * dt_;
  // BDF2 without the field of step - 1 starts with a backward Euler step.
  const bool bdf2 =
      method_ == TimeMethod::bdf2 && previous_step_ >= 0 && previous_step_ == step - 1;
  const auto [alpha, beta] =
      scalars(method_ == TimeMethod::bdf2 && !bdf2 ? TimeMethod::backward_euler : method_, dt_);
  const kernels::TemperatureDependence* laws = base_fields_->temperature.get();
  // The law of node i when its capacity varies, else null.
  const auto varying = [&](std::size_t i) -> const kernels::TemperatureLaw* {
    if (!laws || laws->law[i] < 0) return nullptr;
    const kernels::TemperatureLaw& law = laws->laws[static_cast<std::size_t>(laws->law[i])];
    return law.varying_capacity() ? &law : nullptr;
  };
  // A steady solve whose conductivities vary may take Newton's steps (newton_form): exact
  // inside each material, where Picard's (the conductances at the last iterate) contract only
  // by the conductivity's relative change over the field, and drift away from the answer where
  // it falls steeply (k from 100 to 1 W/(m K) over 300-1000 K rose from the exact field).
  // Across an interface between materials Newton's slopes are symmetrised, which leaves a
  // linear contraction of its own (a few 1e-3 an iteration in the power module, where
  // Picard's contracts by 1e-3): so the iteration starts as Picard's and takes Newton's steps
  // from the first outer iteration that did not shrink the change below kNewtonWhenShrunkLess
  // Than of the one before. A problem whose temperatures only the loads' balance fixes (no
  // Dirichlet node, no convective or radiating face) keeps Picard's: Newton's correction there
  // is fixed up to a constant of w, not of the field. A Newton iteration that does not converge
  // is taken again from the start by Picard's alone.
  bool newton = false;
  if (options_.newton && steady && laws && (!flow_.floating() || radiating_steady))
    for (const kernels::TemperatureLaw& law : laws->laws)
      newton = newton || law.varying_conductivity();
  bool stepping = false;  // the outer iterations now take Newton's steps
  std::vector<double> scaling;
  std::vector<double> u0, u, rhs;
  field(u0);
  u = u0;
  // A steady solve that radiates starts no lower than its radiating ambients, nor below
  // kLeastRadiatingStart: at 0 K radiation's slope 4 eps sigma u^3 is 0, and a body cooled by
  // radiation alone had an operator with nothing to fix its level (a box in space from the
  // default initial 0 K stalled or diverged at the first outer iteration, by grid size). The
  // steady answer does not depend on the start, and Newton on u^4 from above converges without
  // the overshoot it has from below. The Dirichlet nodes take their values after.
  if (radiating_steady) {
    double least = kLeastRadiatingStart;
    for (int f = 0; f < 2 * problem_.dims; ++f)
      if (problem_.faces[f].radiates()) least = std::max(least, problem_.faces[f].schedule().at(t));
    for (const auto& group : base_fields_->radiation) least = std::max(least, group.ambient.at(t));
    for (double& v : u) v = std::max(v, least);
  }
  flow_.set_fixed(t, u);
  // Backward Euler is Newton on the enthalpy h (Nedjar's form, which a melting range does not
  // throw into cycles as Newton on u does): linearised about u_k = T(h_k) with the tangent
  // capacity c_k, the solve gives v, and h_k+1 = h_k + c_k (v - u_k), u_k+1 = T(h_k+1). At a
  // fixed point C_ref (h - h0) / dt = -A u + load: the heat content changes by what flows in.
  //
  // BDF2, C_ref (3 h - 4 h_n + h_{n-1}) / (2 dt), is backward Euler's form at alpha = 3 / (2 dt)
  // about the history (4 h_n - h_{n-1}) / 3 in place of h0 (and (4 u_n - u_{n-1}) / 3 in place
  // of u0 where the capacity is constant, where h is u).
  //
  // The enthalpies are read only at nodes whose capacity varies (varying(), never in a steady
  // solve): without temperature laws, or steady, none are kept (8 bytes a node each beside the
  // levels at every outer iteration's rebuild).
  const bool enthalpy = !steady && laws;
  std::vector<double> h0, h, bdf2_history;
  if (enthalpy) h0 = enthalpies(*base_fields_, u0);
  if (bdf2) {
    std::vector<double> before;
    ops_->download(previous_, before);
    if (enthalpy) {
      const std::vector<double> h_before = enthalpies(*base_fields_, before);
      for (std::size_t i = 0; i < u0.size(); ++i) h0[i] = (4.0 * h0[i] - h_before[i]) / 3.0;
    }
    bdf2_history.resize(u0.size());
    for (std::size_t i = 0; i < u0.size(); ++i) bdf2_history[i] = (4.0 * u0[i] - before[i]) / 3.0;
  }
  const std::vector<double>& history = bdf2 ? bdf2_history : u0;
  if (enthalpy) h = enthalpies(*base_fields_, u);
  SolveReport report;
  double change = 0.0;
  // One nonlinear solve to span.t from u (its Dirichlet nodes at span.t) and h: the whole step
  // (span.whole: its own load and history), or a backward-Euler part of it from span.t0 about
  // span's start. Whether it converged; u and h then hold its answer, and `projected` whether
  // u (rather than the solve's result on the level operations) is the answer.
  struct Span {
    double t0, t, alpha, beta;
    bool whole;
    const std::vector<double>* history;
    const std::vector<double>* h0;
  };
  bool projected = false;
  // The field's largest |u| after the last outer iteration, and whether it rose in it (a
  // failure's message says "still rises" only then).
  double last_scale = 0.0;
  bool scale_rising = false;
  std::vector<std::uint8_t> fixed;
  int outer_done = 0;  // the outer iterations of the last span (its failure says how many)
  const auto iterate = [&](const Span& span) {
    const std::vector<double>& start = *span.history;
    // The outer iterations' relaxation: 1 (the full update) until iterations stop shrinking the
    // change, as where a node's melting and its conductivity's fall chase each other over a
    // large step and the iterates cycle between two states; then halved (kRelaxFrom), so that
    // the cycle closes on the fixed point between them. Convergence is judged on the full
    // update's change, so a relaxed iteration does not end the step early.
    double relaxation = 1.0, last_change = std::numeric_limits<double>::infinity();
    // From the second outer iteration on, the coarse levels built for an earlier iterate's
    // operator are kept and only the finest level is replaced (a hierarchy for a nearby
    // operator, as a preconditioner): while a solve on them takes at most kKeptCoarseSlack
    // iterations more than the last one on a hierarchy built for its own operator and the
    // iteration before moved the field by at most kKeptCoarseChange of its scale; one that
    // does not converge on them within kKeptCoarseExtra iterations more than twice the built
    // hierarchy's is solved again on a new hierarchy. Decided within the span, so a step is
    // taken the same way whenever it is taken.
    int built_iterations = 0;
    bool keep_coarse = false;
    // A steady iteration still contracting at its limit (the last kSteadyContracting changes
    // each smaller than the one before, and the last at most kContraction of the change
    // kSteadyContracting iterations before it) goes on, up to kSteadyOuterLimits limits: a
    // k(T) wall whose changes fell by 0.78 an iteration was refused at 3.8e-5 K, 25 iterations
    // short, and told to start nearer the answer, which did worse; a steep table (k 1 -> 1000
    // over 2 K) whose changes fell by 0.985 an iteration, under-relaxed, was refused while each
    // change was below the one before.
    int limit = options_.max_outer_iterations, contracting = 0;
    std::vector<double> recent;  // the last kSteadyContracting + 1 changes, oldest first
    for (int outer = 1; outer <= limit; ++outer) {
      outer_done = outer;
      keep_coarse = keep_coarse && keep_coarse_levels() && mg_->replaces_finest();
      for (;;) {
        // The last hierarchy (the set-up's at the first outer iteration), or its finest level,
        // goes before the next is built, and the operator linearised about u once its level
        // and load are taken: a rebuild holds one hierarchy and one operator at a time, not
        // two of each.
        if (keep_coarse)
          mg_->release_finest();
        else
          mg_->release_levels();
        LevelOperator finest;
        {
          const std::shared_ptr<const kernels::CoefficientFields> at_u =
              linearize(problem_, *base_fields_, u, span.t);
          HeatFlowOperator linear(problem_, at_u);
          rhs.assign(u.size(), 0.0);
          if (steady)
            linear.add_load(span.t, rhs);
          else if (span.whole)
            linear.add_load(span.t, rhs, step, dt_, bdf2);
          else
            linear.add_load_between(span.t0, span.t, rhs);
          fixed = linear.fixed();
          if (!steady) {
            const std::vector<double>& h_start = *span.h0;
            const std::vector<double> wc = linear.weighted_capacity();
            const std::int64_t points = static_cast<std::int64_t>(u.size());
            kernels::for_each_index(0, points, kernels::worth_threads(points), [&](std::int64_t i) {
              if (fixed[i]) return;
              const kernels::TemperatureLaw* law = varying(i);
              rhs[i] += span.alpha * wc[i] *
                        (law ? u[i] + (h_start[i] - h[i]) / law->capacity_ratio(u[i]) : start[i]);
            });
          }
          finest = linear.take_level(span.alpha, span.beta);
          if (stepping) newton_form(*base_fields_, *at_u, u, finest, rhs, scaling);
        }
        if (keep_coarse && !finest.stencil_form()) {
          mg_->replace_finest(std::move(finest));
        } else {
          keep_coarse = false;
          mg_->replace_levels(build_hierarchy(std::move(finest)));
          ++timing_.hierarchies_built;
        }
        ops_->upload(mg_->rhs(), rhs);
        if (stepping)
          ops_->upload(mg_->solution(), std::vector<double>(u.size(), 0.0));
        else
          ops_->upload(mg_->solution(), u);
        const Clock::time_point clock = Clock::now();
        SolveOptions solve_options = options_;
        // At least one iteration: a solve started below its tolerance would move the field by
        // 0, and the outer iteration read that as converged with the field still off by what
        // the tolerance lets through (a 1001-node k(T) wall: 2e-5 K against the 9e-8 K claimed).
        solve_options.min_iterations = 1;
        if (keep_coarse)
          solve_options.max_iterations =
              std::min(options_.max_iterations, 2 * built_iterations + kKeptCoarseExtra);
        report = mg_->solve(solve_options);
        timing_.last_solve_seconds = seconds_since(clock);
        timing_.solve_seconds += timing_.last_solve_seconds;
        ++timing_.solves;
        timing_.iterations += report.iterations;
        if (report.reason == SolveReport::Reason::converged || !keep_coarse) break;
        keep_coarse = false;
      }
      ++timing_.outer_iterations;
      if (!keep_coarse) built_iterations = report.iterations;
      keep_coarse = report.iterations <= built_iterations + kKeptCoarseSlack;
      if (report.reason != SolveReport::Reason::converged) {
        ops_->upload(mg_->solution(), u0);
        throw SolveFailure(std::string(to_string(method_)) + ": outer iteration " +
                               std::to_string(outer) + ": the multigrid solve " + report.describe(),
                           report);
      }
      std::vector<double>& v = rhs;  // rhs is spent: the solve's result takes its place
      field(v);
      if (stepping) {
        // The solve gave w = s * du: the field it asks for is u + w / s.
        const std::int64_t n = static_cast<std::int64_t>(u.size());
        kernels::for_each_index(0, n, kernels::worth_threads(n),
                                [&](std::int64_t i) { v[i] = u[i] + v[i] / scaling[i]; });
      }
      // Node by node on the threads: each node's update reads and writes only its own entries,
      // and the largest change and |u| (maxima) do not depend on the order.
      change = 0.0;
      double scale = 0.0;
      bool climbing = false, any_projected = false;
      const std::int64_t points = static_cast<std::int64_t>(u.size());
      // clang-format off
#pragma omp parallel for schedule(static) if (kernels::worth_threads(points)) \
    reduction(max : change, scale) reduction(|| : climbing, any_projected)
      // clang-format on
      for (std::int64_t i = 0; i < points; ++i) {
        double next = v[i];
        const kernels::TemperatureLaw* law = steady || fixed[i] ? nullptr : varying(i);
        if (law) {
          double dh = law->capacity_ratio(u[i]) * (v[i] - u[i]);
          // A node inside its melting range takes the range's apparent capacity, thousands of
          // times the sensible one in a narrow range: its step in h, taken on past the range's
          // end at that slope, lands far beyond (in a range of 0.01 K, 0.001 K too far is 10%
          // of the latent heat), and the next iteration's sensible slope sends it as far back.
          // A step that leaves the range goes to the solve's temperature v instead, with its
          // enthalpy h(v): the rest of the latent heat and the sensible heat beyond, no more.
          const bool melting = law->latent > 0.0 && u[i] > law->solidus && u[i] < law->liquidus;
          const bool leaves = melting && (h[i] + dh >= law->enthalpy(law->liquidus) ||
                                          h[i] + dh <= law->enthalpy(law->solidus));
          if (leaves) dh = law->enthalpy(v[i]) - h[i];
          next = leaves ? v[i] : law->temperature(h[i] + dh);
          change = std::max(change, std::abs(next - u[i]));
          if (relaxation < 1.0) {
            h[i] += relaxation * dh;
            next = law->temperature(h[i]);
          } else if (leaves) {
            h[i] = law->enthalpy(v[i]);
          } else {
            h[i] += dh;
          }
          any_projected = true;
        } else {
          // A steady solve that radiates, started far below the answer: Newton's slope of
          // eps sigma u^4 there is small and its step overshoots by orders of magnitude, after
          // which each step takes off only a quarter. A rise is held to doubling the node's
          // temperature (or 100 K), so the iterates climb to the answer's scale instead.
          if (radiating_steady) {
            const double held = std::min(next, u[i] + std::max(u[i], kSteadyRadiationRise));
            climbing = climbing || held < next;
            next = held;
          }
          change = std::max(change, std::abs(next - u[i]));
          if (relaxation < 1.0) next = u[i] + relaxation * (next - u[i]);
          if (enthalpy) h[i] = next;
        }
        scale = std::max(scale, std::abs(next));
        u[i] = next;
      }
      projected = any_projected;
      scale_rising = outer > 1 && scale > last_scale;
      last_scale = scale;
      // The next operator is near this one only where this iteration moved the field little.
      keep_coarse = keep_coarse && change <= kKeptCoarseChange * scale;
      if (options_.on_outer_iteration) options_.on_outer_iteration(outer, change, report);
      if (change <= options_.outer_tolerance * scale) return true;
      contracting = change < last_change ? contracting + 1 : 0;
      recent.push_back(change);
      if (static_cast<int>(recent.size()) > kSteadyContracting + 1) recent.erase(recent.begin());
      if (steady && outer == limit && contracting >= kSteadyContracting &&
          static_cast<int>(recent.size()) == kSteadyContracting + 1 &&
          change <= kContraction * recent.front() &&
          limit < kSteadyOuterLimits * options_.max_outer_iterations)
        limit += options_.max_outer_iterations;
      if (newton && !stepping && outer >= 2 && change > kNewtonWhenShrunkLessThan * last_change) {
        stepping = true;
        keep_coarse = false;  // a hierarchy for Newton's operator
        relaxation = 1.0;
      } else if (!climbing && outer >= kRelaxFrom) {
        if (change >= kRelaxWhenShrunkLessThan * last_change)
          relaxation = std::max(0.5 * relaxation, kLeastRelaxation);
        else
          relaxation = std::min(1.5 * relaxation, 1.0);
      }
      last_change = change;
    }
    return false;
  };
  bool converged = false;
  if (newton) {
    const std::vector<double> start = u;
    try {
      converged = iterate({t - dt_, t, alpha, beta, true, &history, &h0});
    } catch (const SolveFailure& e) {
      if (!stepping) throw;
      if (options_.on_note) options_.on_note(std::string("Newton's steps stopped: ") + e.what());
    }
    if (!converged && stepping) {
      if (options_.on_note)
        options_.on_note(
            "the steady iteration by Newton's steps did not converge; taken again from the "
            "start with the conductances at the last iterate (Picard's iteration)");
      newton = stepping = false;
      u = start;
      converged = iterate({t - dt_, t, alpha, beta, true, &history, &h0});
    }
  } else {
    converged = iterate({t - dt_, t, alpha, beta, true, &history, &h0});
  }
  // A transient step that does not converge is taken in backward-Euler parts, each from the one
  // before (a melting front crossing a narrow range, whose apparent capacity the outer
  // iterations cycle over at large steps): a part that does not converge is halved and taken
  // again from its start, one that does is followed by a part twice as long (to the step's
  // end), down to parts of dt / kMostStepParts. The parts' ends lie on multiples of that least
  // part, so a step is taken the same way whenever it is taken (a restart repeats it bit for
  // bit). BDF2's next step then reads this step's start and end as before.
  if (!converged && !steady) {
    const double t_start = t - dt_;
    const auto at = [&](int p) {
      return p == kMostStepParts ? t : t_start + dt_ * p / kMostStepParts;
    };
    u = u0;
    int p = 0, length = kMostStepParts / 2, shortest = length;
    converged = true;
    while (p < kMostStepParts) {
      const int p1 = std::min(p + length, kMostStepParts);
      const double t0 = at(p), t1 = at(p1);
      const std::vector<double> begin = u;
      std::vector<double> h_begin;
      if (enthalpy) h_begin = enthalpies(*base_fields_, begin);
      flow_.set_fixed(t1, u);
      if (enthalpy) h = enthalpies(*base_fields_, u);
      if (iterate({t0, t1, 1.0 / (t1 - t0), 1.0, false, &begin, &h_begin})) {
        // The part's answer is the next part's start: the solve's result where no node was
        // projected (u differs from it by the last relaxed update at most).
        if (!projected && p1 < kMostStepParts) field(u);
        shortest = std::min(shortest, p1 - p);
        length = 2 * (p1 - p);
        p = p1;
      } else if (p1 - p > 1) {
        u = begin;
        length = (p1 - p) / 2;
      } else {
        converged = false;
        break;
      }
    }
    if (converged) {
      ++timing_.split_steps;
      timing_.shortest_part =
          std::min(timing_.shortest_part, static_cast<double>(shortest) / kMostStepParts);
    }
  }
  if (converged) {
    if (projected || stepping) ops_->upload(mg_->solution(), u);
    if (round_to_fp32_) ops_->round_to_fp32(mg_->solution());
    if (method_ == TimeMethod::bdf2) {
      ops_->upload(previous_, u0);  // u_{n-1} of the next step
      previous_step_ = step;
    }
    return report;
  }
  ops_->upload(mg_->solution(), u0);
  // A melting range narrower than kNarrowMeltingRange is named beside dt: its apparent capacity
  // is the one that keeps such a step from converging (a wax slab melting over 0.01 K stops at
  // steps of 20-60 s, over 1 K it converges at steps of half an hour).
  constexpr double kNarrowMeltingRange = 0.5;
  const kernels::TemperatureLaw* narrowest = nullptr;
  if (laws && !steady)
    for (const kernels::TemperatureLaw& law : laws->laws)
      if (law.latent > 0.0 && law.liquidus - law.solidus < kNarrowMeltingRange &&
          (!narrowest || law.liquidus - law.solidus < narrowest->liquidus - narrowest->solidus))
        narrowest = &law;
  char range[200] = "";
  if (narrowest)
    std::snprintf(range, sizeof range,
                  ", or a wider melting range: one melts over %.3g K (%.12g to %.12g K), and a "
                  "range of 0.5-1 K converges at far larger steps",
                  narrowest->liquidus - narrowest->solidus, narrowest->solidus,
                  narrowest->liquidus);
  // A steady iteration that ends still climbing: the answer may lie far above the start (a
  // conductivity falling to almost nothing, or a source in the wrong units), which the field's
  // largest temperature then and now shows.
  char climb[640] = "";
  if (steady && !u.empty() && !u0.empty()) {
    const double top = *std::max_element(u.begin(), u.end());
    const double start = *std::max_element(u0.begin(), u0.end());
    const double bottom = *std::min_element(u.begin(), u.end());
    // A conductivity that falls steeply over the field's range (k at the top a small share of
    // k at the bottom) can make Picard's iteration drift even from its answer (a slab whose k
    // falls from 100 to 1 over 300-1000 K, started from the exact field, rose 280 K past it),
    // where backward Euler with large steps reaches it; Newton's steps, tried first, solve that
    // slab, but a table with a narrow spike (k 1 -> 1000 -> 1 over 2 K) leaves both cycling.
    double fall = 1.0;
    if (laws && std::isfinite(top) && std::isfinite(bottom))
      for (const kernels::TemperatureLaw& law : laws->laws)
        if (law.varying_conductivity())
          fall = std::min(fall, law.conductivity_ratio(top) / law.conductivity_ratio(bottom));
    if (std::isfinite(top) && top > start + change)
      std::snprintf(climb, sizeof climb,
                    "; the field's largest temperature rose from %.6g to %.6g K and %s: %s", start,
                    top,
                    scale_rising ? "still rises" : "the iterates move up and down without settling",
                    fall < 0.1 ? "a conductivity falls steeply over the field's range (at its "
                                 "top to a small share of its value at the bottom), which can "
                                 "keep the steady iteration from settling even near the answer: "
                                 "reach the steady state by a transient run (backward-euler with "
                                 "steps of the body's diffusion time, to a time.end of a few of "
                                 "them), or check the units of the sources and conductivities"
                               : "check the units of the sources and conductivities, or give an "
                                 "initial field near the answer, or run a transient "
                                 "(backward-euler) towards it");
  }
  char buffer[1300];
  std::snprintf(buffer, sizeof buffer,
                "%s: the nonlinear iteration did not converge in %d outer iterations%s (the "
                "last changed the field by %.3g K)%s%s%s",
                to_string(method_), steady ? outer_done : options_.max_outer_iterations,
                steady ? "" : ", nor with the step taken in parts down to 1/256 of it", change,
                climb,
                climb[0] ? ""
                : steady ? "; start it nearer the answer (an initial field near the temperatures "
                           "expected, in kelvin where faces radiate), or reach the steady state "
                           "by a transient run (time.method: bdf2 with steps of the body's "
                           "diffusion time, to a time.end of a few of them)"
                         : "; try a smaller dt",
                range);
  report.reason = SolveReport::Reason::max_iterations;
  throw SolveFailure(buffer, report);
}

SolveReport ImplicitStepper::advance(std::int64_t step) {
  ++field_version_;  // also when the solve throws: the field may have moved
  const Clock::time_point start = Clock::now();
  struct AddStepTime {  // also when the solve throws
    Timing& t;
    Clock::time_point start;
    ~AddStepTime() { t.step_seconds += seconds_since(start); }
  } add_step_time{timing_, start};
  if (!ops_) throw std::logic_error("implicit step: the levels were released");
  if (nonlinear_) return advance_nonlinear(step);
  const double t0 = static_cast<double>(step) * dt_;
  const double t1 = static_cast<double>(step + 1) * dt_;
  const int u = mg_->solution(), rhs = mg_->rhs();
  if (method_ == TimeMethod::steady) {
    assemble_load(t0, 1.0, false);
    const SolveReport report = solve(t0);
    if (round_to_fp32_) ops_->round_to_fp32(u);
    return report;
  }
  // BDF2 without the field of step - 1 starts with a backward Euler step.
  const bool bdf2_start =
      method_ == TimeMethod::bdf2 && (previous_step_ < 0 || previous_step_ != step - 1);
  ops_->axpby(1.0, u, 0.0, saved_);
  switch (bdf2_start ? TimeMethod::backward_euler : method_) {
    case TimeMethod::backward_euler:
      assemble_load(t1, 1.0, false, step);
      ops_->multiply_add(1.0 / dt_, capacity_, u, 1.0, rhs);
      break;
    case TimeMethod::crank_nicolson:
      // (wC/dt) u0 + (-A u0 + load(t0)) / 2 = 2 (wC/dt) u0 - M u0 + load(t0) / 2, with M =
      // wC/dt + A/2 the level operator itself.
      ops_->apply(0, u, rhs);
      ops_->multiply_add(2.0 / dt_, capacity_, u, -1.0, rhs);
      // The sources at their mean over the step (implicit_source_factor), the faces at both
      // ends.
      assemble_load(t1, 1.0, true, step, false, false);
      add_face_loads(t0, 0.5);
      add_face_loads(t1, 0.5);
      break;
    case TimeMethod::bdf2:
      // wC (4 u_n - u_{n-1}) / (2 dt)
      assemble_load(t1, 1.0, false, step, true);
      ops_->multiply_add(2.0 / dt_, capacity_, u, 1.0, rhs);
      ops_->multiply_add(-0.5 / dt_, capacity_, previous_, 1.0, rhs);
      break;
    case TimeMethod::steady:
    case TimeMethod::explicit_euler:
      break;
  }
  const SolveReport report = bdf2_start ? start_bdf2(t1) : solve(t1);
  if (method_ == TimeMethod::bdf2) {
    ops_->axpby(1.0, saved_, 0.0, previous_);  // u_{n-1} of the next step
    previous_step_ = step;
  }
  if (round_to_fp32_) ops_->round_to_fp32(u);
  return report;
}

SolveReport ImplicitStepper::start_bdf2(double t1) {
  // The backward Euler operator differs from BDF2's (alpha = 1/dt against 3/(2 dt)), and one
  // set of level operations holds one hierarchy: build backward Euler's for this step and
  // BDF2's again afterwards (also when the solve throws), rather than keep both for the run.
  // The field, the right-hand side and the loads are level-0 vectors and stay.
  build_levels(TimeMethod::backward_euler);
  SolveReport report;
  try {
    report = solve(t1);
  } catch (...) {
    build_levels(TimeMethod::bdf2);
    throw;
  }
  build_levels(TimeMethod::bdf2);
  return report;
}

SolveReport ImplicitStepper::solve(double t_fixed) {
  set_fixed(t_fixed);  // the warm start is the field itself
  const Clock::time_point start = Clock::now();
  SolveReport report = mg_->solve(options_);
  timing_.last_solve_seconds = seconds_since(start);
  timing_.solve_seconds += timing_.last_solve_seconds;
  ++timing_.solves;
  timing_.iterations += report.iterations;
  if (report.reason != SolveReport::Reason::converged) {
    if (saved_ >= 0) ops_->axpby(1.0, saved_, 0.0, mg_->solution());
    throw SolveFailure(
        std::string(to_string(method_)) + ": the multigrid solve " + report.describe(), report);
  }
  return report;
}

}  // namespace heatsim::solver::multigrid
