// `auto`'s decision (solver/backend_choice.hpp) on a made-up registry, with an injected tuning
// cache and device rates: no GPU needed.
#include <gtest/gtest.h>

#include "solver/backend_choice.hpp"

namespace heatsim::solver {
namespace {

using kernels::BackendEntry;
using kernels::Capabilities;
using kernels::Precision;
using kernels::StencilProblem;

class FakeBackend final : public kernels::Backend {
 public:
  FakeBackend(std::string name, Capabilities caps) : name_(std::move(name)), caps_(caps) {}
  std::string name() const override { return name_; }
  Capabilities capabilities() const override { return caps_; }
  void setup(const StencilProblem&) override {}
  void upload(const std::vector<double>&) override {}
  void download(std::vector<double>&) override {}
  void advance(std::int64_t, std::int64_t) override {}
  kernels::FieldStats stats() override { return {}; }

 private:
  std::string name_;
  Capabilities caps_;
};

BackendEntry entry(const std::string& name, bool gpu, int max_fusion,
                   std::function<double(const StencilProblem&)> table = {}) {
  Capabilities caps;
  caps.gpu = gpu;
  caps.max_fusion_depth = max_fusion;
  return {name, "test", gpu,
          [name, caps](Precision) { return std::make_unique<FakeBackend>(name, caps); },
          std::move(table), std::nullopt};
}

// gpu-a fuses up to k*r <= 3, gpu-b up to 12, cpu not at all.
std::vector<BackendEntry> registry() {
  return {entry("gpu-a", true, 3), entry("gpu-b", true, 12), entry("cpu", false, 1)};
}

StencilProblem heat(int dims, int radius = 1, int fusion = 0) {
  StencilProblem p;
  p.dims = dims;
  for (int a = 0; a < dims; ++a) p.n[static_cast<std::size_t>(a)] = 1024;
  p.stencil.dims = dims;
  p.stencil.radius = radius;
  p.stencil.weights.assign(p.stencil.size(), 0.0);
  for (int a = 0; a < dims; ++a)
    for (int o = -radius; o <= radius; ++o) {
      int off[3] = {0, 0, 0};
      off[a] = o;
      p.stencil.at(off[0], off[1], off[2]) += o == 0 ? 0.2 : 0.1;
    }
  p.fusion_depth = fusion;
  return p;
}

TuneEntry measured(const std::string& backend, int k, double rate, int dims = 2, int radius = 1) {
  TuneEntry e;
  e.shape = "Heat-2D";
  e.dims = dims;
  e.radius = radius;
  e.backend = backend;
  e.fusion_depth = k;
  e.gstencils = rate;
  e.size = 4096;
  e.date = "2026-11-23";
  return e;
}

TuneCache cache() {
  TuneCache c;
  c.device = "Test GPU";
  c.bandwidth = 3e12;
  c.entries = {measured("gpu-a", 1, 150), measured("gpu-a", 2, 280), measured("gpu-a", 3, 300),
               measured("gpu-b", 1, 140), measured("gpu-b", 4, 320), measured("gpu-b", 5, 310)};
  return c;
}

ChoiceContext gpu_context(const TuneCache* c) {
  ChoiceContext ctx;
  ctx.have_gpu = true;
  ctx.cache = c;
  ctx.cache_path = "/tmp/tune-Test-GPU-sm90.json";
  ctx.device.bandwidth = 3e12;
  ctx.device.core_peak_flops = 30e12;
  return ctx;
}

TEST(BackendChoice, FusionAutoTakesTheFastestMeasuredBackendAndDepth) {
  const TuneCache c = cache();
  const BackendChoice choice = choose_backend("auto", heat(2), gpu_context(&c), registry());
  EXPECT_EQ(choice.name, "gpu-b");
  EXPECT_EQ(choice.fusion_depth, 4);
  EXPECT_EQ(choice.reason,
            "auto: gpu-b at fusion depth 4, 320 GStencil/s (measured, tuning cache "
            "/tmp/tune-Test-GPU-sm90.json); best per backend: gpu-b k=4 320 measured, gpu-a k=3 "
            "300 measured");
}

TEST(BackendChoice, AnExplicitFusionDepthIsKept) {
  const TuneCache c = cache();
  // fusion 1 (the default): the one-step rates compare.
  BackendChoice choice = choose_backend("auto", heat(2, 1, 1), gpu_context(&c), registry());
  EXPECT_EQ(choice.name, "gpu-a");
  EXPECT_EQ(choice.fusion_depth, 1);
  // fusion 3: gpu-a at 3 (300) against gpu-b's deepest measured depth <= 3, which is 1 (140).
  choice = choose_backend("auto", heat(2, 1, 3), gpu_context(&c), registry());
  EXPECT_EQ(choice.name, "gpu-a");
  EXPECT_EQ(choice.fusion_depth, 3);
  EXPECT_NE(choice.reason.find("gpu-b k=1 140 measured"), std::string::npos) << choice.reason;
}

TEST(BackendChoice, NearestMeasuredRadiusTheLargerOnATie) {
  TuneCache c;
  c.entries = {measured("gpu-a", 1, 100, 2, 1), measured("gpu-b", 1, 90, 2, 1),
               measured("gpu-a", 1, 80, 2, 3), measured("gpu-b", 1, 95, 2, 3)};
  // Radius 2 is as near to 1 as to 3: the radius-3 rows decide.
  const BackendChoice choice = choose_backend("auto", heat(2, 2, 1), gpu_context(&c), registry());
  EXPECT_EQ(choice.name, "gpu-b");
  EXPECT_NE(choice.reason.find("gpu-b k=1 95.0 measured"), std::string::npos) << choice.reason;
}

TEST(BackendChoice, ModelWhereTheCacheHasNotMeasured) {
  // The cache holds 2D only; a 1D problem goes to the model. Default model for unknown GPU
  // backends: e_bw 0.5, e_c 0.1, no tiles. Heat-1D: k=3 gives 0.5 * 3000 / (16/3) = 281.25
  // (compute 0.1 * 30e12 / (2*7/3) = 643); gpu-b can go deeper: at k=12, 0.5 * 3000 / (16/12)
  // = 1125 against the compute roof 0.1 * 30e12 / (2*25/12) = 720, so 720 at k=12.
  const TuneCache c = cache();
  StencilProblem heat1d = heat(1);
  heat1d.n[0] = 1 << 20;
  const BackendChoice choice = choose_backend("auto", heat1d, gpu_context(&c), registry());
  EXPECT_EQ(choice.name, "gpu-b");
  EXPECT_EQ(choice.fusion_depth, 12);
  EXPECT_EQ(choice.reason,
            "auto: gpu-b at fusion depth 12, 720 GStencil/s (performance model: 3000 GB/s copy "
            "bandwidth, 30/0 TFLOP/s CUDA-core/tensor-core peak); best per backend: gpu-b k=12 "
            "720 model, gpu-a k=3 281 model");
}

// A grid of fewer than kSmallGridPoints nodes runs on the host backend, whatever the GPU
// backends' rates; one of that many runs where the rates say. A named backend is kept.
TEST(BackendChoice, SmallGridsRunOnTheHost) {
  const TuneCache c = cache();
  StencilProblem wall = heat(1);
  wall.n[0] = 321;
  BackendChoice choice = choose_backend("auto", wall, gpu_context(&c), registry());
  EXPECT_EQ(choice.name, "cpu");
  EXPECT_EQ(choice.fusion_depth, 0);  // the problem's own (fusion: auto): the backend decides
  EXPECT_EQ(choice.reason,
            "auto: cpu, 321 nodes: below 2048 a GPU's launches take longer than the host's "
            "whole step");
  StencilProblem plate = heat(2);
  plate.n[0] = 45;
  plate.n[1] = 45;  // 2025 nodes
  EXPECT_EQ(choose_backend("auto", plate, gpu_context(&c), registry()).name, "cpu");
  plate.n[0] = 46;  // 2070 nodes
  choice = choose_backend("auto", plate, gpu_context(&c), registry());
  EXPECT_EQ(choice.name, "gpu-b");
  EXPECT_EQ(choice.fusion_depth, 4);
  EXPECT_EQ(choose_backend("gpu-a", wall, gpu_context(&c), registry()).name, "gpu-a");
  // Where the host backend cannot run the problem, the GPU's rates decide as before.
  std::vector<BackendEntry> gpus_only = {entry("gpu-a", true, 3), entry("gpu-b", true, 12)};
  EXPECT_NE(choose_backend("auto", wall, gpu_context(&c), gpus_only).name, "cpu");
}

TEST(BackendChoice, MeasuredAndPredictedBackendsCompete) {
  TuneCache c;
  c.entries = {measured("gpu-a", 1, 200)};
  // gpu-b has no row for Heat-2D: the model rates it. Default model, Heat-2D on the diamond
  // taps of S^k: k=2 gives min(0.5 * 3000 / 8, 0.1 * 30e12 / 13) = min(187.5, 231) = 187.5,
  // k=3 min(281, 0.1 * 30e12 / (50/3)) = 180; 187.5 < 200.
  const BackendChoice choice = choose_backend("auto", heat(2), gpu_context(&c), registry());
  EXPECT_EQ(choice.name, "gpu-a");
  EXPECT_EQ(choice.fusion_depth, 1);
  EXPECT_NE(choice.reason.find("gpu-b k=2 188 model"), std::string::npos) << choice.reason;
}

TEST(BackendChoice, WithoutAGpuTheCpuAsBefore) {
  const TuneCache c = cache();
  ChoiceContext ctx = gpu_context(&c);
  ctx.have_gpu = false;
  const BackendChoice choice = choose_backend("auto", heat(2), ctx, registry());
  EXPECT_EQ(choice.name, "cpu");
  EXPECT_EQ(choice.fusion_depth, 0);  // `auto` stays with the backend
  EXPECT_EQ(choice.reason,
            "auto: the first available backend; not usable: gpu-a (no GPU); gpu-b (no GPU)");
}

TEST(BackendChoice, WithoutCacheOrBandwidthTheBuiltInTable) {
  std::vector<BackendEntry> reg = {
      entry("gpu-a", true, 1, [](const StencilProblem&) { return 100.0; }),
      entry("gpu-b", true, 1, [](const StencilProblem&) { return 120.0; }), entry("cpu", false, 1)};
  ChoiceContext ctx;
  ctx.have_gpu = true;
  const BackendChoice choice = choose_backend("auto", heat(2, 1, 1), ctx, reg);
  EXPECT_EQ(choice.name, "gpu-b");
  EXPECT_EQ(choice.reason,
            "auto: highest expected GStencil/s (built-in table measured on an H100): gpu-b k=1 "
            "120 table, gpu-a k=1 100 table");
}

TEST(BackendChoice, NamedBackendWithFusionAutoTakesItsBestDepth) {
  const TuneCache c = cache();
  BackendChoice choice = choose_backend("gpu-a", heat(2), gpu_context(&c), registry());
  EXPECT_EQ(choice.name, "gpu-a");
  EXPECT_EQ(choice.fusion_depth, 3);
  EXPECT_EQ(choice.reason,
            "requested; fusion depth 3 (300 GStencil/s, measured, tuning cache "
            "/tmp/tune-Test-GPU-sm90.json)");
  choice = choose_backend("gpu-a", heat(2, 1, 2), gpu_context(&c), registry());
  EXPECT_EQ(choice.fusion_depth, 2);
  EXPECT_EQ(choice.reason, "requested");
  EXPECT_THROW(choose_backend("warp-drive", heat(2), gpu_context(&c), registry()),
               std::invalid_argument);
  ChoiceContext no_gpu = gpu_context(&c);
  no_gpu.have_gpu = false;
  EXPECT_THROW(choose_backend("gpu-a", heat(2), no_gpu, registry()), std::runtime_error);
}

// A varying-coefficient problem is rated by the layout its sweep takes on each backend
// (kernels::coefficient_traffic) and that backend's measured fraction of the copy bandwidth on
// it, not by the constant stencil's cached rates. "tiled" reads materials and faces as classes,
// "plain" the surfaces' transfer too: numbers of the kind an H200 measured.
TEST(BackendChoice, CoefficientProblemsAreRatedByTheirSweepsLayout) {
  const auto coefficient_entry = [](const std::string& name, bool transfer, double constant,
                                    std::array<double, 4> efficiency) {
    BackendEntry e = entry(name, true, 1);
    Capabilities caps;
    caps.gpu = true;
    caps.compact_materials = true;
    caps.compact_faces = true;
    caps.compact_transfer = transfer;
    e.create = [name, caps](Precision) { return std::make_unique<FakeBackend>(name, caps); };
    kernels::PerformanceModel m;
    m.bandwidth_efficiency = {constant, constant, constant};
    m.coefficient_efficiency = efficiency;
    e.model = m;
    return e;
  };
  const std::vector<BackendEntry> reg = {
      coefficient_entry("tiled", false, 1.0, {0.45, 0.60, 0.64, 0.68}),
      coefficient_entry("plain", true, 0.7, {0.54, 0.91, 0.67, 0.61}), entry("cpu", false, 1)};
  TuneCache c;
  c.device = "Test GPU";
  c.bandwidth = 3e12;
  c.entries = {measured("tiled", 1, 300, 3), measured("plain", 1, 200, 3)};
  const ChoiceContext ctx = gpu_context(&c);

  StencilProblem p = heat(3, 1, 0);
  p.n = {40, 40, 40};
  const std::size_t points = static_cast<std::size_t>(p.points());
  auto two_materials = [&] {
    auto f = std::make_shared<kernels::CoefficientFields>();
    f->conductivity.assign(points, 200.0);
    f->capacity.assign(points, 2.4e6);
    for (std::size_t i = 0; i < points / 2; ++i) f->conductivity[i] = 400.0;
    return f;
  };
  // Without coefficients the cache decides.
  EXPECT_EQ(choose_backend("auto", p, ctx, reg).name, "tiled");

  // Two materials: the classes, 17 bytes a node: plain 0.67 * 3000 / 17 = 118.2, tiled 112.9.
  p.coefficients = two_materials();
  BackendChoice choice = choose_backend("auto", p, ctx, reg);
  EXPECT_EQ(choice.name, "plain");
  EXPECT_EQ(choice.fusion_depth, 1);
  EXPECT_NE(choice.reason.find("plain k=1 118 model, tiled k=1 113 model"), std::string::npos)
      << choice.reason;

  // The faces given (few values): both read them as classes, 20 bytes (0.68 * 3000 / 20 = 102,
  // 0.61 * 3000 / 20 = 91.5).
  auto faces = two_materials();
  for (auto& axis : faces->faces) axis.assign(points, 250.0);
  p.coefficients = faces;
  choice = choose_backend("auto", p, ctx, reg);
  EXPECT_EQ(choice.name, "tiled");
  EXPECT_NE(choice.reason.find("tiled k=1 102 model, plain k=1 91.5 model"), std::string::npos)
      << choice.reason;

  // Surfaces inside the body (a transfer field) and one source: plain takes H into its classes
  // (20 bytes, 91.5), tiled keeps the faces' arrays, 8 values of 8 bytes (0.60 * 3000 / 64 =
  // 28.1).
  auto transfer = std::make_shared<kernels::CoefficientFields>(*faces);
  transfer->transfer.assign(points, 0.0);
  transfer->transfer[7] = 50.0;
  transfer->sources.resize(1);
  transfer->sources[0].density.assign(points, 0.0);
  p.coefficients = transfer;
  choice = choose_backend("auto", p, ctx, reg);
  EXPECT_EQ(choice.name, "plain");
  EXPECT_NE(choice.reason.find("plain k=1 91.5 model, tiled k=1 28.1 model"), std::string::npos)
      << choice.reason;

  // 17 materials: more than the pairs' table holds, the fields (32 bytes): plain 0.54 * 3000 /
  // 32 = 50.6, tiled 42.2.
  auto many = two_materials();
  for (std::size_t i = 0; i < points; ++i)
    many->conductivity[i] = 100.0 + static_cast<double>(i % 17);
  p.coefficients = many;
  choice = choose_backend("auto", p, ctx, reg);
  EXPECT_EQ(choice.name, "plain");
  EXPECT_NE(choice.reason.find("plain k=1 50.6 model, tiled k=1 42.2 model"), std::string::npos)
      << choice.reason;

  // Without the bandwidth (no model) the problem keeps the cache's rates.
  ChoiceContext no_bandwidth = ctx;
  no_bandwidth.device.bandwidth = 0;
  EXPECT_EQ(choose_backend("auto", p, no_bandwidth, reg).name, "tiled");
}

}  // namespace
}  // namespace heatsim::solver
