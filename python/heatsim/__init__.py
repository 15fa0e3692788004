"""heatsim from Python: run, inspect and script heat-conduction cases.

The module drives the same run as the command line (``heatsim run``): results are identical bit
for bit for the same case and backend. See docs/python.md.

    import heatsim
    result = heatsim.run("inputs/heat2d.yaml", steps=500)
    result.field          # numpy [z][y][x] in the run's precision
    result.summary        # what the summary line says

Cases are a path, YAML text, or a dict with the keys of the YAML. Overrides are the command
line's: ``backend``, ``steps``, ``precision`` and ``output_dir`` (the directory the run writes
its files to; None, the default, writes nothing), with ``overwrite`` and ``restart``.
"""

import decimal
import json
import numbers
import os
import re
import sys

try:
    import numpy as np
except ImportError as _missing:
    raise ImportError(
        f"heatsim needs NumPy, and this interpreter ({sys.executable}) has none: install it "
        f"(Debian: apt-get install python3-numpy; or pip install numpy), or run the interpreter "
        f"the module was built for (scripts/install-deps and README.md)") from _missing

from . import _heatsim
from ._heatsim import CaseError, Diverged, RunRefused

__all__ = ["run", "Simulation", "Result", "validate", "backends", "read", "set_log_level",
           "CaseError", "RunRefused", "Diverged", "__version__"]
__version__ = _heatsim.__version__

# The library logs what the command line prints as it runs (set-up, progress); a script asks
# for it with set_log_level("info").
_heatsim.set_log_level("warn")


_LOG_LEVELS = ("trace", "debug", "info", "warn", "error", "critical", "off")


def set_log_level(level):
    """The log's level: "debug", "info", "warn" (the default; "warning" too), "error" or "off"."""
    # The log labels its warnings "[warning]": that name, and any case, are taken too.
    if isinstance(level, str):
        level = level.lower()
        level = "warn" if level == "warning" else level
    # The library reads a name it does not know as "off", which would silence the warnings.
    if level not in _LOG_LEVELS:
        raise ValueError(f"unknown log level {level!r}: debug, info, warn, error or off "
                         f"(also trace and critical)")
    _heatsim.set_log_level(level)


def _plain(value, path=""):
    """`value` in the types YAML's JSON subset writes (dicts, lists, str, bool, int, float,
    None): NumPy scalars and arrays, and numbers of other kinds (Decimal, Fraction, longdouble),
    as Python's own; anything else a TypeError naming its key, as the case's messages do."""
    where = path or "the case"
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if isinstance(key, np.str_):
                key = str(key)
            if not isinstance(key, str):
                raise TypeError(f"{where}: a key of type {type(key).__name__} ({key!r}); a case's "
                                f"keys are strings")
            out[key] = _plain(item, f"{path}.{key}" if path else key)
        return out
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if isinstance(value, (list, tuple)):
        return [_plain(item, f"{where}[{i}]") for i, item in enumerate(value)]
    if isinstance(value, (np.bool_, bool)):
        return bool(value)
    if isinstance(value, (np.integer, int)):
        return int(value)
    if isinstance(value, (np.floating, float, numbers.Real, decimal.Decimal)):
        return float(value)
    if isinstance(value, (np.str_, str)):
        return str(value)
    if value is None:
        return None
    raise TypeError(f"{where}: a case value of type {type(value).__name__} ({value!r}) cannot be "
                    f"written as YAML: give a number, a string, a bool, a list or a dict")


# JSON has no NaN or infinity; YAML writes them .nan, .inf and -.inf, and the case's parser then
# names the key as it does in a file ("must be a finite number (got nan)").
_NON_FINITE_MARK = "\x00heatsim-non-finite\x00"
_NON_FINITE_YAML = {"nan": ".nan", "inf": ".inf", "-inf": "-.inf"}


def _marking_non_finite(value):
    """`value` with each float that is not finite replaced by a marked string."""
    if isinstance(value, (np.generic, np.ndarray)):
        value = value.tolist() if isinstance(value, np.ndarray) else value.item()
    if isinstance(value, float) and not np.isfinite(value):
        return _NON_FINITE_MARK + repr(value) + _NON_FINITE_MARK
    if isinstance(value, dict):
        return {key: _marking_non_finite(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_marking_non_finite(item) for item in value]
    return value


def _dict_yaml(case):
    """A dict case as YAML's JSON subset, numbers that are not finite as YAML writes them."""
    text = json.dumps(_marking_non_finite(_plain(case)), allow_nan=False)
    mark = json.dumps(_NON_FINITE_MARK)[1:-1]
    return re.sub('"' + re.escape(mark) + "(nan|inf|-inf)" + re.escape(mark) + '"',
                  lambda found: _NON_FINITE_YAML[found.group(1)], text)


def _case(case):
    """(kind, source) of a case: a dict (rendered as YAML's JSON subset), YAML text, or a path."""
    if isinstance(case, dict):
        return "dict", _dict_yaml(case)
    if isinstance(case, os.PathLike):
        return "file", os.fspath(case)
    if not isinstance(case, str):
        raise TypeError("a case is a path, YAML text or a dict, not " + type(case).__name__)
    # One line naming a YAML file is a path even with a colon in it (a case on one line is a
    # flow map, which does not end in .yaml).
    one_line = "\n" not in case
    if os.path.exists(case) or (one_line and (
            ":" not in case or case.rstrip().lower().endswith((".yaml", ".yml")))):
        return "file", case
    return "text", case


# "got the string '2.0e5'": a number a dict case holds as text.
_NUMBER_AS_TEXT = re.compile(r"got the string '([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)'")


def _hint_numbers_as_text(error):
    """A dict case's CaseError with a line on numbers held as text, or the error as it is.

    PyYAML (YAML 1.1) reads 2.0e5 and 1e3 as strings; heatsim's YAML (1.2) and the command
    line read them as numbers, so a case file that runs is refused once loaded with
    yaml.safe_load and passed as a dict.
    """
    found = _NUMBER_AS_TEXT.search(str(error))
    if not found:
        return error
    mantissa, _, exponent = found.group(1).lower().partition("e")
    written = (mantissa if "." in mantissa else mantissa + ".0") + (
        "e" + (exponent if exponent[:1] in "+-" else "+" + exponent) if exponent else "")
    return CaseError(f"{error}\n  (a number held as text: PyYAML reads 2.0e5 and 1e3 as "
                     f"strings; write {written} in the file, or pass heatsim the file's path or "
                     f"text instead of the dict)")


def _integer(name, value):
    """`value` as an int: Python's or NumPy's integers, not bool, float or str (TypeError)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an integer, not {type(value).__name__}")
    return int(value)


def _overrides(backend, steps, precision):
    """The command line's overrides, of the types it takes (TypeError naming the one that is
    not; the extension's own refusal would print the whole case)."""
    for name, value in (("backend", backend), ("precision", precision)):
        if value is not None and not isinstance(value, str):
            raise TypeError(f"{name} must be a string, not {type(value).__name__}")
    if steps is not None:
        steps = _integer("steps", steps)
        # Beyond 64 bits the extension's own refusal would print the whole case; within them
        # the run says what it takes (steps: must be >= 0, at most 1e15).
        if not -2**63 <= steps < 2**63:
            raise ValueError(f"steps must be from 0 to 1e15 (got {steps})")
    return {"backend": backend, "steps": steps, "precision": precision}


def _flag(name, value):
    """`value` as a bool: True or False (Python's or NumPy's), not "yes" or 1 (TypeError)."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, not {type(value).__name__}")
    return bool(value)


def _path(name, value):
    """`value` as a path string (str or os.PathLike), or None (TypeError naming the keyword)."""
    if value is None:
        return None
    if not isinstance(value, (str, os.PathLike)):
        raise TypeError(f"{name} must be a path (str or os.PathLike), not {type(value).__name__}")
    return os.fspath(value)


def _seconds(progress_seconds):
    if isinstance(progress_seconds, (bool, np.bool_)) or not isinstance(
            progress_seconds, (int, float, np.integer, np.floating)):
        raise TypeError(
            f"progress_seconds must be a number, not {type(progress_seconds).__name__}")
    return float(progress_seconds)


def _forward(name, doc):
    return property(lambda self: getattr(self._session, name), doc=doc)


class Simulation:
    """A case set up and ready to step; nothing is stepped until asked.

    Overrides are run()'s (help(heatsim.run)): backend, steps, precision, output_dir,
    overwrite, restart, progress_seconds. The field is a copy (numpy [z][y][x], in the run's precision);
    set_field() replaces it. Output files, probes.csv, heat_flows.csv and checkpoints are
    written on their schedules when output_dir is given, as the command line writes them.
    """

    def __init__(self, case, *, backend=None, steps=None, precision=None, output_dir=None,
                 overwrite=False, restart=None, progress_seconds=2.0):
        overrides = _overrides(backend, steps, precision)
        progress_seconds = _seconds(progress_seconds)
        overwrite = _flag("overwrite", overwrite)
        output_dir = _path("output_dir", output_dir)
        restart = _path("restart", restart)
        if restart == "":
            raise ValueError("restart needs a checkpoint file, got an empty path "
                             "(None, the default, starts from the case's initial field)")
        kind, source = _case(case)
        try:
            self._session = _heatsim.Session(
                kind, source, **overrides, output_dir=output_dir,
                restart="" if restart is None else restart, overwrite=overwrite,
                progress_seconds=progress_seconds)
        except CaseError as error:
            if kind != "dict":
                raise
            raise _hint_numbers_as_text(error) from None

    def advance(self, steps):
        """Advances `steps` steps (at most to the case's last step)."""
        # Past the 64 bits the extension takes, a count is past the last step all the same (its
        # ValueError, rather than pybind11's TypeError of incompatible arguments).
        self._session.advance(max(min(_integer("steps", steps), 2**62), -2**62))
        return self

    def advance_to(self, time):
        """Advances to the first step at or after `time`."""
        if isinstance(time, (bool, np.bool_)) or not isinstance(
                time, (int, float, np.integer, np.floating)):
            raise TypeError(f"time must be a number, not {type(time).__name__}")
        self._session.advance_to_time(float(time))
        return self

    def run(self):
        """Advances to the case's last step and returns the Result."""
        self._session.run()
        return Result(self)

    def outputs(self, every=None):
        """(time, field) now, at every multiple of `every` steps and at the last step (default:
        the case's output.every); every=0, as output.every: 0, is now and the last step only."""
        s = self._session
        every = _integer("every", every) if every is not None else s.output_every
        if every < 0:
            raise ValueError(f"every must be >= 0 (got {every}; 0: now and the last step only)")
        every = every or max(1, s.last_step)
        yield s.time, s.field()
        while s.step < s.last_step:
            s.advance(min(every - s.step % every, s.last_step - s.step))
            yield s.time, s.field()

    @property
    def field(self):
        return self._session.field()

    def set_field(self, values):
        # Real numbers only: a complex array lost its imaginary part with a warning, and strings
        # ("1.0"), booleans and None (as "not finite") were taken.
        a = np.asarray(values)
        if a.dtype.kind not in "iuf":
            raise TypeError(f"the field must hold real numbers (an integer or float array), "
                            f"not {a.dtype} values")
        self._session.set_field(a.astype(np.float64, copy=False))

    time = _forward("time", "The simulated time now.")
    step = _forward("step", "The step now.")
    last_step = _forward("last_step", "The case's last step (time.steps, time.end, steps=).")
    dt = _forward("dt", "The time step.")
    backend = _forward("backend", "The backend stepping the case.")
    precision = _forward("precision", "fp64 or fp32.")
    finished = _forward("finished", "Whether the run has ended (last step, Ctrl-C, an error).")

    @property
    def probes(self):
        """Rows so far: {"step", "time", and a numpy array per probe}."""
        return self._session.probes()

    @property
    def heat_flows(self):
        """Rows so far (output.heat_flows): {"step", "time", then heat_flows.csv's columns by
        their names with units, as "storage [W]"}; None without output.heat_flows, as Result's."""
        flows = self._session.heat_flows()
        return flows if len(flows) > 2 else None

    def checkpoint(self, path):
        """Writes a checkpoint of the field now; restart=path continues from it."""
        path = os.fspath(path)
        if not path:
            raise ValueError(f"checkpoint needs a file path, got {path!r}")
        self._session.checkpoint(path)

    def __repr__(self):
        return (f"<heatsim.Simulation step {self.step}/{self.last_step} t={self.time:.6g} "
                f"on {self.backend}>")


class Result:
    """A finished run: field, time, step, probes, heat_flows and summary."""

    def __init__(self, simulation):
        s = simulation._session
        self.field = s.field()
        self.time = s.time
        self.step = s.step
        self.probes = s.probes()
        flows = s.heat_flows()
        self.heat_flows = flows if len(flows) > 2 else None
        self.summary = s.summary()

    def __repr__(self):
        return f"<heatsim.Result step {self.step} t={self.time:.6g} field {self.field.shape}>"


def run(case, *, backend=None, steps=None, precision=None, output_dir=None, overwrite=False,
        restart=None, progress_seconds=2.0):
    """Runs `case` to its end and returns a Result.

    case: a path to a YAML file, YAML text, or a dict with the keys of the YAML
    (docs/case-format.md).

    Overrides, the command line's options:
      backend="cpu"          --backend: a name of backends(), or "auto"
      steps=500              --steps: replaces time.steps / time.end
      precision="fp32"       --precision: "fp64" or "fp32"
      output_dir="out/try"   --output-dir: writes the run's files there (None, the default,
                             writes nothing; probes and heat flows still come back)
      overwrite=True         --overwrite: replaces another run's files in output_dir
      restart="out/try/checkpoint_00000500.h5"   --restart: continues from a checkpoint
      progress_seconds=2.0   --progress-seconds: between progress lines (set_log_level("info"))

    The Result holds .field (numpy [z][y][x], in the run's precision), .time, .step,
    .probes ({"step", "time", an array per probe}), .heat_flows (with output.heat_flows: true,
    {"step", "time", then heat_flows.csv's columns by their names with units, as
    "face x- (convective) [W/m]", "storage [W/m]", "imbalance [W/m]"}; else None) and .summary (a
    dict of the summary's numbers, and "lines", the summary as `heatsim run` prints it).

    Errors: CaseError (the case or an override refused: every problem with its key and line),
    RunRefused (a checkpoint, output directory, backend or resource refused), Diverged (the
    field became NaN/Inf or a solve stopped converging), RuntimeError (I/O, device).
    Ctrl-C stops the run at its next chunk of steps and raises KeyboardInterrupt naming the
    step and, with output_dir, the checkpoint that continues it.

    To step by hand, inspect the field between steps or write checkpoints: Simulation.
    """
    return Simulation(case, backend=backend, steps=steps, precision=precision,
                      output_dir=output_dir, overwrite=overwrite, restart=restart,
                      progress_seconds=progress_seconds).run()


def validate(case, *, backend=None, steps=None, precision=None, warnings=False):
    """Every problem of `case` as (key path, line or None, message); empty when it can run.
    With warnings=True, (problems, warnings): the warnings the command line's validate prints
    too, in the same form."""
    overrides = _overrides(backend, steps, precision)
    kind, source = _case(case)
    problems, warned = _heatsim.validate(kind, source, **overrides)
    problems = [tuple(p) for p in problems]
    return (problems, [tuple(w) for w in warned]) if warnings else problems


def backends():
    """The compiled backends: name, description, whether it needs a GPU, whether it can run
    here."""
    return _heatsim.backends()


class FieldFile:
    """An output or checkpoint file: .field (numpy [z][y][x]), .meta (its attributes, a dict),
    .previous (a bdf2 checkpoint's field of the step before, or None)."""

    def __init__(self, meta, field, previous):
        self.meta = meta
        self.field = field
        self.previous = previous
        self.time = meta["time"]
        self.step = meta["step"]

    def __repr__(self):
        return f"<heatsim.FieldFile {self.meta['kind']} step {self.step} field {self.field.shape}>"


def read(path):
    """Opens an output or checkpoint file written by heatsim."""
    return FieldFile(*_heatsim.read(os.fspath(path)))
