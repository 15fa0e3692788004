// What a run needs in memory, on the host and on the device apart, counted from what it
// allocates: the field in the backend, the coefficient fields, the multigrid solver
// (solver/multigrid_footprint.hpp), the copies on the host for output and checkpoints, the
// files built in memory before they are written. `validate` prints it; `run` refuses a case
// that does not fit. The parts that live for the whole run add up; of the ones that come and go
// (the set-up, each output, materials.h5), the largest counts.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "case.hpp"

namespace heatsim::solver {

struct MemoryPart {
  std::string what;
  double bytes = 0.0;
};

struct MemoryEstimate {
  std::vector<MemoryPart> host;    // for the whole run
  MemoryPart host_transient;       // the largest of the parts that come and go
  // What host_transient is made of, where it is a phase of several parts (a steady run's
  // solve, then its output: ImplicitStepper::release_levels); empty otherwise.
  std::vector<MemoryPart> host_transient_parts;
  std::vector<MemoryPart> device;  // empty on the CPU
  double host_bytes() const;
  double device_bytes() const;
};

// The executable, its libraries and their start-up, measured as the peak resident set of a run
// of a 9^3 grid on Debian 12 (an MPI build, started without mpirun): about 19 MiB.
inline constexpr double kProcessBytes = 19.0 * 1024 * 1024;

// A linear steady solve on one process on the CPU lets the case's coefficient fields and
// material ids go before its levels are built, and lays them on the grid again after the solve
// for the output, the materials file and the heat flows, where they hold at least
// kReleasedFieldsBytes. Below that they are small beside a machine's memory, and the second
// laying costs as much as the first (the 3D heat-sink example on one thread: 0.18 s of a
// 0.57 s run). Nor where they are at most 1/kKeptFieldsShare of the host memory available: there
// the second laying is time a user waits for memory the machine has (a 257^3 box inclusion on
// 2 cores: 1.5-1.8 s of a 6.5 s set-up for 0.9 GB of 21 GB). The homogeneous shorthand's fields
// are the solver's own: let go always, nothing to lay again.
inline constexpr double kReleasedFieldsBytes = 256.0 * 1024 * 1024;
inline constexpr double kKeptFieldsShare = 8.0;
bool steady_releases_fields(const Case& c, int source_fields, bool on_gpu);

// Whether the body's conductances form two or more strong pieces as the multigrid's deflation
// finds them (solver/multigrid/deflation.hpp: components of the links within kStrongRatio of
// the largest along their axis, of kMinPieceNodes free nodes or more), here from the faces of
// the coefficient fields, the nodes of Dirichlet faces fixed. Only such a body deflates a
// solve that proves slow; a single inclusion never does. One pass over the faces and two
// arrays of 4 bytes a node.
bool forms_strong_pieces(const Case& c, const kernels::CoefficientFields& fields);

// `source_fields`: the coefficient fields' sources (kernels::CoefficientFields); `on_gpu`: the
// backend runs on a CUDA device; `ghost`: the backend's ghost width (radius times the fusion
// depth for a fusing backend, the radius otherwise); `strong_pieces`: the body forms two or
// more strong pieces (forms_strong_pieces; true where not known: the larger case).
MemoryEstimate estimate_memory(const Case& c, int source_fields, bool on_gpu, int ghost,
                               bool strong_pieces = true);

// MemAvailable from /proc/meminfo, in bytes; 0 when unknown.
double host_memory_available();

// "232.9 MiB": bytes in binary units, one decimal.
std::string format_bytes(double bytes);

}  // namespace heatsim::solver
