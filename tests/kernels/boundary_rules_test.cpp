// Which faces fused passes take exactly (kernels/boundary_rules.hpp): a constant Dirichlet
// value is reflected exactly, one that changes within a pass (a sine or a table) is not, and
// neither are corners where two Dirichlet faces' values differ or change. Each kind's law of heat
// passed (what the implicit operator, void surfaces, heat flows and the steady-state check read).
#include "kernels/boundary_rules.hpp"

#include <gtest/gtest.h>

#include <array>

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
