#include "initial_file.hpp"

#include <cstdint>
#include <filesystem>
#include <stdexcept>

#include "field_file.hpp"
#include "solver/stencil.hpp"

namespace heatsim::io {
namespace {

// "[48, 64]": dimensions slowest first.
std::string format_dims(const std::vector<std::int64_t>& d) {
  std::string s = "[";
  for (std::size_t i = 0; i < d.size(); ++i) s += (i ? ", " : "") + std::to_string(d[i]);
  return s + "]";
}

// The grid's dimensions as a dataset lists them: z, y, x over the active axes.
std::vector<std::int64_t> grid_dims(const solver::Case& c) {
  std::vector<std::int64_t> d;
  for (int a = c.grid.dims - 1; a >= 0; --a) d.push_back(c.grid.n[static_cast<std::size_t>(a)]);
  return d;
}

// "" when the dataset's dimensions, leading 1s dropped, are the grid's.
std::string shape_problem(const solver::Case& c, const Dataset& d) {
  std::vector<std::int64_t> dims = d.dims;
  while (dims.size() > 1 && dims.front() == 1) dims.erase(dims.begin());
  const std::vector<std::int64_t> want = grid_dims(c);
  if (dims == want) return "";
  static const char* const kOrder[3] = {"x", "y, x", "z, y, x"};
  return "dataset '" + c.initial.dataset + "' has dimensions " + format_dims(d.dims) +
         "; the grid needs " + format_dims(want) + " (" + kOrder[c.grid.dims - 1] +
         "): an initial field is read node for node, so it must come from a grid of this "
         "grid.n (give the case the grid of the run that wrote it, or write the field at these "
         "dimensions)";
}

}  // namespace

InitialFileProblem initial_file_problem(const solver::Case& c) {
  const std::string& path = c.initial.path;
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    return {"initial.path", std::filesystem::exists(path, ec) ? path + ": not a regular file"
                                                              : path + ": no such file"};
  Dataset d;
  try {
    d = read_dataset(path, c.initial.dataset, false);
  } catch (const DatasetError& e) {
    return {"initial.dataset", e.what()};
  } catch (const std::runtime_error& e) {
    return {"initial.path", e.what()};
  }
  const std::string shape = shape_problem(c, d);
  if (!shape.empty()) return {"initial.dataset", path + ": " + shape};
  return {};
}

std::vector<double> read_initial_field(const solver::Case& c) {
  const InitialFileProblem problem = initial_file_problem(c);
  if (!problem.message.empty()) throw std::invalid_argument(problem.key + ": " + problem.message);
  Dataset d = read_dataset(c.initial.path, c.initial.dataset, true);
  const std::string shape = shape_problem(c, d);  // the file may have changed since
  if (!shape.empty())
    throw std::invalid_argument("initial.dataset: " + c.initial.path + ": " + shape);
  std::vector<double> u = std::move(d.values);
  solver::set_dirichlet_nodes(c, u);
  const std::string bad = solver::first_non_finite(c, u);
  if (!bad.empty())
    throw std::invalid_argument("initial.path: " + c.initial.path + ": dataset '" +
                                c.initial.dataset + "' is " + bad + " (every node must be finite)");
  return u;
}

}  // namespace heatsim::io
