#include "fusion_plan.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "../../boundary_rules.hpp"

namespace heatsim::kernels::convstencil {
namespace {

Stencil convolve(const Stencil& a, const Stencil& b) {
  Stencil c;
  c.dims = a.dims;
  c.radius = a.radius + b.radius;
  c.weights.assign(c.size(), 0.0);
  const int ay = a.dims > 1 ? a.radius : 0, az = a.dims > 2 ? a.radius : 0;
  const int by = b.dims > 1 ? b.radius : 0, bz = b.dims > 2 ? b.radius : 0;
  for (int z1 = -az; z1 <= az; ++z1)
    for (int y1 = -ay; y1 <= ay; ++y1)
      for (int x1 = -a.radius; x1 <= a.radius; ++x1) {
        const double wa = a.at(x1, y1, z1);
        if (wa == 0.0) continue;
        for (int z2 = -bz; z2 <= bz; ++z2)
          for (int y2 = -by; y2 <= by; ++y2)
            for (int x2 = -b.radius; x2 <= b.radius; ++x2) {
              const double wb = b.at(x2, y2, z2);
              if (wb != 0.0) c.at(x1 + x2, y1 + y2, z1 + z2) += wa * wb;
            }
      }
  return c;
}

double weight_sum(const Stencil& s) {
  double sum = 0.0;
  for (double w : s.weights) sum += w;
  return sum;
}

// The weights of S = I + alpha*dt*L sum to 1 up to rounding of the coefficients.
bool sums_to_one(const Stencil& s) { return std::abs(weight_sum(s) - 1.0) <= 1e-13; }

int round_up(int v, int m) { return (v + m - 1) / m * m; }

}  // namespace

Stencil fuse_stencil(const Stencil& s, int k) {
  if (k < 1) throw std::invalid_argument("fusion depth must be >= 1");
  Stencil fused = s;
  for (int i = 1; i < k; ++i) fused = convolve(fused, s);
  return fused;
}

double fused_source(const Stencil& s, double source_increment, int k) {
  const double sigma = weight_sum(s);
  double factor = 0.0, power = 1.0;
  for (int j = 0; j < k; ++j) {
    factor += power;
    power *= sigma;
  }
  return source_increment * factor;
}

bool face_is_exact_under_fusion(const StencilProblem& p, int face) {
  const bool reflecting = p.stencil.is_mirror_symmetric() && sums_to_one(p.stencil);
  return constant_rule_exact_under_fusion(p.faces.data(), p.dims, face, reflecting,
                                          p.source_increment);
}

TilePlan make_tile_plan(const Stencil& s, int tile_x, int tile_y) {
  TilePlan t;
  t.dims = s.dims;
  t.radius = s.radius;
  t.ry = s.dims > 1 ? s.radius : 0;
  t.rz = s.dims > 2 ? s.radius : 0;
  t.tile_x = tile_x;
  t.tile_y = tile_y;
  t.rows = tile_y + 2 * t.ry;
  t.slots = s.dims > 2 ? 2 * t.rz + 2 : 2;  // 1D, 2D: a tile in use and the next one
  t.warps = std::min(8, t.units() / 2);
  if ((tile_y / 8) % 2 != 0 || tile_x % 8 != 0 || (t.units() / 2) % t.warps != 0)
    throw std::logic_error("convstencil: tile does not split into pairs of units");

  // One band per line (dz, dy) that has a nonzero tap.
  struct Band {
    int dz, dy, dmin, dmax;
  };
  std::vector<Band> bands;
  const int R = s.radius;
  for (int dz = -t.rz; dz <= t.rz; ++dz)
    for (int dy = -t.ry; dy <= t.ry; ++dy) {
      int dmin = R + 1, dmax = -R - 1;
      for (int dx = -R; dx <= R; ++dx)
        if (s.at(dx, dy, dz) != 0.0) {
          dmin = std::min(dmin, dx);
          dmax = std::max(dmax, dx);
        }
      if (dmin <= dmax) bands.push_back({dz, dy, dmin, dmax});
    }
  if (bands.empty()) bands.push_back({0, 0, 0, 0});  // all-zero stencil: one zero band

  // Widest shared row any unit reads: the last unit starts at tile_x - 8.
  int width = tile_x + 2 * R;
  for (const Band& b : bands) {
    const int chunks = (b.dmax - b.dmin + 8 + 3) / 4;
    width = std::max(width, tile_x - 8 + R + b.dmin + 4 * chunks);
  }
  t.pitch = round_up(width - 4, 16) + 4;  // = 4 (mod 16): conflict-free A loads

  std::vector<int> in_plane;  // shared offset of chunk c within its plane
  std::vector<int> dz_of;
  for (const Band& b : bands) {
    const int chunks = (b.dmax - b.dmin + 8 + 3) / 4;
    for (int q = 0; q < chunks; ++q) {
      in_plane.push_back((b.dy + t.ry) * t.pitch + R + b.dmin + 4 * q);
      dz_of.push_back(b.dz);
      for (int lane = 0; lane < 32; ++lane) {
        const int kk = lane % 4, n = lane / 4;
        const int dx = b.dmin + 4 * q + kk - n;
        t.fragments.push_back(dx >= b.dmin && dx <= b.dmax ? s.at(dx, b.dy, b.dz) : 0.0);
      }
    }
  }
  // Register-held fragments: pad to a multiple of 4 chunks (zero weights, a valid offset),
  // so the kernel's chunk loop has a compile-time trip count and no branches.
  if (in_plane.size() <= static_cast<std::size_t>(kMaxRegisterChunks))
    while (in_plane.size() % 4 != 0) {
      in_plane.push_back(in_plane.front());
      dz_of.push_back(dz_of.front());
      t.fragments.insert(t.fragments.end(), 32, 0.0);
    }
  t.chunks = static_cast<int>(in_plane.size());
  // Ring phase: output plane z reads plane z+dz from slot (z + rz + dz) mod slots; the
  // phase is (z + rz) mod slots, so each row of the table is one rotation of the ring.
  t.offsets.resize(static_cast<std::size_t>(t.slots) * t.chunks);
  for (int phase = 0; phase < t.slots; ++phase)
    for (int c = 0; c < t.chunks; ++c) {
      const int slot = ((phase + dz_of[c]) % t.slots + t.slots) % t.slots;
      t.offsets[static_cast<std::size_t>(phase) * t.chunks + c] = slot * t.plane_elems() + in_plane[c];
    }
  t.fragments_in_shared = t.chunks > kMaxRegisterChunks;
  t.shared_bytes = sizeof(double) * (static_cast<std::size_t>(t.slots) * t.plane_elems() +
                                     (t.fragments_in_shared ? 32u * t.chunks : 0u)) +
                   sizeof(int) * static_cast<std::size_t>(round_up(t.slots * t.chunks, 4));
  return t;
}

TilePlan plan_for(const Stencil& s) {
  switch (s.dims) {
    case 1: return make_tile_plan(s, 32, 64);  // 64 stencil2row rows of 32 outputs
    case 2: return make_tile_plan(s, 64, 32);
    default: return s.radius <= 2 ? make_tile_plan(s, 64, 16) : make_tile_plan(s, 32, 16);
  }
}

}  // namespace heatsim::kernels::convstencil
