// kernels::find_node_classes: nodes grouped by (k, rho c_p, source densities) bit for bit,
// numbered in order of first appearance, and no compact form where it does not describe the
// problem (too many classes, surfaces inside the body or radiating ones given).
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "kernels/node_classes.hpp"

namespace heatsim::test {
namespace {

using kernels::CoefficientFields;
using kernels::find_node_classes;

// A random map of `materials` materials over `points` nodes (runs of random length, so that
// neighbours usually share one), with `sources` source fields that are nonzero on some runs.
CoefficientFields random_map(std::int64_t points, int materials, int sources,
                             std::mt19937_64& rng) {
  std::uniform_real_distribution<double> value(0.1, 400.0);
  std::vector<double> k(static_cast<std::size_t>(materials)), c(k.size());
  for (std::size_t m = 0; m < k.size(); ++m) {
    k[m] = value(rng);
    c[m] = value(rng) * 1e4;
  }
  CoefficientFields f;
  f.conductivity.resize(static_cast<std::size_t>(points));
  f.capacity.resize(f.conductivity.size());
  f.sources.resize(static_cast<std::size_t>(sources));
  for (auto& s : f.sources) s.density.assign(f.conductivity.size(), 0.0);
  std::uniform_int_distribution<int> pick(0, materials - 1), run(1, 40), coin(0, 3);
  std::size_t i = 0;
  while (i < f.conductivity.size()) {
    const int m = pick(rng), length = run(rng);
    const int heated = sources > 0 && coin(rng) == 0 ? pick(rng) % sources : -1;
    for (int j = 0; j < length && i < f.conductivity.size(); ++j, ++i) {
      f.conductivity[i] = k[static_cast<std::size_t>(m)];
      f.capacity[i] = c[static_cast<std::size_t>(m)];
      if (heated >= 0) f.sources[static_cast<std::size_t>(heated)].density[i] = 1e6 * (m + 1);
    }
  }
  return f;
}

TEST(NodeClasses, EachNodeGetsTheClassOfItsOwnValues) {
  std::mt19937_64 rng(77);
  // One piece of the finder's parallel pass, and several (2^16 nodes each).
  for (int sources = 0; sources <= 2; ++sources) {
    for (const std::int64_t points : {std::int64_t{9973}, std::int64_t{200003}}) {
      const CoefficientFields f = random_map(points, 4, sources, rng);
      const auto classes = find_node_classes(f, points);
      ASSERT_TRUE(classes.has_value());
      ASSERT_EQ(classes->id.size(), f.conductivity.size());
      EXPECT_GE(classes->count(), 4);
      EXPECT_LE(classes->count(), 4 * (1 + sources));
      std::vector<bool> seen(static_cast<std::size_t>(classes->count()), false);
      int next_new = 0;
      for (std::size_t i = 0; i < f.conductivity.size(); ++i) {
        const int id = classes->id[i];
        ASSERT_LT(id, classes->count());
        // Numbered in order of first appearance.
        if (!seen[static_cast<std::size_t>(id)]) {
          EXPECT_EQ(id, next_new) << "node " << i;
          seen[static_cast<std::size_t>(id)] = true;
          ++next_new;
        }
        const auto c = static_cast<std::size_t>(id);
        EXPECT_EQ(classes->conductivity[c], f.conductivity[i]) << "node " << i;
        EXPECT_EQ(classes->capacity[c], f.capacity[i]) << "node " << i;
        for (int s = 0; s < kernels::kMaxSourceFields; ++s)
          EXPECT_EQ(classes->source[c][static_cast<std::size_t>(s)],
                    s < sources ? f.sources[static_cast<std::size_t>(s)].density[i] : 0.0)
              << "node " << i << " source " << s;
      }
      // Distinct classes hold distinct values.
      for (int a = 0; a < classes->count(); ++a)
        for (int b = a + 1; b < classes->count(); ++b) {
          const auto ia = static_cast<std::size_t>(a), ib = static_cast<std::size_t>(b);
          EXPECT_FALSE(classes->conductivity[ia] == classes->conductivity[ib] &&
                       classes->capacity[ia] == classes->capacity[ib] &&
                       classes->source[ia] == classes->source[ib])
              << "classes " << a << " and " << b;
        }
    }
  }
}

// Surfaces inside the body (a transfer field): no classes unless asked for, and then H is part
// of a node's class (two nodes of one material, one with a surface, are two classes), each
// class's H its nodes' own.
TEST(NodeClasses, TheSurfacesTransferIsPartOfAClassWhereAsked) {
  std::mt19937_64 rng(11);
  const std::int64_t points = 3000;
  CoefficientFields f = random_map(points, 2, 1, rng);
  const auto plain = find_node_classes(f, points);
  ASSERT_TRUE(plain.has_value());
  f.transfer.assign(static_cast<std::size_t>(points), 0.0);
  for (std::size_t i = 0; i < f.transfer.size(); i += 7) f.transfer[i] = 12.5;
  EXPECT_FALSE(find_node_classes(f, points).has_value()) << "the transfer taken unasked";
  const auto with = find_node_classes(f, points, kernels::kMaxNodeClasses, true);
  ASSERT_TRUE(with.has_value());
  EXPECT_GT(with->count(), plain->count());
  for (std::size_t i = 0; i < f.transfer.size(); ++i) {
    const auto c = static_cast<std::size_t>(with->id[i]);
    EXPECT_EQ(with->transfer[c], f.transfer[i]) << "node " << i;
    EXPECT_EQ(with->conductivity[c], f.conductivity[i]) << "node " << i;
  }
  // Radiating surfaces are still refused.
  f.radiation.resize(1);
  f.radiation[0].coefficient.assign(static_cast<std::size_t>(points), 1e-8);
  EXPECT_FALSE(find_node_classes(f, points, kernels::kMaxNodeClasses, true).has_value());
}

TEST(NodeClasses, NoneBeyondTheLimitOrWhereTheFormDoesNotApply) {
  std::mt19937_64 rng(5);
  const std::int64_t points = 4000;
  CoefficientFields f = random_map(points, 3, 0, rng);
  ASSERT_TRUE(find_node_classes(f, points).has_value());
  EXPECT_FALSE(find_node_classes(f, points, 2).has_value()) << "3 classes, at most 2";
  EXPECT_TRUE(find_node_classes(f, points, 3).has_value());
  EXPECT_FALSE(find_node_classes(f, points + 1).has_value()) << "sizes that disagree";

  // Every node its own k: 4000 classes.
  CoefficientFields each = f;
  for (std::size_t i = 0; i < each.conductivity.size(); ++i) each.conductivity[i] = 1.0 + i;
  EXPECT_FALSE(find_node_classes(each, points).has_value());
  // 257 materials, one beyond the limit.
  CoefficientFields many = f;
  many.capacity.assign(many.capacity.size(), 2e6);
  for (std::size_t i = 0; i < many.conductivity.size(); ++i) many.conductivity[i] = 1.0 + i % 257;
  EXPECT_FALSE(find_node_classes(many, points).has_value());
  for (std::size_t i = 0; i < many.conductivity.size(); ++i) many.conductivity[i] = 1.0 + i % 256;
  EXPECT_TRUE(find_node_classes(many, points).has_value());

  // Over several pieces: too many within one piece, and too many only once they are merged
  // (66 per piece of 2^16 nodes, 300 in all).
  const std::int64_t large = 300000;
  CoefficientFields wide = random_map(large, 3, 0, rng);
  wide.capacity.assign(wide.capacity.size(), 2e6);
  for (std::size_t i = 0; i < wide.conductivity.size(); ++i) wide.conductivity[i] = 1.0 + i % 300;
  EXPECT_FALSE(find_node_classes(wide, large).has_value()) << "300 classes in each piece";
  for (std::size_t i = 0; i < wide.conductivity.size(); ++i) wide.conductivity[i] = 1.0 + i / 1000;
  EXPECT_FALSE(find_node_classes(wide, large).has_value()) << "300 classes over the pieces";
  for (std::size_t i = 0; i < wide.conductivity.size(); ++i) wide.conductivity[i] = 1.0 + i / 1200;
  const auto merged = find_node_classes(wide, large);
  ASSERT_TRUE(merged.has_value()) << "250 classes over the pieces";
  EXPECT_EQ(merged->count(), 250);
  EXPECT_EQ(merged->id[static_cast<std::size_t>(large - 1)], 249);

  CoefficientFields faces = f;
  faces.faces[0].assign(static_cast<std::size_t>(points), 1.0);
  EXPECT_TRUE(find_node_classes(faces, points).has_value()) << "the faces given (compacted apart)";
  CoefficientFields surfaces = f;
  surfaces.transfer.assign(static_cast<std::size_t>(points), 2.0);
  EXPECT_FALSE(find_node_classes(surfaces, points).has_value()) << "surfaces inside the body";
  CoefficientFields radiating = f;
  radiating.radiation.push_back({std::vector<double>(static_cast<std::size_t>(points), 1e-8), {}});
  EXPECT_FALSE(find_node_classes(radiating, points).has_value()) << "radiating surfaces";
}

// find_value_classes: an array's distinct values bit for bit (-0 apart from +0), numbered in
// order of first appearance, over one piece and several; nothing beyond the limit.
template <typename T>
void check_value_classes() {
  std::mt19937_64 rng(11);
  std::vector<T> palette;
  for (int v = 0; v < 40; ++v) palette.push_back(static_cast<T>(0.5 + v * 0.37));
  palette.push_back(T(0));
  palette.push_back(-T(0));
  for (const std::size_t n : {std::size_t{5000}, std::size_t{300001}}) {
    std::vector<T> values(n);
    std::uniform_int_distribution<std::size_t> pick(0, palette.size() - 1);
    for (T& v : values) v = palette[pick(rng)];
    const auto found = kernels::find_value_classes(values);
    ASSERT_TRUE(found.has_value());
    ASSERT_EQ(found->id.size(), n);
    EXPECT_EQ(found->value.size(), palette.size());
    int next_new = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const int id = found->id[i];
      ASSERT_LT(id, static_cast<int>(found->value.size()));
      if (id == next_new) ++next_new;
      EXPECT_LT(id, next_new) << "element " << i << ": not in order of first appearance";
      const T v = found->value[static_cast<std::size_t>(id)];
      EXPECT_EQ(std::memcmp(&v, &values[i], sizeof(T)), 0) << "element " << i;
    }
    std::vector<T> many(n);
    for (std::size_t i = 0; i < n; ++i) many[i] = static_cast<T>(i % 257);
    EXPECT_FALSE(kernels::find_value_classes(many).has_value());
    for (std::size_t i = 0; i < n; ++i) many[i] = static_cast<T>(i % 256);
    EXPECT_TRUE(kernels::find_value_classes(many).has_value());
  }
}

TEST(NodeClasses, ValueClassesOfAnArrayBitForBit) {
  check_value_classes<double>();
  check_value_classes<float>();
}

}  // namespace
}  // namespace heatsim::test
