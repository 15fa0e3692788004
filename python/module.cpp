// heatsim._heatsim: the run API (run/session.hpp) for Python. The package heatsim
// (python/heatsim/__init__.py) wraps it in the documented API (docs/python.md); this file only
// converts: cases in, numpy arrays and dicts out, run errors to Python exceptions. The GIL is
// released while a case is set up or stepped, and SIGINT (Ctrl-C) asks the run to stop at its
// next chunk of steps, after which KeyboardInterrupt is raised.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "io/field_file.hpp"
#include "kernels/registry.hpp"
#include "run/errors.hpp"
#include "run/log_streams.hpp"
#include "run/prepare.hpp"
#include "run/session.hpp"
#include "solver/version.hpp"

namespace py = pybind11;
using namespace heatsim;

namespace {

// Exception types, created once with the module and kept for the life of the process.
PyObject* g_run_refused = nullptr;  // ValueError: the case, an override or a restart refused
PyObject* g_case_error = nullptr;   // RunRefused: the case's problems
PyObject* g_diverged = nullptr;     // RuntimeError: NaN/Inf, or a solve stopped converging

// The stop request of the run being stepped: SIGINT sets it while the GIL is released.
std::atomic<int> g_stop{0};

extern "C" void on_interrupt(int sig) { g_stop.store(sig); }

// SIGINT sets g_stop (the stop request the session polls) from its making to its end, in place
// of Python's handler, which cannot run while the GIL is released; Python's is back afterwards,
// also when the work throws.
// SIGTERM (a batch scheduler's stop) asks the same: the run stops at its next chunk with its
// checkpoint written, as the command line's does, and then the signal is raised again under
// the process's own disposition (Python's default ends the process, exit 143 as the command
// line's; a handler installed with the signal module runs). Python's default took the process
// down at once, no checkpoint written and the failed-run mark's reservation left behind.
class StopOnInterrupt {
 public:
  StopOnInterrupt() {
    g_stop.store(0);
    struct sigaction ours {};
    ours.sa_handler = on_interrupt;
    sigemptyset(&ours.sa_mask);
    ours.sa_flags = SA_RESTART;
    sigaction(SIGINT, &ours, &theirs_);
    sigaction(SIGTERM, &ours, &theirs_term_);
  }
  ~StopOnInterrupt() {
    sigaction(SIGINT, &theirs_, nullptr);
    sigaction(SIGTERM, &theirs_term_, nullptr);
  }
  StopOnInterrupt(const StopOnInterrupt&) = delete;
  StopOnInterrupt& operator=(const StopOnInterrupt&) = delete;
  // The signal that came (0: none), taken.
  int signal() { return g_stop.exchange(0); }

 private:
  struct sigaction theirs_ {}, theirs_term_ {};
};

// After a stop on SIGTERM (its handlers back in place): the signal again, under the process's
// own disposition; a Python handler it runs may raise, which is thrown on.
void pass_on_terminate(const std::string& said) {
  spdlog::warn("{}", said);  // the command line's warning: the process may end next
  std::raise(SIGTERM);
  if (PyErr_CheckSignals() != 0) throw py::error_already_set();
}

// Raises KeyboardInterrupt for signal `sig` after `when` (" at step N", " during the set-up"),
// naming the checkpoint that continues the run where the session stopped with one.
std::string interrupt_message(const run::Session& session, int sig, const std::string& when) {
  const std::string& checkpoint = session.last_checkpoint();
  const bool stopped = session.finished() && session.summary().interrupted;
  std::string message = "interrupted by signal " + std::to_string(sig) + when;
  if (stopped)
    message += checkpoint.empty() ? std::string("; nothing written (no output_dir)")
                                  : "; checkpoint " + checkpoint + " (restart=\"" + checkpoint +
                                        "\", output_dir=\"" +
                                        session.run_case().output.directory +
                                        "\" continues the run)";
  return message;
}

[[noreturn]] void raise_interrupt(const run::Session& session, int sig, const std::string& when) {
  PyErr_SetString(PyExc_KeyboardInterrupt, interrupt_message(session, sig, when).c_str());
  throw py::error_already_set();
}

// Runs `step` of `session` without the GIL, with SIGINT asking the session to stop; raises
// KeyboardInterrupt when it did, naming the step and the checkpoint that continues the run (the
// command line's warning, which Python's default log level does not show without a message).
// A Session takes one call at a time. A call that releases the GIL (stepping, set_field,
// checkpoint) marks its session busy until it returns, and any call on that session from
// another thread meanwhile raises RuntimeError instead of stepping it, setting or reading its
// field under the steps (two threads' advance() on one Simulation corrupted its field and
// could abort the process). The set is guarded by the GIL.
std::set<const run::Session*> g_busy;

void check_idle(const run::Session& s) {
  if (g_busy.count(&s) > 0)
    throw std::runtime_error(
        "this Simulation is busy in another thread (stepping, set_field or checkpoint); a "
        "Simulation takes one call at a time: wait for that call to return, or give each thread "
        "a Simulation of its own");
}

class Busy {
 public:
  explicit Busy(const run::Session& s) : session_(&s) {
    check_idle(s);
    g_busy.insert(session_);
  }
  ~Busy() { g_busy.erase(session_); }
  Busy(const Busy&) = delete;
  Busy& operator=(const Busy&) = delete;

 private:
  const run::Session* session_;
};

// A getter of the session that first checks it is not busy in another thread.
template <class F>
auto idle(F get) {
  return [get](const run::Session& s) {
    check_idle(s);
    return get(s);
  };
}

void stepping(const run::Session& session, const std::function<void()>& step) {
  const Busy busy(session);
  int sig = 0;
  {
    StopOnInterrupt interrupts;
    {
      py::gil_scoped_release release;
      step();
    }
    sig = interrupts.signal();
  }
  const std::string when = session.finished() && session.summary().interrupted
                               ? " at step " + std::to_string(session.step())
                               : std::string();
  if (sig == SIGTERM) pass_on_terminate(interrupt_message(session, sig, when));
  if (sig != 0) raise_interrupt(session, sig, when);
}

// A case from Python: "file" (a path), "text" (YAML) or "dict" (the YAML the package rendered
// from a dict: its line numbers mean nothing to the caller and are left out).
run::CaseSource case_source(const std::string& kind, const std::string& source) {
  if (kind == "file") return run::CaseSource::file(source);
  if (kind == "text") return run::CaseSource::yaml(source, "<text>");
  if (kind == "dict") return run::CaseSource::yaml(source, "<dict>");
  throw std::invalid_argument("case kind must be file, text or dict, not '" + kind + "'");
}

run::Overrides overrides(std::optional<std::string> backend, std::optional<std::int64_t> steps,
                         std::optional<std::string> precision,
                         std::optional<std::string> output_dir) {
  run::Overrides o;
  o.backend = std::move(backend);
  o.steps = steps;
  o.precision = std::move(precision);
  o.output_dir = std::move(output_dir);
  return o;
}

// What a dict case's problems say without lines.
std::vector<io::CaseError> without_lines(std::vector<io::CaseError> errors) {
  for (io::CaseError& e : errors) e.line = 0;
  return errors;
}

// Sets up a session; a dict case's problems are reported without lines. The set-up holds a
// steady case's whole solve: SIGINT asks it to stop as it does the steps (stepping), and a
// signal during it raises KeyboardInterrupt (run::Interrupted's message where the solve stopped).
std::unique_ptr<run::Session> open_session(run::SessionOptions options, const std::string& kind) {
  std::unique_ptr<run::Session> session;
  int sig = 0;
  {
    StopOnInterrupt interrupts;
    {
      py::gil_scoped_release release;
      try {
        session = std::make_unique<run::Session>(std::move(options));
      } catch (const run::InvalidCase& e) {
        if (kind != "dict") throw;
        throw run::InvalidCase(e.origin(), without_lines(e.errors()));
      }
    }
    sig = interrupts.signal();
  }
  if (sig == SIGTERM) pass_on_terminate(interrupt_message(*session, sig, " during the set-up"));
  if (sig != 0) raise_interrupt(*session, sig, " during the set-up");
  return session;
}

template <class T>
py::array field_array(const run::Session& s) {
  py::array_t<T> a(s.shape());
  T* data = a.mutable_data();
  {
    py::gil_scoped_release release;
    s.field(data);
  }
  return a;
}

py::dict rows_dict(const run::Rows& rows) {
  py::dict d;
  d["step"] =
      py::array_t<std::int64_t>(static_cast<py::ssize_t>(rows.steps.size()), rows.steps.data());
  d["time"] = py::array_t<double>(static_cast<py::ssize_t>(rows.times.size()), rows.times.data());
  for (std::size_t k = 0; k < rows.names.size(); ++k) {
    py::array_t<double> column(static_cast<py::ssize_t>(rows.values.size()));
    double* out = column.mutable_data();
    for (std::size_t r = 0; r < rows.values.size(); ++r) out[r] = rows.values[r][k];
    d[py::str(rows.names[k])] = column;
  }
  return d;
}

py::dict summary_dict(const run::Summary& s) {
  py::dict d;
  d["backend"] = s.backend;
  d["interrupted"] = s.interrupted;
  d["steps"] = s.last_step - s.first_step;
  d["step"] = s.last_step;
  d["time"] = s.time;
  d["wall_seconds"] = s.wall_seconds;
  d["gstencils_per_second"] = s.gstencils_per_second;
  d["total_seconds"] = s.total_seconds;
  d["min"] = s.min;
  d["max"] = s.max;
  d["total_heat"] = s.total_heat;
  d["solves"] = s.solves;
  d["iterations"] = s.iterations;
  d["solve_seconds"] = s.solve_seconds;
  d["residual"] = s.residual;
  d["output"] = s.output.empty() ? py::object(py::none()) : py::object(py::str(s.output));
  d["lines"] = s.lines;
  return d;
}

py::dict meta_dict(const io::FieldMeta& m) {
  py::dict d;
  d["step"] = m.step;
  d["time"] = m.time;
  d["dt"] = m.dt;
  d["alpha"] = m.alpha;
  d["dims"] = m.dims;
  d["n"] = std::vector<std::int64_t>(m.n.begin(), m.n.begin() + m.dims);
  d["spacing"] = std::vector<double>(m.spacing.begin(), m.spacing.begin() + m.dims);
  d["origin"] = std::vector<double>(m.origin.begin(), m.origin.begin() + m.dims);
  d["scheme"] = m.scheme;
  d["backend"] = m.backend;
  d["precision"] = m.precision;
  d["version"] = m.version;
  d["case_yaml"] = m.case_yaml;
  d["fusion"] = m.fusion;
  d["steady"] = m.steady;
  return d;
}

// An output or checkpoint file: its attributes, its field as numpy [z][y][x] in the file's
// precision, and a checkpoint's field of the step before (bdf2) or None.
py::tuple read_file(const std::string& path) {
  io::FieldFile f;
  {
    py::gil_scoped_release release;
    f = io::read_field_file(path);
  }
  std::vector<py::ssize_t> shape;
  for (int a = f.meta.dims - 1; a >= 0; --a) shape.push_back(f.meta.n[a]);
  py::array field;
  if (f.meta.precision == "fp32") {
    py::array_t<float> a(shape);
    float* out = a.mutable_data();
    for (std::size_t i = 0; i < f.field.size(); ++i) out[i] = static_cast<float>(f.field[i]);
    field = a;
  } else {
    field = py::array_t<double>(shape, f.field.data());
  }
  py::object previous = py::none();
  if (!f.previous.empty()) previous = py::array_t<double>(shape, f.previous.data());
  py::dict meta = meta_dict(f.meta);
  meta["kind"] = io::to_string(f.kind);
  return py::make_tuple(meta, field, previous);
}

// The command line's words in a run's messages as the keywords this API takes for them:
// "--overwrite" is overwrite=True, "--restart PATH" restart="PATH", "-o DIR" output_dir=DIR,
// "--steps" steps=, and so on; a key path "--steps" is "steps".
std::string for_python(std::string text) {
  static const std::regex restart(R"(--restart ([^\s,;()]+))");
  text = std::regex_replace(text, restart, "restart=\"$1\"");
  static const std::vector<std::pair<std::regex, std::string>> words = {
      {std::regex(R"(--overwrite\b)"), "overwrite=True"},
      {std::regex(R"((^|[\s(])-o DIR\b)"), "$1output_dir=DIR"},
      {std::regex(R"((^|[\s(])--output-dir\b)"), "$1output_dir"},
      {std::regex(R"((^|[\s(])--(steps|backend|precision|restart)\b)"), "$1$2"},
  };
  for (const auto& [from, to] : words) text = std::regex_replace(text, from, to);
  return text;
}

void translate(std::exception_ptr p) {
  try {
    if (p) std::rethrow_exception(p);
  } catch (const run::InvalidCase& e) {
    PyErr_SetString(g_case_error, for_python(e.what()).c_str());
  } catch (const run::Interrupted& e) {
    // A steady solve stopped by Ctrl-C: the command line's message, nothing written.
    PyErr_SetString(PyExc_KeyboardInterrupt, for_python(e.what()).c_str());
  } catch (const run::RunError& e) {
    PyObject* type = e.failure() == run::Failure::invalid    ? g_run_refused
                     : e.failure() == run::Failure::diverged ? g_diverged
                                                             : PyExc_RuntimeError;
    PyErr_SetString(type, for_python(e.what()).c_str());
  }
}

}  // namespace

PYBIND11_MODULE(_heatsim, m) {
  m.doc() = "heatsim's run API; use the package heatsim";
  g_run_refused = PyErr_NewException("heatsim.RunRefused", PyExc_ValueError, nullptr);
  g_case_error = PyErr_NewException("heatsim.CaseError", g_run_refused, nullptr);
  g_diverged = PyErr_NewException("heatsim.Diverged", PyExc_RuntimeError, nullptr);
  m.attr("RunRefused") = py::handle(g_run_refused);
  m.attr("CaseError") = py::handle(g_case_error);
  m.attr("Diverged") = py::handle(g_diverged);
  py::register_exception_translator(&translate);
  m.attr("__version__") = heatsim::version();
  // The command line's streams: warnings and errors on stderr, the rest of the log on stdout.
  run::log_to_standard_streams();

  m.def(
      "set_log_level",
      [](const std::string& level) { spdlog::set_level(spdlog::level::from_str(level)); },
      py::arg("level"));

  m.def(
      "validate",
      [](const std::string& kind, const std::string& source, std::optional<std::string> backend,
         std::optional<std::int64_t> steps, std::optional<std::string> precision) {
        std::vector<io::CaseError> errors, warnings;
        {
          py::gil_scoped_release release;
          const run::CollectWarnings collect(warnings);
          try {
            run::prepare_run(case_source(kind, source),
                             overrides(std::move(backend), steps, std::move(precision), {}));
          } catch (const run::InvalidCase& e) {
            errors = e.errors();
          }
        }
        // The problems, then the warnings: (key path, line or None, message) each.
        const auto listed = [&](const std::vector<io::CaseError>& all) {
          py::list out;
          for (const io::CaseError& e : kind == "dict" ? without_lines(all) : all)
            out.append(
                py::make_tuple(for_python(e.path),
                               e.line > 0 ? py::object(py::int_(e.line)) : py::object(py::none()),
                               for_python(e.message)));
          return out;
        };
        return py::make_tuple(listed(errors), listed(warnings));
      },
      py::arg("kind"), py::arg("source"), py::arg("backend") = py::none(),
      py::arg("steps") = py::none(), py::arg("precision") = py::none());

  m.def("backends", [] {
    const bool gpu = kernels::cuda_device_count() > 0;
    py::list out;
    for (const kernels::BackendEntry& e : kernels::backend_registry()) {
      py::dict d;
      d["name"] = e.name;
      d["description"] = e.description;
      d["gpu"] = e.needs_gpu;
      d["available"] = !e.needs_gpu || gpu;
      out.append(d);
    }
    return out;
  });

  m.def("read", &read_file, py::arg("path"));

  py::class_<run::Session>(m, "Session")
      .def(py::init([](const std::string& kind, const std::string& source,
                       std::optional<std::string> backend, std::optional<std::int64_t> steps,
                       std::optional<std::string> precision, std::optional<std::string> output_dir,
                       const std::string& restart, bool overwrite, double progress_seconds) {
             // A negative or NaN interval would print a line at every step without a word (the
             // command line refuses them alike).
             if (!(progress_seconds >= 0.0) || !std::isfinite(progress_seconds))
               throw py::value_error(
                   "progress_seconds must be a number of seconds >= 0 (0: a line at every "
                   "step), got " +
                   py::repr(py::float_(progress_seconds)).cast<std::string>());
             run::SessionOptions o;
             o.source = case_source(kind, source);
             o.write_files = output_dir.has_value();
             o.overrides =
                 overrides(std::move(backend), steps, std::move(precision), std::move(output_dir));
             o.restart = restart;
             o.overwrite = overwrite;
             o.keep_rows = true;
             o.progress_seconds = progress_seconds;
             o.stop_flag = &g_stop;
             return open_session(std::move(o), kind);
           }),
           py::arg("kind"), py::arg("source"), py::arg("backend") = py::none(),
           py::arg("steps") = py::none(), py::arg("precision") = py::none(),
           py::arg("output_dir") = py::none(), py::arg("restart") = "",
           py::arg("overwrite") = false, py::arg("progress_seconds") = 2.0)
      .def("advance",
           [](run::Session& s, std::int64_t steps) { stepping(s, [&] { s.advance(steps); }); })
      .def(
          "advance_to_step",
          [](run::Session& s, std::int64_t step) { stepping(s, [&] { s.advance_to_step(step); }); })
      .def("advance_to_time",
           [](run::Session& s, double time) { stepping(s, [&] { s.advance_to_time(time); }); })
      .def("run", [](run::Session& s) { stepping(s, [&] { s.run(); }); })
      .def_property_readonly("finished", idle([](const run::Session& s) { return s.finished(); }))
      .def_property_readonly("step", idle([](const run::Session& s) { return s.step(); }))
      .def_property_readonly("time", idle([](const run::Session& s) { return s.time(); }))
      .def_property_readonly("last_step", idle([](const run::Session& s) { return s.last_step(); }))
      .def_property_readonly("dt", idle([](const run::Session& s) { return s.plan().dt; }))
      .def_property_readonly("output_every",
                             idle([](const run::Session& s) { return s.run_case().output.every; }))
      .def_property_readonly("backend",
                             idle([](const run::Session& s) { return s.backend_name(); }))
      .def_property_readonly("precision",
                             idle([](const run::Session& s) { return s.fp32() ? "fp32" : "fp64"; }))
      .def_property_readonly("shape", idle([](const run::Session& s) { return s.shape(); }))
      .def("field", idle([](const run::Session& s) {
             return s.fp32() ? field_array<float>(s) : field_array<double>(s);
           }))
      .def("set_field",
           [](run::Session& s, py::array_t<double, py::array::c_style | py::array::forcecast> a) {
             const Busy busy(s);
             const std::vector<std::int64_t> shape = s.shape();
             bool same = a.ndim() == static_cast<py::ssize_t>(shape.size());
             for (std::size_t k = 0; same && k < shape.size(); ++k)
               same = a.shape(static_cast<py::ssize_t>(k)) == shape[k];
             if (!same) {
               std::string want;
               for (std::int64_t n : shape) want += (want.empty() ? "" : ", ") + std::to_string(n);
               throw py::value_error("the field's shape must be (" + want + ") ([z][y][x])");
             }
             std::vector<double> values(a.data(), a.data() + a.size());
             py::gil_scoped_release release;
             s.set_field(std::move(values));
           })
      .def("checkpoint",
           [](run::Session& s, const std::string& path) {
             const Busy busy(s);
             py::gil_scoped_release release;
             s.write_checkpoint(path);
           })
      .def("probes", idle([](const run::Session& s) { return rows_dict(s.probe_rows()); }))
      .def("heat_flows", idle([](const run::Session& s) { return rows_dict(s.heat_flow_rows()); }))
      .def("summary", idle([](const run::Session& s) { return summary_dict(s.summary()); }))
      .def_property_readonly("last_checkpoint",
                             idle([](const run::Session& s) { return s.last_checkpoint(); }));
}
