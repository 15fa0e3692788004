// Which faces fused passes take exactly (kernels/boundary_rules.hpp): a constant Dirichlet
// value is reflected exactly, one that changes within a pass (a sine or a table) is not, and
// neither are corners where two Dirichlet faces' values differ or change.
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

}  // namespace
}  // namespace heatsim::kernels
