// parallel: {decomposition: [px, py, pz], exchange_every: k}: how a run under mpirun splits
// the grid (solver/parallel); a run on one rank ignores it.
#include "case_parse.hpp"

namespace heatsim::io::parse {

void read_parallel(Reader& r, const YAML::Node& n, solver::Case& c) {
  const auto f = r.read_map(n, "parallel", {"decomposition", "exchange_every"});
  if (!f) return;
  if (auto v = Reader::field(*f, "decomposition")) {
    std::array<int, 3> procs{0, 0, 0};
    const bool ok = r.read_axis_list(
        *v, "parallel.decomposition", false, procs,
        [&](const YAML::Node& item, const std::string& path, int& out) {
          if (!r.read_int(item, path, out)) return false;
          if (out < 0) {
            r.error(path, item,
                    "must be >= 0 (got " + std::to_string(out) +
                        "; 0: chosen for the number of ranks)");
            return false;
          }
          return true;
        });
    if (ok) c.parallel.decomposition = procs;
  }
  if (auto v = Reader::field(*f, "exchange_every")) {
    int k = 0;
    if (r.read_int(*v, "parallel.exchange_every", k)) {
      if (k < 0)
        r.error("parallel.exchange_every", *v,
                "must be >= 0 (got " + std::to_string(k) + "; 0: the fusion depth)");
      else
        c.parallel.exchange_every = k;
    }
  }
}

}  // namespace heatsim::io::parse
