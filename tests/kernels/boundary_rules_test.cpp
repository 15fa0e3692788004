// The constant-weight ghost rule as an affine map (what temporal-blocking's marches apply to a
// ghost's mirror) gives the rule's bits. Which faces fused passes take exactly
// (kernels/boundary_rules.hpp): a constant Dirichlet
// value is reflected exactly, one that changes within a pass (a sine or a table) is not, and
// neither are corners where two Dirichlet faces' values differ or change. Each kind's law of heat
// passed (what the implicit operator, void surfaces, heat flows and the steady-state check read).
#include "kernels/boundary_rules.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

namespace heatsim::kernels {
namespace {

std::array<BoundaryFace, kFaces> insulated_square() {
  std::array<BoundaryFace, kFaces> faces{};
  for (BoundaryFace& f : faces) {
    f.kind = BoundaryKind::neumann;
    f.value = 0.0;
  }
  return faces;
}

TEST(BoundaryRules, AConstantDirichletFaceIsExactUnderFusion) {
  auto faces = insulated_square();
  faces[0].kind = BoundaryKind::dirichlet;
  faces[0].value = 0.5;
  EXPECT_TRUE(constant_rule_exact_under_fusion(faces.data(), 2, 0, true, 0.0));
  EXPECT_FALSE(constant_rule_exact_under_fusion(faces.data(), 2, 0, false, 0.0));
  EXPECT_FALSE(constant_rule_exact_under_fusion(faces.data(), 2, 0, true, 0.1));
}

TEST(BoundaryRules, ADirichletValueThatChangesWithinAPassIsNot) {
  auto faces = insulated_square();
  faces[0].kind = BoundaryKind::dirichlet;
  faces[0].value = 0.5;
  faces[0].amplitude = 0.5;
  faces[0].frequency = 3.0;
  EXPECT_FALSE(constant_rule_exact_under_fusion(faces.data(), 2, 0, true, 0.0)) << "sine";
  faces[0].amplitude = 0.0;
  faces[0].table = {{0.0, 0.5}, {1.0, 1.0}};
  EXPECT_FALSE(constant_rule_exact_under_fusion(faces.data(), 2, 0, true, 0.0)) << "table";
}

TEST(BoundaryRules, DirichletCornersNeedEqualConstantValues) {
  auto faces = insulated_square();
  faces[0].kind = faces[2].kind = BoundaryKind::dirichlet;
  faces[0].value = faces[2].value = 0.5;
  EXPECT_TRUE(constant_rule_exact_under_fusion(faces.data(), 2, 0, true, 0.0));
  faces[2].table = {{0.0, 0.5}, {1.0, 0.7}};  // starts at the same value, then changes
  EXPECT_FALSE(constant_rule_exact_under_fusion(faces.data(), 2, 0, true, 0.0));
  faces[2].table.clear();
  faces[2].value = 0.6;
  EXPECT_FALSE(constant_rule_exact_under_fusion(faces.data(), 2, 0, true, 0.0));
}

// fma(a, u, b) of constant_ghost_affine is constant_ghost bit for bit, both precisions, every
// kind and layer, on values of every sign and size, signed zeros and subnormals among them.
template <typename T>
void expect_affine_is_the_rule() {
  std::mt19937_64 gen(5);
  std::uniform_real_distribution<double> unit(-2.0, 2.0);
  std::uniform_int_distribution<int> exponent(-40, 40);
  std::vector<T> sources = {T(0), T(-0.0), std::numeric_limits<T>::denorm_min(),
                            -std::numeric_limits<T>::denorm_min(), T(1), T(-1)};
  std::vector<double> values = {0.0, -0.0, 0.5, -0.4, 0.7, 1e-30, 1.0 / 3.0};
  for (int i = 0; i < 500; ++i) {
    sources.push_back(static_cast<T>(std::ldexp(unit(gen), exponent(gen))));
    if (i < 50) values.push_back(std::ldexp(unit(gen), exponent(gen) / 4));
    if (i < 50) values.push_back(0.5 * static_cast<double>(sources.back()));  // b - u near 0
  }
  std::size_t differ = 0, tried = 0;
  for (BoundaryKind kind : {BoundaryKind::dirichlet, BoundaryKind::neumann, BoundaryKind::periodic})
    for (const double value : values)
      for (int layer = 1; layer <= 4; ++layer)
        for (const double h : {1.0, 1.0 / 130.0, 0.37})
          for (const T u : sources) {
            const GhostAffine<T> r = constant_ghost_affine<T>(kind, value, layer, h);
            const T got = std::fma(r.a, u, r.b);
            const T want = constant_ghost<T>(kind, value, layer, h, u);
            ++tried;
            if (std::memcmp(&got, &want, sizeof(T)) != 0 && ++differ <= 5)
              ADD_FAILURE() << "kind " << static_cast<int>(kind) << ", value " << value
                            << ", layer " << layer << ", h " << h << ", u " << u << ": " << got
                            << " against " << want;
          }
  EXPECT_EQ(differ, 0u) << "of " << tried;
}

TEST(BoundaryRules, TheAffineRuleIsTheRuleBitForBit) {
  expect_affine_is_the_rule<double>();
  expect_affine_is_the_rule<float>();
}

BoundaryFace face_of(BoundaryKind kind, double value) {
  BoundaryFace f;
  f.kind = kind;
  f.value = value;
  return f;
}

TEST(FaceLaw, EachKindPassesHeatByItsOwnTerms) {
  BoundaryFace dirichlet = face_of(BoundaryKind::dirichlet, 300.0);
  BoundaryFace gradient = face_of(BoundaryKind::neumann, 4.0);  // du/dn = 4
  BoundaryFace flux = face_of(BoundaryKind::neumann, 500.0);
  flux.heat_flux = true;
  BoundaryFace convective = face_of(BoundaryKind::convective, 293.0);
  convective.transfer = 25.0;
  BoundaryFace radiative = face_of(BoundaryKind::convective, 293.0);
  radiative.emissivity = 0.8;
  BoundaryFace insulated = face_of(BoundaryKind::convective, 293.0);  // h = 0, no emissivity
  BoundaryFace periodic = face_of(BoundaryKind::periodic, 0.0);

  EXPECT_EQ(face_transfer(convective), 25.0);
  EXPECT_EQ(face_flux(flux), 500.0);
  for (const BoundaryFace* f : {&dirichlet, &gradient, &flux, &radiative, &insulated, &periodic})
    EXPECT_EQ(face_transfer(*f), 0.0);
  for (const BoundaryFace* f : {&dirichlet, &gradient, &convective, &radiative, &periodic})
    EXPECT_EQ(face_flux(*f), 0.0);

  // The implicit operator's inflow: 2Q/h for a heat flux, 2 K du/dn / h for a gradient, none
  // for a law of transfer (its H goes to the diagonal instead).
  EXPECT_DOUBLE_EQ(face_inflow(flux, 7.0, 0.5), 2.0 * 500.0 / 0.5);
  EXPECT_DOUBLE_EQ(face_inflow(gradient, 7.0, 0.5), 2.0 * 7.0 * 4.0 / 0.5);
  EXPECT_EQ(face_inflow(convective, 7.0, 0.5), 0.0);
  EXPECT_EQ(face_inflow(radiative, 7.0, 0.5), 0.0);

  EXPECT_TRUE(passes_heat(convective));
  EXPECT_TRUE(passes_heat(radiative));
  EXPECT_TRUE(passes_heat(flux));
  EXPECT_FALSE(passes_heat(insulated));
  EXPECT_FALSE(passes_heat(face_of(BoundaryKind::neumann, 0.0)));
  BoundaryFace no_flux = flux;
  no_flux.value = 0.0;
  EXPECT_FALSE(passes_heat(no_flux));

  // A steady state is anchored by a held temperature or a way to an ambient, not by a flux.
  EXPECT_TRUE(anchors(dirichlet));
  EXPECT_TRUE(anchors(convective));
  EXPECT_TRUE(anchors(radiative));
  EXPECT_FALSE(anchors(insulated));
  EXPECT_FALSE(anchors(flux));
  EXPECT_FALSE(anchors(gradient));
  EXPECT_FALSE(anchors(periodic));
}

}  // namespace
}  // namespace heatsim::kernels
