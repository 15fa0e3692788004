// The checks that need the body laid on the grid (resolve_body in case_loader.hpp): surface
// conditions on voids that face no body, sources inside voids, and pieces of the body the voids
// cut off. The solver finds the geometry (solver/subgrid.hpp, solver/body_geometry.hpp); this
// file words what it finds, with key paths and lines.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "case_check.hpp"
#include "case_loader.hpp"
#include "kernels/boundary_rules.hpp"
#include "solver/body_geometry.hpp"
#include "solver/materials.hpp"
#include "solver/memory_estimate.hpp"
#include "solver/stencil.hpp"
#include "solver/subgrid.hpp"

namespace heatsim::io {

namespace {

using solver::Case;
using solver::ShapeKind;

std::string indexed(const std::string& path, std::size_t i) {
  return path + "[" + std::to_string(i) + "]";
}

const char* shape_key(ShapeKind k) {
  switch (k) {
    case ShapeKind::box:
      return ".box";
    case ShapeKind::ball:
      return ".ball";
    case ShapeKind::where:
      return ".where";
    case ShapeKind::file:
      return ".file";
    default:
      return "";
  }
}

// "regions[2] (gap2)".
std::string region_name(const Case& c, std::size_t r) {
  const std::string& name = c.regions[r].name;
  return indexed("regions", r) + (name.empty() ? "" : " (" + name + ")");
}

// "regions[2] (gap2, line 14)": a region named in a message about another key.
std::string region_reference(const Case& c, std::size_t r, const check::Report& report) {
  const std::string& name = c.regions[r].name;
  const int line = report.line_of(indexed("regions", r));
  std::string inside = name;
  if (line > 0)
    inside += (inside.empty() ? "" : ", ") + std::string("line ") + std::to_string(line);
  return indexed("regions", r) + (inside.empty() ? "" : " (" + inside + ")");
}

bool conditioned(const solver::RegionSpec& r) {
  const kernels::BoundaryFace& s = r.surface;
  return kernels::needs_coefficients(s);  // convective or heat flux
}

bool covers(const Case& c, const solver::ShapeSpec& later, const solver::ShapeSpec& earlier);

// Whether a void region after region k paints over all of it (check_covered_regions says so).
bool under_later_void(const Case& c, std::size_t k) {
  for (std::size_t j = k + 1; j < c.regions.size(); ++j)
    if (c.regions[j].is_void && covers(c, c.regions[j].shape, c.regions[k].shape)) return true;
  return false;
}

// Void surfaces: a condition on a surface that faces no body applies nowhere. A void without a
// condition under a later void is left to check_covered_regions, which names that void.
void check_surfaces(const Case& c, const solver::VoidSurfaces& surfaces, check::Report& r) {
  for (std::size_t k = 0; k < c.regions.size(); ++k) {
    const solver::RegionSpec& region = c.regions[k];
    const solver::VoidSurface* surface = surfaces.find(k);
    if (!region.is_void || !surface || surface->area > 0.0) continue;
    const std::string p = indexed("regions", k);
    if (conditioned(region))
      r.error(p + ".surface",
              "the void faces no node of the body (it lies outside the domain, or inside other "
              "voids), so its surface condition applies nowhere; move the void, or remove "
              "surface");
    else if (!under_later_void(c, k))
      r.warning(p + shape_key(region.shape.kind),
                "the void faces no node of the body (it lies outside the domain, or inside other "
                "voids): it changes nothing");
  }
}

// The volume (as a fraction of the domain's, weighted as the total heat weighs nodes) of the
// per-node shares `share`.
double weighted_total(const Case& c, const std::vector<double>& share) {
  double total = 0.0;
  for (std::size_t i = 0; i < share.size(); ++i)
    total += share[i] * solver::node_weight(c, static_cast<std::int64_t>(i));
  return total;
}

// The fraction of the domain's volume that `shape` holds, the voids filled with material: what
// a source's shape holds of a body without voids.
double filled_share(const Case& c, const solver::ShapeSpec& shape) {
  if (c.materials.empty()) return std::numeric_limits<double>::infinity();
  Case filled = c;
  for (solver::RegionSpec& region : filled.regions)
    if (region.is_void) {
      region.is_void = false;
      region.material = c.materials.front().name;
      region.surface = solver::RegionSpec::insulated();
    }
  return weighted_total(c, solver::subgrid_fractions(filled, shape, solver::material_ids(filled)));
}

// Sources and voids: heat put where there is no body.
void check_sources(const Case& c, const std::vector<std::int32_t>& ids,
                   const solver::VoidSurfaces& surfaces, check::Report& r) {
  for (std::size_t s = 0; s < c.sources.size(); ++s) {
    const solver::SourceSpec& source = c.sources[s];
    const std::string p = indexed("sources", s) + shape_key(source.shape.kind);
    std::vector<std::size_t> voids;
    if (source.shape.kind == ShapeKind::file) {
      // A density per node: any on a node a void removed.
      for (std::size_t i = 0; i < source.density.size() && i < ids.size(); ++i)
        if (source.density[i] != 0.0 && ids[i] == solver::kVoid) {
          r.warning(indexed("sources", s) + ".file",
                    "gives heat to nodes inside voids (e.g. the node at " +
                        solver::node_location(c, static_cast<std::int64_t>(i)) +
                        "), which are no part of the body: that heat is left out");
          break;
        }
      continue;
    }
    // A source over the whole domain heats the body wherever it is.
    if (source.shape.kind == ShapeKind::everywhere) continue;
    for (std::size_t k = 0; k < c.regions.size(); ++k)
      if (c.regions[k].is_void && solver::shapes_overlap(c, source.shape, c.regions[k].shape))
        voids.push_back(k);
    if (voids.empty()) continue;
    std::string names;
    for (std::size_t k : voids) names += (names.empty() ? "" : ", ") + region_reference(c, k, r);
    // How much of the shape the body keeps.
    const double kept =
        weighted_total(c, solver::subgrid_fractions(c, source.shape, ids, surfaces.folds()));
    // Material painted over the voids after them (a chip in an "air" void, fins painted over
    // one) is body: the shape may lie wholly in it. The share the shape would have with every
    // void filled says whether the voids take any of it.
    if (kept > 0.0 && kept >= (1.0 - 1e-9) * filled_share(c, source.shape)) continue;
    if (kept == 0.0)
      r.error(p, "lies wholly inside the void" + std::string(voids.size() > 1 ? "s " : " ") +
                     names + ": it heats no part of the body; move the source, or the void");
    else
      r.warning(p, "overlaps the void" + std::string(voids.size() > 1 ? "s " : " ") + names +
                       ": the source heats only the body's part of its shape" +
                       (source.power ? " (its power is spread over that part)" : ""));
  }
}

// Whether a later region's shape holds all of an earlier one's inside the domain, so that the
// earlier one paints nothing (regions are painted in order, later ones win). Boxes and balls
// only (a `where` or file shape is not looked at, except that a file region assigns every
// node); within 1e-9 of a spacing.
bool covers(const Case& c, const solver::ShapeSpec& later, const solver::ShapeSpec& earlier) {
  if (later.kind == ShapeKind::everywhere || later.kind == ShapeKind::file) return true;
  if (later.kind == ShapeKind::where || earlier.kind == ShapeKind::where ||
      earlier.kind == ShapeKind::file || earlier.kind == ShapeKind::everywhere)
    return false;
  const int dims = c.grid.dims;
  // The earlier shape's bounds within the domain.
  std::array<double, 3> lo{}, hi{};
  double tol = std::numeric_limits<double>::infinity();
  for (int a = 0; a < dims; ++a) {
    const auto i = static_cast<std::size_t>(a);
    const double l = earlier.kind == ShapeKind::box ? earlier.lower[i]
                                                    : earlier.center[i] - earlier.radius;
    const double u = earlier.kind == ShapeKind::box ? earlier.upper[i]
                                                    : earlier.center[i] + earlier.radius;
    lo[i] = std::max(l, 0.0);
    hi[i] = std::min(u, c.grid.length[i]);
    if (lo[i] > hi[i]) return false;  // outside the domain: the region check says so
    tol = std::min(tol, 1e-9 * solver::spacing(c, a));
  }
  if (later.kind == ShapeKind::box) {
    for (int a = 0; a < dims; ++a) {
      const auto i = static_cast<std::size_t>(a);
      if (lo[i] < later.lower[i] - tol || hi[i] > later.upper[i] + tol) return false;
    }
    return true;
  }
  // A ball: every corner of a box inside it; a ball inside it when the centres' distance and
  // the earlier radius fit.
  const double r = later.radius + tol;
  if (earlier.kind == ShapeKind::ball) {
    double d2 = 0.0;
    for (int a = 0; a < dims; ++a) {
      const auto i = static_cast<std::size_t>(a);
      d2 += (earlier.center[i] - later.center[i]) * (earlier.center[i] - later.center[i]);
    }
    return std::sqrt(d2) + earlier.radius <= r;
  }
  for (int corner = 0; corner < (1 << dims); ++corner) {
    double d2 = 0.0;
    for (int a = 0; a < dims; ++a) {
      const auto i = static_cast<std::size_t>(a);
      const double x = (corner >> a) & 1 ? hi[i] : lo[i];
      d2 += (x - later.center[i]) * (x - later.center[i]);
    }
    if (d2 > r * r) return false;
  }
  return true;
}

// A region a later one paints over entirely has no effect: most often regions listed in the
// wrong order (a small part before the block around it). Warned at the earlier region, naming
// the later one.
void check_covered_regions(const Case& c, check::Report& r) {
  for (std::size_t i = 0; i < c.regions.size(); ++i) {
    const solver::RegionSpec& earlier = c.regions[i];
    for (std::size_t j = i + 1; j < c.regions.size(); ++j) {
      const solver::RegionSpec& later = c.regions[j];
      if (!covers(c, later.shape, earlier.shape)) continue;
      // The same material again over it: the result is the same either way.
      if (!earlier.is_void && !later.is_void && later.shape.kind != ShapeKind::file &&
          later.material == earlier.material)
        break;
      const std::string what = earlier.is_void ? "a void" : "material " + earlier.material;
      const std::string by = later.is_void ? "the void " + region_reference(c, j, r)
                                           : region_reference(c, j, r) + ", " +
                                                 (later.shape.kind == ShapeKind::file
                                                      ? std::string("a material map,")
                                                      : "material " + later.material + ",");
      // A void under a later void: listing it later would not make it part of the body.
      const std::string advice =
          earlier.is_void && later.is_void
              ? "remove it (the later void cuts out its shape and gives that shape's surface)"
              : "list it after " + indexed("regions", j) + " if it is to be part of the body";
      r.warning(indexed("regions", i) + shape_key(earlier.shape.kind),
                "paints " + what + " where " + by +
                    " paints over all of it later (regions are painted in order, later ones "
                    "win): the region has no effect; " +
                    advice);
      break;
    }
  }
}

// A `where` material painted inside a void whose surface has a condition: the void's surface
// takes the sides of box and ball shapes painted inside it (fins written as boxes over an "air"
// void), not a `where` shape's, whose sides facing the void stay insulated. Said at the
// painting region; a void without a condition is insulated all round, as its painted shapes'
// sides are.
void check_painted_voids(const Case& c, check::Report& r) {
  for (std::size_t k = 0; k < c.regions.size(); ++k) {
    const solver::RegionSpec& painted = c.regions[k];
    if (!painted.is_void && painted.shape.kind == ShapeKind::box) {
      // A box painted over a void between node planes: the body in a void conducts through
      // the nodes it holds, and one that holds none is lost whole (a 0.3 mm fin between planes
      // 0.5 mm apart carried nothing).
      bool holds_node = true;
      double thinnest = std::numeric_limits<double>::infinity(), spacing = 0.0;
      for (int a = 0; a < c.grid.dims; ++a) {
        const auto i = static_cast<std::size_t>(a);
        const double h = solver::spacing(c, a), tol = 1e-9 * h;
        const double lo = std::max(painted.shape.lower[i], 0.0);
        const double hi = std::min(painted.shape.upper[i], c.grid.length[i]);
        const double first = std::ceil((lo - tol) / h), last = std::floor((hi + tol) / h);
        if (last < first && hi - lo < thinnest) {
          holds_node = false;
          thinnest = hi - lo;
          spacing = h;
        }
      }
      std::string over;
      if (!holds_node)
        for (std::size_t v = 0; v < k; ++v)
          if (c.regions[v].is_void && solver::shapes_overlap(c, painted.shape, c.regions[v].shape))
            over += (over.empty() ? "" : ", ") + region_reference(c, v, r);
      if (!over.empty()) {
        char sizes[96];
        std::snprintf(sizes, sizeof sizes, "%.3g m thick between node planes %.3g m apart",
                      thinnest, spacing);
        r.warning(indexed("regions", k) + ".box",
                  "paints " + painted.material + " inside the void " + over + " but holds no "
                      "node (" + sizes + "): a body inside a void conducts through the nodes "
                      "it holds, so this one is lost whole; refine the grid to two nodes or more "
                      "across it, or move its bounds to take a node plane");
      }
      continue;
    }
    if (painted.is_void || painted.shape.kind != ShapeKind::where) continue;
    std::string names;
    for (std::size_t v = 0; v < k; ++v)
      if (c.regions[v].is_void && conditioned(c.regions[v]) &&
          solver::shapes_overlap(c, painted.shape, c.regions[v].shape))
        names += (names.empty() ? "" : ", ") + region_reference(c, v, r);
    if (names.empty()) continue;
    r.warning(indexed("regions", k) + shape_key(painted.shape.kind),
              "paints " + painted.material + " inside the void " + names +
                  ", whose surface condition reaches the sides of box and ball shapes painted "
                  "inside it but not a `where` shape's: the sides of this shape that face the "
                  "void stay insulated; give it as boxes or balls, or the space around it as "
                  "voids of their own");
  }
}

// Pieces of the body the voids cut off, and slivers of it they leave joined to nothing.
void check_pieces(const Case& c, const kernels::CoefficientFields& fields,
                  const std::vector<std::int32_t>& ids, check::Report& r) {
  const std::vector<solver::BodyPiece> all = solver::body_pieces(c, fields, ids);
  const bool steady = c.time.method == solver::TimeMethod::steady;
  // One piece that the voids keep from every face that would fix its temperature (a body
  // inside a void that holds all its faces): in a steady state nothing determines it. (A body
  // without voids that no face fixes is the steady solve's own refusal.)
  if (all.size() == 1 && steady && !all[0].anchored && !all[0].voids.empty()) {
    std::string names;
    for (std::size_t v : all[0].voids) names += (names.empty() ? "" : ", ") + region_name(c, v);
    r.error(indexed("regions", all[0].voids.front()) +
                shape_key(c.regions[all[0].voids.front()].shape.kind),
            "the body (" + std::to_string(all[0].nodes) + " node" +
                (all[0].nodes == 1 ? "" : "s") + ", beside " + names +
                ") touches no Dirichlet, convective or radiating face, and its void surfaces "
                "have no convective or radiating condition, so its steady temperature is not "
                "determined; give the void a surface condition (surface: {type: convective, "
                "...}), or let the body reach a face that has one");
    return;
  }
  if (all.size() < 2) return;
  std::vector<const solver::BodyPiece*> pieces, slivers;
  for (const solver::BodyPiece& p : all) (p.slivers ? slivers : pieces).push_back(&p);
  // Keyed at the first void beside a piece (its shape's key), naming all of them.
  const auto beside = [&](const solver::BodyPiece& p, std::string& names) {
    std::string path = "regions";
    for (std::size_t v : p.voids) {
      if (names.empty()) path = indexed("regions", v) + shape_key(c.regions[v].shape.kind);
      names += (names.empty() ? "" : ", ") + region_name(c, v);
    }
    return path;
  };
  const std::string undetermined =
      " has no Dirichlet node and no convective or radiating face or surface, so its steady "
      "temperature is not determined";

  // Parts of the body: in a steady state the ones nothing determines (errors), otherwise every
  // one but the largest (warnings).
  if (pieces.size() >= 2) {
    const bool any_undetermined =
        steady && std::any_of(pieces.begin(), pieces.end(),
                              [](const solver::BodyPiece* p) { return !p->anchored; });
    std::size_t largest = 0;
    for (std::size_t k = 1; k < pieces.size(); ++k)
      if (pieces[k]->nodes > pieces[largest]->nodes) largest = k;
    for (std::size_t k = 0; k < pieces.size(); ++k) {
      const solver::BodyPiece& piece = *pieces[k];
      const bool error = steady && !piece.anchored;
      if (any_undetermined ? !error : k == largest) continue;
      std::string names;
      const std::string path = beside(piece, names);
      std::ostringstream msg;
      msg << "the voids cut the body into " << pieces.size()
          << " pieces that exchange no heat; the piece of " << piece.nodes << " node"
          << (piece.nodes == 1 ? "" : "s") << " at " << solver::node_location(c, piece.first)
          << (names.empty() ? std::string() : " (beside " + names + ")");
      if (error && piece.heated) {
        msg << " has no Dirichlet node and no convective or radiating face or surface to take "
               "away the heat a source or a heat flux puts into it, so no steady state exists "
               "(its temperature rises without end); join it to the rest, give it a condition "
               "that takes heat away, or run a transient (time.method: backward-euler or bdf2)";
        r.error(path, msg.str());
      } else if (error) {
        msg << undetermined << "; join it to the rest, or give it a condition";
        r.error(path, msg.str());
      } else {
        msg << " is cut off from the rest";
        r.warning(path, msg.str());
      }
    }
  }
  // Slivers: a warning, or in a steady state an error where nothing determines them.
  for (const solver::BodyPiece* piece : slivers) {
    const bool error = steady && !piece->anchored;
    std::string names;
    const std::string path = beside(*piece, names);
    std::ostringstream msg;
    msg << piece->nodes << " node" << (piece->nodes == 1 ? "" : "s") << " at "
        << solver::node_location(c, piece->first)
        << (names.empty() ? std::string() : " (beside " + names + ")")
        << " hold slivers of the body whose faces all cross a void, so they conduct to no other "
           "node (a void's bound less than half a spacing past a node, on the void's side)";
    if (error)
      msg << ", and nothing fixes their steady temperature";
    else
      msg << ": their heat and any surface condition there stay in them";
    msg << "; put the void's bounds on node planes or halfway between nodes";
    if (error)
      r.error(path, msg.str());
    else
      r.warning(path, msg.str());
  }
}

// A contact between materials no two neighbouring nodes hold (either order, along any axis,
// the periodic wrap included) has no face to act on: most likely a wrong name or geometry.
// (Materials that meet only below the grid, a layer thinner than a spacing between two nodes of
// one of them, do take the contact, and are warned of too.)
void check_contacts(const Case& c, const std::vector<std::int32_t>& ids, check::Report& r) {
  if (c.contacts.empty()) return;
  const std::size_t m = c.materials.size();
  std::vector<char> touch(m * m, 0);
  std::array<std::int64_t, 3> n{1, 1, 1};
  for (int a = 0; a < c.grid.dims; ++a) n[static_cast<std::size_t>(a)] = c.grid.n[a];
  const std::int64_t points = n[0] * n[1] * n[2];
  if (static_cast<std::int64_t>(ids.size()) != points) return;
  std::int64_t stride = 1;
  for (int a = 0; a < c.grid.dims; ++a) {
    const std::int64_t na = n[static_cast<std::size_t>(a)];
    const bool periodic = c.boundary[2 * a].kind == solver::BoundaryKind::periodic;
    for (std::int64_t i = 0; i < points; ++i) {
      const std::int64_t along = i / stride % na;
      std::int64_t j = i + stride;
      if (along + 1 == na) {
        if (!periodic) continue;
        j = i - (na - 1) * stride;
      }
      const std::int32_t p = ids[static_cast<std::size_t>(i)], q = ids[static_cast<std::size_t>(j)];
      if (p < 0 || q < 0 || p == q) continue;
      touch[static_cast<std::size_t>(p) * m + static_cast<std::size_t>(q)] = 1;
      touch[static_cast<std::size_t>(q) * m + static_cast<std::size_t>(p)] = 1;
    }
    stride *= na;
  }
  const auto index = [&](const std::string& name) {
    for (std::size_t k = 0; k < m; ++k)
      if (c.materials[k].name == name) return k;
    return m;
  };
  std::vector<char> held(m, 0);  // per material: whether some node holds it
  for (const std::int32_t id : ids)
    if (id >= 0) held[static_cast<std::size_t>(id)] = 1;
  for (std::size_t k = 0; k < c.contacts.size(); ++k) {
    const auto& pair = c.contacts[k].between;
    const std::size_t p = index(pair[0]), q = index(pair[1]);
    if (p == m || q == m) continue;
    // A contact that dwarfs the conduction over a spacing on both its sides by more than fp64
    // resolves: the solves lose their digits (an imbalance left at the rounding floor) long
    // before the faces reach the insulation it stands for. Judged against the weaker side: a
    // contact beside a strong conductor dwarfs that conductor's spacing only because the
    // conductor is strong, which the materials' own warning names.
    double spacing = std::numeric_limits<double>::infinity();
    double kmin = std::numeric_limits<double>::infinity();
    for (int a = 0; a < c.grid.dims; ++a) {
      spacing = std::min(spacing, solver::spacing(c, a));
      for (std::size_t s : {p, q}) kmin = std::min(kmin, c.materials[s].conductivity_along(a));
    }
    const double dwarfs = c.contacts[k].resistance * kmin / spacing;
    if (dwarfs > 1e8) {
      char times[32];
      std::snprintf(times, sizeof times, "%.3g", dwarfs);
      r.warning(indexed("contacts", k),
                std::string("the contact's resistance is ") + times +
                    " times the materials' over a spacing: solves lose their digits to it (the "
                    "heat balance is left at the rounding floor); materials that exchange no "
                    "heat are separated by a void");
    }
    if (!touch[p * m + q]) {
      // A material that holds no node at all (a foil thinner than a spacing between two
      // contacts) has no temperature of its own on the grid: its spreading along itself is
      // shared between the nodes either side (docs/case-format.md, contacts).
      std::string unheld;
      for (std::size_t s : {p, q})
        if (!held[s]) unheld = c.materials[s].name;
      r.warning(indexed("contacts", k) + ".between",
                "no node of '" + pair[0] + "' neighbours a node of '" + pair[1] +
                    "' on the grid: the contact acts only where the two meet inside a spacing "
                    "(a layer thinner than the spacing between them); if they should touch, "
                    "check the names and the regions" +
                    (unheld.empty()
                         ? std::string()
                         : "; '" + unheld +
                               "' holds no node, so a layer of it conducts along itself only "
                               "approximately (its spreading shared between the nodes on either "
                               "side): put a node plane inside it where that spreading matters"));
    }
  }
}

// "regions[1].where: ..." -> the key path and the rest; a message without one is the regions'.
std::pair<std::string, std::string> keyed(const std::string& what) {
  const std::size_t colon = what.find(": ");
  const bool key = colon != std::string::npos &&
                   (what.rfind("regions", 0) == 0 || what.rfind("sources", 0) == 0 ||
                    what.rfind("physics", 0) == 0 || what.rfind("materials", 0) == 0 ||
                    what.rfind("contacts", 0) == 0) &&
                   what.find(' ') > colon;
  if (key) return {what.substr(0, colon), what.substr(colon + 2)};
  return {"regions", what};
}

}  // namespace

ResolvedBody resolve_body(const Case& c, const std::map<std::string, int>& lines,
                          bool check_memory) {
  ResolvedBody body;
  check::Report report(lines);
  if (check_memory) {
    // The run's own figure with no sources and no deflation, on the backend that needs less
    // of the host: what the run would need at least (its check, later, counts them all).
    const int radius = solver::scheme_radius(c.scheme);
    const double need = std::min(solver::estimate_memory(c, 0, false, radius, false).host_bytes(),
                                 solver::estimate_memory(c, 0, true, radius, false).host_bytes());
    const double have = solver::host_memory_available();
    if (have > 0.0 && need > have) {
      double points = 1.0;
      for (int a = 0; a < c.grid.dims; ++a) points *= static_cast<double>(c.grid.n[a]);
      char count[32];
      std::snprintf(count, sizeof count, "%.4g", points);
      report.error("grid.n", "not enough host memory: the run needs at least " +
                                 solver::format_bytes(need) + " for its " + count + " points and " +
                                 solver::format_bytes(have) +
                                 " is available; give fewer points (grid.n), or run it on a "
                                 "host with more memory");
      body.errors = std::move(report.errors);
      return body;
    }
  }
  try {
    body.material_ids = solver::material_ids(c);
    if (std::all_of(body.material_ids.begin(), body.material_ids.end(),
                    [](std::int32_t id) { return id == solver::kVoid; }))
      throw std::invalid_argument("regions: the voids remove every node; nothing is left to solve");
    body.surfaces = solver::void_surfaces(c, body.material_ids);
    check_surfaces(c, body.surfaces, report);
    check_painted_voids(c, report);
    check_covered_regions(c, report);
    check_sources(c, body.material_ids, body.surfaces, report);
    if (report.errors.empty()) {
      body.fields = solver::coefficient_fields(c, body.material_ids, body.surfaces);
      // A node whose control volume several voids cover together (none alone) keeps its
      // material's id from the regions but has no capacity: it is void too, for the
      // summaries, the material map and the probes.
      for (std::size_t i = 0; i < body.material_ids.size(); ++i)
        if (body.fields->capacity[i] == 0.0 && body.material_ids[i] >= 0)
          body.material_ids[i] = solver::kVoid;
      check_pieces(c, *body.fields, body.material_ids, report);
      check_contacts(c, body.material_ids, report);
    }
  } catch (const std::exception& e) {
    const auto [path, message] = keyed(e.what());
    report.error(path, message);
  }
  body.errors = std::move(report.errors);
  body.warnings = std::move(report.warnings);
  if (!body.errors.empty()) body.fields.reset();
  return body;
}

}  // namespace heatsim::io
