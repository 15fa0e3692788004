// What a run's files see of a backend whose field is split over the ranks of an MPI run: each
// rank's owned block (collective file writes take it, restarts give it back) and a line for
// the log. The explicit steps' DecomposedBackend and the implicit and steady solves'
// DecomposedImplicitBackend are both.
#pragma once

#include <string>
#include <vector>

#include "decomposition.hpp"

namespace heatsim::solver::parallel {

class DistributedField {
 public:
  virtual ~DistributedField() = default;
  virtual const Decomposition& decomposition() const = 0;
  // This rank's owned nodes (decomposition().owned(), x fastest). Every rank calls it together.
  virtual void download_owned(std::vector<double>& values) = 0;
  // The reverse: each rank gives its owned nodes, and the field is whole again. Collective.
  virtual void upload_owned(const std::vector<double>& values) = 0;
  // One line for the run log: how the grid is split and what travels between the ranks.
  virtual std::string describe() const = 0;
  // One line for the run's summary: this rank's time in halo exchanges against its stepping
  // ("" where the holder does not measure it).
  virtual std::string exchange_summary() const { return {}; }
};

}  // namespace heatsim::solver::parallel
