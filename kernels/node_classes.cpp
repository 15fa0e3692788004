// Nodes grouped by their coefficients (node_classes.hpp).
#include "node_classes.hpp"

#include <algorithm>
#include <cstring>

namespace heatsim::kernels {
namespace {

// A node's coefficients as one key, compared bit for bit (so -0 and +0 differ, which only
// splits a class in two).
struct Key {
  double v[3 + kMaxSourceFields] = {};  // k, rho c_p, the transfer, the sources
  bool operator==(const Key& o) const { return std::memcmp(v, o.v, sizeof(v)) == 0; }
};

// One value as a key, compared bit for bit.
template <typename T>
struct ValueKey {
  T v;
  bool operator==(const ValueKey& o) const { return std::memcmp(&v, &o.v, sizeof(T)) == 0; }
};

// The classes of elements 0 .. n-1 by their keys (key_of(i)), numbered in order of first
// appearance into `ids`: the distinct keys in that order, or nothing beyond `max_classes`.
// Pieces of 2^16 elements on every thread each number their own keys, then the pieces' lists
// are merged in element order and each piece's ids renumbered.
template <typename K, typename KeyOf>
std::optional<std::vector<K>> classify(std::size_t n, KeyOf key_of, int max_classes,
                                       std::vector<std::uint8_t>& ids) {
  max_classes = std::min(max_classes, 256);
  ids.resize(n);
  // The index of `k` in `keys`, or -1.
  const auto find = [](const std::vector<K>& keys, const K& k) {
    for (std::size_t j = 0; j < keys.size(); ++j)
      if (keys[j] == k) return static_cast<int>(j);
    return -1;
  };
  constexpr std::size_t kPiece = std::size_t{1} << 16;
  const std::size_t pieces = (n + kPiece - 1) / kPiece;
  std::vector<std::vector<K>> local(pieces);
  bool too_many = false;
#pragma omp parallel for schedule(static) reduction(|| : too_many) if (pieces > 1)
  for (std::size_t q = 0; q < pieces; ++q) {
    std::vector<K>& keys = local[q];
    int last = -1;  // the previous element's class: neighbours along x nearly always share one
    for (std::size_t i = q * kPiece; i < std::min(n, (q + 1) * kPiece) && !too_many; ++i) {
      const K k = key_of(i);
      if (last < 0 || !(keys[static_cast<std::size_t>(last)] == k)) {
        last = find(keys, k);
        if (last < 0) {
          if (static_cast<int>(keys.size()) == max_classes) {
            too_many = true;
            break;
          }
          keys.push_back(k);
          last = static_cast<int>(keys.size()) - 1;
        }
      }
      ids[i] = static_cast<std::uint8_t>(last);
    }
  }
  if (too_many) return std::nullopt;
  std::vector<K> keys;
  std::vector<std::vector<std::uint8_t>> renumber(pieces);
  for (std::size_t q = 0; q < pieces; ++q)
    for (const K& k : local[q]) {
      int j = find(keys, k);
      if (j < 0) {
        if (static_cast<int>(keys.size()) == max_classes) return std::nullopt;
        keys.push_back(k);
        j = static_cast<int>(keys.size()) - 1;
      }
      renumber[q].push_back(static_cast<std::uint8_t>(j));
    }
#pragma omp parallel for schedule(static) if (pieces > 1)
  for (std::size_t q = 0; q < pieces; ++q)
    for (std::size_t i = q * kPiece; i < std::min(n, (q + 1) * kPiece); ++i)
      ids[i] = renumber[q][ids[i]];
  return keys;
}

}  // namespace

std::optional<NodeClasses> find_node_classes(const CoefficientFields& c, std::int64_t points,
                                             int max_classes, bool with_transfer) {
  const std::size_t n = static_cast<std::size_t>(points);
  const bool transfer = !c.transfer.empty();
  if ((transfer && (!with_transfer || c.transfer.size() != n)) || !c.radiation.empty() ||
      c.temperature || c.conductivity.size() != n || c.capacity.size() != n ||
      c.sources.size() > static_cast<std::size_t>(kMaxSourceFields))
    return std::nullopt;
  for (const auto& s : c.sources)
    if (s.density.size() != n) return std::nullopt;

  const int sources = static_cast<int>(c.sources.size());
  const auto key_of = [&](std::size_t i) {
    Key k;
    k.v[0] = c.conductivity[i];
    k.v[1] = c.capacity[i];
    k.v[2] = transfer ? c.transfer[i] : 0.0;
    for (int s = 0; s < sources; ++s)
      k.v[3 + s] = c.sources[static_cast<std::size_t>(s)].density[i];
    return k;
  };
  NodeClasses out;
  const std::optional<std::vector<Key>> keys = classify<Key>(n, key_of, max_classes, out.id);
  if (!keys) return std::nullopt;
  for (const Key& k : *keys) {
    out.conductivity.push_back(k.v[0]);
    out.capacity.push_back(k.v[1]);
    out.transfer.push_back(k.v[2]);
    std::array<double, kMaxSourceFields> q{};
    for (int s = 0; s < sources; ++s) q[static_cast<std::size_t>(s)] = k.v[3 + s];
    out.source.push_back(q);
  }
  return out;
}

std::optional<CoefficientTraffic> coefficient_traffic(const StencilProblem& p,
                                                      const Capabilities& caps) {
  if (!p.coefficients || p.coefficients->temperature) return std::nullopt;
  const CoefficientFields& c = *p.coefficients;
  const double value = p.precision == Precision::fp64 ? 8.0 : 4.0;
  const bool faces = c.has_faces();
  CoefficientTraffic out;
  if (caps.compact_materials && (!faces || caps.compact_faces) &&
      find_node_classes(c, p.points(), faces ? kMaxNodeClasses : kPairClasses,
                        caps.compact_transfer)) {
    bool compact = true;
    for (int a = 0; a < p.dims && faces; ++a)
      compact = compact && find_value_classes(c.faces[static_cast<std::size_t>(a)]).has_value();
    if (compact) {
      out.layout = faces ? CoefficientLayout::face_classes : CoefficientLayout::classes;
      out.bytes = 2.0 * value + 1.0 + (faces ? p.dims : 0);
      return out;
    }
  }
  // u in and out, dt/C, k or a face array per axis, each source, the surfaces' transfer.
  out.layout = faces ? CoefficientLayout::faces : CoefficientLayout::fields;
  const double arrays = 3.0 + (faces ? p.dims : 1) + static_cast<double>(c.sources.size()) +
                        (c.transfer.empty() ? 0.0 : 1.0);
  out.bytes = arrays * value;
  return out;
}

template <typename T>
std::optional<ValueClasses<T>> find_value_classes(const std::vector<T>& values, int max_classes) {
  ValueClasses<T> out;
  const auto key_of = [&](std::size_t i) { return ValueKey<T>{values[i]}; };
  const auto keys = classify<ValueKey<T>>(values.size(), key_of, max_classes, out.id);
  if (!keys) return std::nullopt;
  for (const ValueKey<T>& k : *keys) out.value.push_back(k.v);
  return out;
}

template std::optional<ValueClasses<float>> find_value_classes(const std::vector<float>&, int);
template std::optional<ValueClasses<double>> find_value_classes(const std::vector<double>&, int);

}  // namespace heatsim::kernels
