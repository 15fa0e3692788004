// The text a run logs and prints: durations, the writer's activity, the summary's lines.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "io/file_writer.hpp"
#include "kernels/backend.hpp"
#include "solver/case.hpp"
#include "solver/heat_flows.hpp"
#include "solver/multigrid/implicit_stepper.hpp"
#include "solver/simulation.hpp"

namespace heatsim::run {

// "12.3s", "4m05s", "2h01m".
std::string format_seconds(double s);
// A solve's time: milliseconds below a second, three digits.
std::string format_solve_seconds(double s);

// What the summary says after the achieved rate on a GPU: the fraction of the binding limit
// (solver/roofline.hpp), ": 41% of the memory-bandwidth bound ...". The copy bandwidth is
// measured after the run with CUDA events, the median of 5 copies of 64-256 MiB (longer than a
// launch, larger than the L2 cache). Nothing is said on the CPU: a copy timed on the host beside
// other work is not a measurement (one 2-core machine gave 0.72 to 166 GB/s from run to run),
// and `heatsim bench` is the place for bounds. Nor is anything said when the measured bound is
// below what the run reached: a fraction above 100% would only show the measurement was off.
std::string bound_summary(const kernels::StencilProblem& problem, kernels::Backend& backend,
                          double achieved_gstencils);

// Where the run's wall time went, the summary's `time:` line. Output and checkpoints carry
// what they wrote (the files' sizes, in GB of 1e9 bytes as dd counts them) and the rate, so a
// run's writing can be held against the disk's sequential speed (scripts/io-speed).
struct WallTime {
  const char* stepping_name = "stepping";  // "solve" for a steady state
  double setup = 0.0;                      // case, fields, initial field, backend, materials file
  double stepping = 0.0;                   // advancing the backend (a steady state: its solve)
  // The run's own thread on files: staging fields and waiting for the writer thread (a
  // decomposed run, which writes on its own thread: all of its writing).
  double files = 0.0;
  double waited = 0.0;       // of `files`, waiting for the writing to finish
  double output = 0.0;       // writing output files and the index (the writer's time)
  double checkpoints = 0.0;  // writing checkpoint files
  bool writes_checkpoints = true;  // false for a steady state: no checkpoints item on the line
  double output_bytes = 0.0;
  double checkpoint_bytes = 0.0;
};
// "time: setup 1.204 s, stepping 0.200 s, files 0.402 s, other 0.310 s; total 2.1 s; output
// 3.114 s (17.180 GB, 5.52 GB/s), checkpoints ...; 3.7 of 4.1 s of writing hidden (90%)": the
// parts before `total` add up to it, `other` being the rest (NaN checks, progress, probes, the
// bound's copy measurement, the summary); the writing after it ran on the writer thread, and
// what of it the run did not wait for (it stepped or did other work meanwhile) was hidden. A
// run that writes no checkpoints by its nature (a steady state) has no checkpoints item; a
// transient one keeps it, 0 s when its schedule wrote none.
std::string describe_wall_time(const WallTime& t, double total);

// What the writer thread does, for the progress line: "writing field_00000100.h5 (0.53 of
// 1.07 GB, 0.45 GB/s)" (a file under 1 GB in MB: "(2.20 of 4.26 MB, 0.11 GB/s)"), or
// "building ..." before the file's bytes go out.
std::string describe_writer(const io::WriterActivity& a);

// "multigrid: 20 solves, 104 iterations (5.2 per solve); solve 278 ms in total, ...".
std::string describe_solves(const solver::multigrid::ImplicitStepper::Timing& t);

// The summary's first line. Explicit steps: the steps, the time reached, the rate and
// `bound()` (what bound_summary says); implicit steps: their multigrid iterations and solve
// time; a steady state (`steady`): its iterations, residuals and solve time. No GStencil/s for
// a solve: it is not a stencil sweep.
std::string done_line(const solver::RunResult& result, const std::string& where,
                      const solver::multigrid::ImplicitStepper* implicit,
                      const solver::multigrid::SolveReport* steady,
                      const std::function<std::string()>& bound);

// "heat flows into the body at the steady state (W per metre of depth):", a line per flow,
// and the imbalance against the largest flow, added to `lines`. `resolution` (0: not known):
// the rate below which the solve does not resolve a flow; where every flow is below it, the
// imbalance line says so instead of comparing rounding with rounding, and it answers true.
bool add_heat_flow_lines(std::vector<std::string>& lines, const solver::Case& c,
                         const std::string& when, const solver::HeatFlowReport& flows,
                         double resolution = 0.0);

}  // namespace heatsim::run
