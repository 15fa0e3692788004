// The body's pieces (solver/body_geometry.hpp) of a body without voids: one piece, found
// without the node-by-node search, with what the search says of it.
#include <gtest/gtest.h>

#include "solver/body_geometry.hpp"
#include "solver/materials.hpp"
#include "tests/case_builders.hpp"

namespace heatsim::solver {
namespace {

using heatsim_tests::material;
using heatsim_tests::region;
using kernels::BoundaryKind;

// A 9 x 7 x 5 aluminium block; every face of kind `kind`.
Case block(BoundaryKind kind) {
  Case c;
  c.grid.dims = 3;
  c.grid.n = {9, 7, 5};
  c.grid.length = {0.008, 0.006, 0.004};
  c.materials = {material("aluminium", 237, 2700, 900)};
  c.regions = {region("aluminium")};
  for (auto& f : c.boundary) {
    f = RegionSpec::insulated();
    f.kind = kind;
    f.value = 300.0;
    f.transfer = 25.0;
  }
  return c;
}

std::vector<BodyPiece> pieces_of(const Case& c) {
  const std::vector<std::int32_t> ids = material_ids(c);
  const auto fields = coefficient_fields(c, ids);
  return body_pieces(c, *fields, ids);
}

TEST(BodyPieces, ABlockIsOnePieceTiedByItsFaces) {
  for (const BoundaryKind kind : {BoundaryKind::dirichlet, BoundaryKind::convective}) {
    const auto p = pieces_of(block(kind));
    ASSERT_EQ(p.size(), 1u);
    EXPECT_EQ(p[0].nodes, 9 * 7 * 5);
    EXPECT_EQ(p[0].first, 0);
    EXPECT_TRUE(p[0].anchored);
    EXPECT_FALSE(p[0].slivers);
    EXPECT_TRUE(p[0].voids.empty());
  }
}

TEST(BodyPieces, InsulatedOrPeriodicFacesTieNothing) {
  auto p = pieces_of(block(BoundaryKind::neumann));
  ASSERT_EQ(p.size(), 1u);
  EXPECT_FALSE(p[0].anchored);
  p = pieces_of(block(BoundaryKind::periodic));
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].nodes, 9 * 7 * 5);
  EXPECT_FALSE(p[0].anchored);
  // One Dirichlet face ties it.
  Case c = block(BoundaryKind::neumann);
  c.boundary[5].kind = BoundaryKind::dirichlet;
  p = pieces_of(c);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_TRUE(p[0].anchored);
}

// A material that does not conduct cuts the block into pieces: the search runs, and each
// piece is tied or not by its own faces.
TEST(BodyPieces, ANonConductingLayerCutsTheBlock) {
  Case c = block(BoundaryKind::neumann);
  c.materials.push_back(material("insulator", 0.0, 100, 1000));
  c.regions.push_back(region("insulator", heatsim_tests::box({0.0035, -1, -1}, {0.0045, 1, 1})));
  c.boundary[0].kind = BoundaryKind::dirichlet;  // x-: the lower piece only
  const auto p = pieces_of(c);
  ASSERT_GE(p.size(), 2u);
  EXPECT_EQ(p[0].first, 0);
  EXPECT_TRUE(p[0].anchored);
  EXPECT_FALSE(p.back().anchored);
}

}  // namespace
}  // namespace heatsim::solver
