#include "field_inputs.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include "field_file.hpp"

namespace heatsim::io {
namespace {

std::string format_dims(const std::vector<std::int64_t>& d) {
  std::string s = "[";
  for (std::size_t i = 0; i < d.size(); ++i) s += (i ? ", " : "") + std::to_string(d[i]);
  return s + "]";
}

// "x = 0.1, y = 0.2": the coordinates of the node of memory-order index `node`.
std::string node_at(const solver::Case& c, std::int64_t node) {
  static const char* const kAxis[3] = {"x", "y", "z"};
  std::ostringstream s;
  s.precision(6);
  std::int64_t rest = node;
  for (int a = 0; a < c.grid.dims; ++a) {
    const std::int64_t n = c.grid.n[static_cast<std::size_t>(a)];
    s << (a ? ", " : "") << kAxis[a] << " = "
      << static_cast<double>(rest % n) * solver::spacing(c, a);
    rest /= n;
  }
  return s.str();
}

std::string file_key(const std::string& owner, const char* key) { return owner + ".file." + key; }

// The dataset a file shape names, read whole or as its structure; a problem instead when it
// cannot be read or does not have the grid's dimensions.
struct Loaded {
  Dataset data;
  FieldInputProblem problem;
};

Loaded load(const solver::Case& c, const std::string& owner, const solver::ShapeSpec& shape,
            bool with_data) {
  Loaded out;
  const std::string& path = shape.path;
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    out.problem = {file_key(owner, "path"), std::filesystem::exists(path, ec)
                                                ? path + ": not a regular file"
                                                : path + ": no such file"};
    return out;
  }
  try {
    out.data = read_dataset(path, shape.dataset, with_data);
  } catch (const DatasetError& e) {
    out.problem = {file_key(owner, "dataset"), e.what()};
    return out;
  } catch (const std::runtime_error& e) {
    out.problem = {file_key(owner, "path"), e.what()};
    return out;
  }
  const std::string shape_problem = grid_shape_problem(c, shape.dataset, out.data.dims);
  if (!shape_problem.empty())
    out.problem = {file_key(owner, "dataset"), path + ": " + shape_problem};
  return out;
}

// A region's map as integers, or its first problem: not integers, or an id `ids` does not name.
FieldInputProblem region_map(const solver::Case& c, std::size_t index,
                             std::vector<std::int64_t>* map) {
  const solver::RegionSpec& r = c.regions[index];
  const std::string owner = "regions[" + std::to_string(index) + "]";
  Loaded l = load(c, owner, r.shape, true);
  if (!l.problem.message.empty()) return l.problem;
  if (!l.data.integer)
    return {file_key(owner, "dataset"),
            r.shape.path + ": dataset '" + r.shape.dataset +
                "' holds floating-point numbers; a material map holds integers (one id per node)"};
  std::set<std::int64_t> named;
  for (const auto& [id, name] : r.ids) named.insert(id);
  std::map<std::int64_t, std::int64_t> unnamed;  // id -> its first node
  std::vector<std::int64_t> ids(l.data.values.size());
  for (std::size_t i = 0; i < ids.size(); ++i) {
    ids[i] = static_cast<std::int64_t>(std::llround(l.data.values[i]));
    if (!named.count(ids[i])) unnamed.emplace(ids[i], static_cast<std::int64_t>(i));
  }
  if (!unnamed.empty()) {
    const auto& [id, node] = *unnamed.begin();
    std::string others;
    if (unnamed.size() > 1) {
      others = " (and " + std::to_string(unnamed.size() - 1) + " more unnamed id";
      others += unnamed.size() > 2 ? "s: " : ": ";
      std::size_t shown = 0;
      for (auto it = std::next(unnamed.begin()); it != unnamed.end() && shown < 8; ++it, ++shown)
        others += (shown ? ", " : "") + std::to_string(it->first);
      if (unnamed.size() - 1 > shown) others += ", ...";
      others += ")";
    }
    return {owner + ".file.ids", r.shape.path + ": the map holds id " + std::to_string(id) +
                                     " (first at " + node_at(c, node) + ") that ids does not name" +
                                     others + "; give every id of the map a material"};
  }
  if (map) *map = std::move(ids);
  return {};
}

}  // namespace

std::string grid_shape_problem(const solver::Case& c, const std::string& dataset,
                               const std::vector<std::int64_t>& dims) {
  std::vector<std::int64_t> d = dims;
  while (d.size() > 1 && d.front() == 1) d.erase(d.begin());
  std::vector<std::int64_t> want;
  for (int a = c.grid.dims - 1; a >= 0; --a) want.push_back(c.grid.n[static_cast<std::size_t>(a)]);
  if (d == want) return "";
  static const char* const kOrder[3] = {"x", "y, x", "z, y, x"};
  return "dataset '" + dataset + "' has dimensions " + format_dims(dims) + "; the grid needs " +
         format_dims(want) + " (" + kOrder[std::clamp(c.grid.dims, 1, 3) - 1] + ")";
}

std::vector<FieldInputProblem> field_input_problems(const solver::Case& c) {
  std::vector<FieldInputProblem> out;
  for (std::size_t i = 0; i < c.regions.size(); ++i) {
    if (c.regions[i].shape.kind != solver::ShapeKind::file) continue;
    FieldInputProblem p = region_map(c, i, nullptr);
    if (!p.message.empty()) out.push_back(std::move(p));
  }
  for (std::size_t i = 0; i < c.sources.size(); ++i) {
    if (c.sources[i].shape.kind != solver::ShapeKind::file) continue;
    const Loaded l = load(c, "sources[" + std::to_string(i) + "]", c.sources[i].shape, false);
    if (!l.problem.message.empty()) out.push_back(l.problem);
  }
  return out;
}

void read_field_inputs(solver::Case& c) {
  for (std::size_t i = 0; i < c.regions.size(); ++i) {
    if (c.regions[i].shape.kind != solver::ShapeKind::file) continue;
    std::vector<std::int64_t> map;
    const FieldInputProblem p = region_map(c, i, &map);
    if (!p.message.empty()) throw std::invalid_argument(p.key + ": " + p.message);
    c.regions[i].map = std::move(map);
  }
  for (std::size_t i = 0; i < c.sources.size(); ++i) {
    solver::SourceSpec& s = c.sources[i];
    if (s.shape.kind != solver::ShapeKind::file) continue;
    const std::string owner = "sources[" + std::to_string(i) + "]";
    Loaded l = load(c, owner, s.shape, true);
    if (!l.problem.message.empty())
      throw std::invalid_argument(l.problem.key + ": " + l.problem.message);
    for (std::size_t k = 0; k < l.data.values.size(); ++k)
      if (!std::isfinite(l.data.values[k]))
        throw std::invalid_argument(file_key(owner, "dataset") + ": " + s.shape.path +
                                    ": dataset '" + s.shape.dataset + "' is not finite at " +
                                    node_at(c, static_cast<std::int64_t>(k)) +
                                    " (every node's density must be finite)");
    s.density = std::move(l.data.values);
  }
}

}  // namespace heatsim::io
