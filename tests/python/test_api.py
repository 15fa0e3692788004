# heatsim.validate, the errors, heatsim.read and heatsim.backends.
import os
import numpy as np
import pytest

import heatsim
from conftest import case_path, run_cli

BAD_CASE = """grid:
  dims: 2
  n: [64, 2]
  length: 1.0
physics: {alpha: -1.0}
boundary:
  all: {type: dirichlet, value: 0}
initial: {type: constant, value: 0}
time: {dt: auto, steps: 10}
"""


def test_validate_lists_every_problem_with_key_path_and_line(tmp_path):
    problems = heatsim.validate(BAD_CASE)
    assert ("grid.n[1]", 3, "must be >= 3 (got 2)") in problems, problems
    assert any(p[0] == "physics.alpha" and p[1] == 5 for p in problems), problems
    assert heatsim.validate(case_path("heat2d.yaml")) == []
    # The same problems as the command line's, line for line.
    (tmp_path / "bad.yaml").write_text(BAD_CASE)
    code, text = run_cli("validate", str(tmp_path / "bad.yaml"))
    assert code == 2
    for path, line, message in problems:
        assert f"{path}: {message} (line {line})" in text


def test_a_dict_cases_problems_have_no_line():
    problems = heatsim.validate({"grid": {"dims": 2, "n": [64, 2], "length": 1.0}})
    assert problems and all(line is None for _, line, _ in problems)
    assert any(path == "physics" for path, _, _ in problems)


def test_an_invalid_case_raises_the_command_lines_report(tmp_path):
    (tmp_path / "bad.yaml").write_text(BAD_CASE)
    code, text = run_cli("run", str(tmp_path / "bad.yaml"))
    assert code == 2
    with pytest.raises(heatsim.CaseError) as e:
        heatsim.run(str(tmp_path / "bad.yaml"))
    assert str(e.value) in text
    assert isinstance(e.value, ValueError)
    with pytest.raises(heatsim.CaseError, match="cannot open the case file 'no/such.yaml'"):
        heatsim.run("no/such.yaml")


def test_refusals_and_bad_overrides_raise_with_the_command_lines_message(tmp_path):
    code, text = run_cli("run", case_path("heat2d.yaml"), "--backend", "no-such-backend", "-o",
                         str(tmp_path / "o"))
    assert code == 2
    with pytest.raises(heatsim.RunRefused) as e:
        heatsim.run(case_path("heat2d.yaml"), backend="no-such-backend")
    assert str(e.value) in text
    with pytest.raises(heatsim.CaseError, match="must be fp64 or fp32"):
        heatsim.run(case_path("heat2d.yaml"), precision="fp16")
    # The command line's options in the messages are this API's keywords.
    with pytest.raises(heatsim.RunRefused, match="^restart: ") as e:
        heatsim.Simulation(case_path("heat2d.yaml"), restart=tmp_path / "missing.h5")
    with pytest.raises(heatsim.CaseError, match=r"steps: must be >= 0 \(got -1\)"):
        heatsim.run(case_path("heat2d.yaml"), steps=-1)
    assert ("steps", None, "must be >= 0 (got -1)") in heatsim.validate(case_path("heat2d.yaml"),
                                                                          steps=-1)
    heatsim.run(case_path("heat2d.yaml"), steps=2, output_dir=tmp_path / "busy")
    with pytest.raises(heatsim.RunRefused) as e:
        heatsim.run(case_path("heat2d.yaml"), steps=2, output_dir=tmp_path / "busy")
    assert "overwrite=True" in str(e.value) and "--overwrite" not in str(e.value), str(e.value)
    assert 'restart="' in str(e.value), str(e.value)
    sim = heatsim.Simulation(case_path("heat2d.yaml"), steps=20)
    with pytest.raises(ValueError, match="past the case's last step 20"):
        sim.advance(21)
    with pytest.raises(ValueError, match="shape"):
        sim.set_field(np.zeros(5))


def test_a_field_that_turns_nan_raises_diverged():
    # Faces held at 1.5e308: finite (set_field and the case refuse what is not), and order4's
    # weights overflow it within the steps.
    sim = heatsim.Simulation(
        "grid: {dims: 2, n: [30, 30], length: [1.0, 1.0]}\n"
        "physics: {alpha: 1.0}\n"
        "scheme: order4\n"
        "initial: {type: constant, value: 0}\n"
        "time: {dt: auto, steps: 100}\n"
        "boundary: {all: {type: dirichlet, value: 1.5e308}}\n")
    with pytest.raises(heatsim.Diverged, match="NaN/Inf"):
        sim.advance(100)


def test_read_gives_the_field_and_its_attributes(tmp_path):
    r = heatsim.run(case_path("heat2d.yaml"), steps=50, precision="fp32",
                    output_dir=tmp_path)
    f = heatsim.read(tmp_path / "field_00000050.h5")
    assert f.meta["kind"] == "output" and f.meta["precision"] == "fp32"
    assert f.meta["n"] == [256, 256] and f.step == 50 and f.time == r.time
    assert f.field.dtype == np.float32 and np.array_equal(f.field, r.field)
    assert "grid:" in f.meta["case_yaml"]
    with pytest.raises(RuntimeError):
        heatsim.read(tmp_path / "missing.h5")


def test_the_logs_warnings_are_on_stderr_and_its_information_on_stdout(capfd):
    # backward-euler at dt: auto warns that it takes the explicit limit's step.
    case = {"grid": {"dims": 1, "n": [33], "length": 1.0}, "physics": {"alpha": 1.0},
            "boundary": {"all": {"type": "dirichlet", "value": 0}},
            "initial": {"type": "constant", "value": 1.0},
            "time": {"method": "backward-euler", "steps": 2}, "backend": "cpu"}
    capfd.readouterr()
    heatsim.set_log_level("info")
    try:
        heatsim.run(case)
    finally:
        heatsim.set_log_level("warn")
    out, err = capfd.readouterr()
    assert "[warning]" in err and "time.dt: auto with backward-euler" in err, err
    assert "[info]" not in err, err
    assert "[info] backend cpu" in out, out
    assert "warning" not in out, out


def test_backends_name_the_cpu_reference():
    names = {b["name"]: b for b in heatsim.backends()}
    assert names["cpu"]["available"] and not names["cpu"]["gpu"]


def test_ctrl_c_names_the_checkpoint_that_continues_the_run(tmp_path):
    import os
    import signal
    import threading

    out = tmp_path / "out"
    sim = heatsim.Simulation(case_path("heat2d.yaml"), backend="cpu", steps=10_000_000,
                             output_dir=str(out))
    threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
    with pytest.raises(KeyboardInterrupt) as stopped:
        sim.advance(10_000_000)
    step = sim.step
    checkpoint = out / f"checkpoint_{step:08d}.h5"
    assert checkpoint.exists()
    assert str(stopped.value) == (
        f"interrupted by signal {int(signal.SIGINT)} at step {step}; checkpoint {checkpoint} "
        f'(restart="{checkpoint}", output_dir="{out}" continues the run)')
    # Without output_dir nothing is written, and the message says so.
    sim = heatsim.Simulation(case_path("heat2d.yaml"), backend="cpu", steps=10_000_000)
    threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
    with pytest.raises(KeyboardInterrupt, match=r"^interrupted by signal 2 at step [0-9]+; "
                       r"nothing written \(no output_dir\)$"):
        sim.advance(10_000_000)


def test_ctrl_c_stops_the_run_cleanly_and_other_threads_run_meanwhile():
    import os
    import signal
    import threading
    import time

    sim = heatsim.Simulation(case_path("heat2d.yaml"), backend="cpu", steps=10_000_000)
    ticks = []
    stop = threading.Event()

    def count():
        while not stop.is_set():
            ticks.append(1)
            time.sleep(0.01)

    counter = threading.Thread(target=count)
    counter.start()
    threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        sim.advance(10_000_000)
    stop.set()
    counter.join()
    assert time.monotonic() - started < 30
    assert 0 < sim.step < 10_000_000 and sim.finished
    with pytest.raises(RuntimeError, match="the run has ended, at step .* \\(interrupted\\)"):
        sim.advance(1)
    assert len(ticks) > 10  # the GIL was released while stepping
    # Python's own handler is back: a later SIGINT raises KeyboardInterrupt as usual.
    with pytest.raises(KeyboardInterrupt):
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(1)


def test_help_of_run_names_its_overrides_the_result_and_the_errors():
    # help(heatsim.run) is where a newcomer starts: it showed `run(case, **overrides)` and sent
    # the reader to Simulation, whose help sent them back to run().
    import inspect
    import pydoc
    params = inspect.signature(heatsim.run).parameters
    assert list(params) == list(inspect.signature(heatsim.Simulation).parameters)
    assert params["output_dir"].default is None and params["overwrite"].default is False
    text = pydoc.render_doc(heatsim.run, renderer=pydoc.plaintext)
    for word in ("backend", "steps", "precision", "output_dir", "overwrite", "restart",
                 "progress_seconds", ".field", ".probes", ".heat_flows", ".summary",
                 "CaseError", "RunRefused", "Diverged", "KeyboardInterrupt"):
        assert word in text, word
    assert "as for run()" not in pydoc.render_doc(heatsim.Simulation, renderer=pydoc.plaintext)


def test_a_number_that_pyyaml_read_as_text_is_named_with_the_way_to_write_it():
    # PyYAML (YAML 1.1) reads 2.0e5 and 1e3 as strings: the shipped wax store, loaded with
    # yaml.safe_load and passed as a dict, was refused with "got the string '2.0e5'" alone.
    case = {"grid": {"dims": 1, "n": [11], "length": [0.01]},
            "materials": {"wax": {"conductivity": 0.2, "density": 800, "specific_heat": 2000,
                                  "phase_change": {"solidus": 318, "liquidus": 320,
                                                   "latent_heat": "2.0e5"}}},
            "regions": [{"material": "wax"}],
            "boundary": {"all": {"type": "dirichlet", "value": 300}},
            "initial": {"type": "constant", "value": 300}, "time": {"dt": "auto", "steps": 1}}
    with pytest.raises(heatsim.CaseError) as e:
        heatsim.run(case)
    text = str(e.value)
    assert "materials.wax.phase_change.latent_heat: expected a number, got the string '2.0e5'" in text
    assert "2.0e+5" in text and "PyYAML" in text
    # A case that is text is the command line's: its message stays as it is.
    with pytest.raises(heatsim.CaseError) as e:
        heatsim.run(open(case_path("heat1d.yaml")).read().replace("alpha: 0.5", 'alpha: "0.5"'))
    assert "PyYAML" not in str(e.value)


def test_an_unknown_log_level_is_refused_and_leaves_the_level_as_it_was(capfd):
    # spdlog reads a name it does not know as "off": set_log_level("INFO") or "loud" silenced
    # the log's warnings and errors without a word.
    for level in ("loud", "INFO ", "warnings", ""):
        with pytest.raises(ValueError, match="debug, info, warn, error or off"):
            heatsim.set_log_level(level)
    case = {"grid": {"dims": 1, "n": [33], "length": 1.0}, "physics": {"alpha": 1.0},
            "boundary": {"all": {"type": "dirichlet", "value": 0}},
            "initial": {"type": "constant", "value": 1.0},
            "time": {"method": "backward-euler", "steps": 1}, "backend": "cpu"}
    capfd.readouterr()
    heatsim.run(case)
    out, err = capfd.readouterr()
    assert "[warning]" in err and "time.dt: auto with backward-euler" in err, err


def test_a_number_that_is_not_finite_in_a_dict_case_is_named_with_its_key():
    # JSON has no NaN: json.dumps refused the dict with "Out of range float values are not
    # JSON compliant", no key named, where the command line says which key and why.
    case = {"grid": {"dims": 1, "n": [11], "length": [float("inf")]},
            "physics": {"alpha": np.float32("nan")},
            "boundary": {"all": {"type": "dirichlet", "value": -np.inf}},
            "initial": {"type": "constant", "value": 0.0}, "time": {"dt": "auto", "steps": 1}}
    with pytest.raises(heatsim.CaseError) as e:
        heatsim.run(case)
    text = str(e.value)
    assert "physics.alpha: must be a finite number (got nan)" in text, text
    assert "grid.length[0]: must be a finite number (got inf)" in text, text
    assert "boundary.all.value: must be a finite number (got -inf)" in text, text
    problems = heatsim.validate(case)
    assert ("physics.alpha", None, "must be a finite number (got nan)") in problems, problems
    # A string that looks like the marker stays a string.
    case["physics"]["alpha"] = "nan"
    assert ("physics.alpha", None, "expected a number, got the string 'nan'") in \
        heatsim.validate(case)


def test_a_dict_cases_numbers_of_any_kind_are_taken_and_other_values_named_with_their_key():
    import decimal
    # np.longdouble's item() is a longdouble again: json recursed without end on it.
    case = {"grid": {"dims": 1, "n": [np.int64(11)], "length": [np.longdouble(1.0)]},
            "physics": {"alpha": decimal.Decimal("1")},
            "boundary": {"all": {"type": np.str_("dirichlet"), "value": 0.0}},
            "initial": {"type": "constant", "value": 1.0}, "time": {"dt": "auto", "steps": 2}}
    assert heatsim.run(case).step == 2
    for bad in ({1, 2}, b"dirichlet", 1 + 2j):
        case["physics"]["alpha"] = bad
        with pytest.raises(TypeError, match=r"physics\.alpha: a case value of type"):
            heatsim.run(case)


def test_an_override_of_the_wrong_type_is_named_without_the_case():
    # pybind11's own refusal printed the constructor's signature and the whole case as JSON.
    case = {"grid": {"dims": 1, "n": [11], "length": [1.0]}, "physics": {"alpha": 1.0},
            "boundary": {"all": {"type": "dirichlet", "value": 0.0}},
            "initial": {"type": "constant", "value": 1.0}, "time": {"dt": "auto", "steps": 4}}
    for overrides, message in (({"steps": "3"}, "steps must be an integer, not str"),
                               ({"steps": 3.0}, "steps must be an integer, not float"),
                               ({"steps": True}, "steps must be an integer, not bool"),
                               ({"backend": 1}, "backend must be a string, not int"),
                               ({"precision": b"fp32"}, "precision must be a string, not bytes"),
                               ({"progress_seconds": "2"},
                                "progress_seconds must be a number, not str"),
                               ({"overwrite": "yes"}, "overwrite must be True or False, not str"),
                               ({"output_dir": 5},
                                "output_dir must be a path (str or os.PathLike), not int"),
                               ({"restart": 5},
                                "restart must be a path (str or os.PathLike), not int")):
        for call in (heatsim.run, heatsim.Simulation):
            with pytest.raises(TypeError) as e:
                call(case, **overrides)
            assert str(e.value) == message, str(e.value)
    with pytest.raises(TypeError, match="steps must be an integer, not str"):
        heatsim.validate(case, steps="3")
    # Beyond 64 bits, and beyond the command line's 1e15: the limit, not pybind11's signature.
    for steps in (2**70, -2**64):
        with pytest.raises(ValueError, match="steps must be from 0 to 1e15"):
            heatsim.run(case, steps=steps)
    with pytest.raises(TypeError, match="time must be a number, not str"):
        heatsim.Simulation(case).advance_to("0.1")
    assert heatsim.run(case, steps=np.int64(2), progress_seconds=np.float32(1)).step == 2


def test_advance_to_a_time_that_is_not_finite_or_far_past_the_end_raises():
    # time / dt was cast to an integer as it was: NaN stepped nowhere without a word, and a
    # time past the integers' range was undefined behaviour.
    sim = heatsim.Simulation(case_path("heat2d.yaml"), steps=20)
    for time in (float("nan"), float("inf"), -float("inf")):
        with pytest.raises(ValueError, match="must be a finite time"):
            sim.advance_to(time)
    for time in (1e300, 1e30 * sim.dt):
        with pytest.raises(ValueError, match="past the case's last step 20"):
            sim.advance_to(time)
    assert sim.step == 0
    sim.advance_to(-1.0)  # a time already passed: nothing to do
    sim.advance_to(5 * sim.dt)
    assert sim.step == 5


def test_a_step_count_that_is_not_an_integer_is_refused():
    # int() truncated them: advance(0.5 / sim.dt) took one step too few without a word, and
    # advance("3") or outputs(every=2.5) went on as if given integers.
    sim = heatsim.Simulation(case_path("heat2d.yaml"), steps=20)
    for steps in (2.7, "3", None, True):
        with pytest.raises(TypeError, match="steps must be an integer, not " + type(steps).__name__):
            sim.advance(steps)
    for every in (2.5, "3", True):
        with pytest.raises(TypeError, match="every must be an integer, not " + type(every).__name__):
            next(sim.outputs(every=every))
    assert sim.step == 0
    sim.advance(np.int64(3))
    assert sim.step == 3
    assert [s for s, _ in sim.outputs(every=np.int32(8))] == pytest.approx(
        [3 * sim.dt, 8 * sim.dt, 16 * sim.dt, 20 * sim.dt])


def test_a_missing_case_file_whose_name_holds_a_colon_is_named_as_a_file(tmp_path):
    # One line with a colon was taken for YAML text: "the top level must be a map of sections
    # ..., got 'runs/case:2.yaml'" instead of the file that is not there.
    for name in ("runs/case:2.yaml", "C:/cases/board.yml", "run 2: board.YAML"):
        with pytest.raises(heatsim.CaseError) as e:
            heatsim.run(str(tmp_path / name))
        assert f"cannot open the case file '{tmp_path / name}'" in str(e.value), str(e.value)
    # Text on one line is still text, and a file with a colon in its name still runs.
    problems = heatsim.validate("{grid: {dims: 1, n: [2]}}")
    assert ("grid.n[0]", 1, "must be >= 3 (got 2)") in problems, problems
    path = tmp_path / "case:1.yaml"
    path.write_text(open(case_path("heat1d.yaml")).read())
    assert heatsim.run(str(path), steps=2).step == 2


def test_set_field_after_the_run_has_ended_is_refused():
    # It was accepted and read back by .field, though the end's files and summary were made
    # from the field before it.
    sim = heatsim.Simulation(case_path("heat2d.yaml"), steps=4)
    sim.set_field(np.zeros(sim.field.shape))
    before = sim.run().field
    assert sim.finished
    with pytest.raises(RuntimeError, match="the run has ended, at step 4: its field can no longer be set"):
        sim.set_field(np.ones(before.shape))
    np.testing.assert_array_equal(sim.field, before)


def test_set_field_refuses_values_that_are_not_finite():
    sim = heatsim.Simulation(case_path("heat2d.yaml"), steps=4)
    before = sim.field
    u = before.copy()
    u[3, 5] = np.nan
    u[7, 1] = np.inf
    with pytest.raises(ValueError, match="the field holds 2 values that are not finite"):
        sim.set_field(u)
    np.testing.assert_array_equal(sim.field, before)
    assert sim.run().step == 4


def test_checkpoint_never_writes_over_another_file(tmp_path):
    case = tmp_path / "c.yaml"
    case.write_text(open(case_path("heat2d.yaml")).read())
    text = case.read_text()
    sim = heatsim.Simulation(str(case), steps=6)
    sim.advance(2)
    with pytest.raises(ValueError, match="exists and is not a checkpoint this run wrote"):
        sim.checkpoint(str(case))
    assert case.read_text() == text
    other = tmp_path / "notes.h5"
    other.write_bytes(b"mine")
    with pytest.raises(ValueError, match="is not a checkpoint this run wrote"):
        sim.checkpoint(str(other))
    assert other.read_bytes() == b"mine"
    # Its own checkpoint again, later: written over, and it continues the run.
    here = tmp_path / "here.h5"
    sim.checkpoint(str(here))
    sim.advance(2)
    sim.checkpoint(str(here))
    assert heatsim.read(str(here)).step == 4
    # The same by a relative path (written once before it existed, then over itself).
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        sim.checkpoint("relative.h5")
        sim.advance(1)
        sim.checkpoint("relative.h5")
    finally:
        os.chdir(cwd)
    assert heatsim.read(str(tmp_path / "relative.h5")).step == 5
    # Another session's checkpoint of the same case, at a later step, is not this run's: kept.
    later = heatsim.Simulation(str(case), steps=6)
    later.advance(5)
    theirs = tmp_path / "theirs.h5"
    later.checkpoint(str(theirs))
    with pytest.raises(ValueError, match="is not a checkpoint this run wrote"):
        sim.checkpoint(str(theirs))
    assert heatsim.read(str(theirs)).step == 5


def test_progress_seconds_must_be_a_number_of_seconds():
    for bad in (-1, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="progress_seconds must be a number of seconds >= 0"):
            heatsim.run(case_path("heat2d.yaml"), steps=2, progress_seconds=bad)


def test_outputs_every_0_is_now_and_the_last_step_as_output_every_0():
    # every=0 fell back to the case's output.every (200 in heat2d.yaml) without a word.
    sim = heatsim.Simulation(case_path("heat2d.yaml"), steps=450)
    assert sim._session.output_every == 200
    assert [t for t, _ in sim.outputs(every=0)] == pytest.approx([0.0, 450 * sim.dt])
    assert sim.finished
    # The default is the case's schedule, the last step added.
    sim = heatsim.Simulation(case_path("heat2d.yaml"), steps=450)
    assert [t for t, _ in sim.outputs()] == pytest.approx(
        [0.0, 200 * sim.dt, 400 * sim.dt, 450 * sim.dt])
    sim = heatsim.Simulation(case_path("heat2d.yaml"), steps=450)
    sim.advance(7)
    assert [t for t, _ in sim.outputs(every=0)] == pytest.approx([7 * sim.dt, 450 * sim.dt])
    with pytest.raises(ValueError, match="every must be >= 0 \\(got -5"):
        next(sim.outputs(every=-5))


def test_sigterm_stops_the_run_with_its_checkpoint_and_then_takes_its_course(tmp_path):
    # Python's default took the process down at once: no checkpoint, the failed-run mark's
    # reservation left behind. Now the run stops as on Ctrl-C, then SIGTERM ends the process
    # (143), or runs the handler the script installed.
    import subprocess
    import sys
    script = tmp_path / "term.py"
    for handler, code in (("", -15), ("signal.signal(signal.SIGTERM, signal.default_int_handler)\n", 0)):
        out = tmp_path / ("out%d" % abs(code))
        script.write_text(
            "import os, signal, threading, heatsim\n" + handler +
            "threading.Timer(1.0, lambda: os.kill(os.getpid(), signal.SIGTERM)).start()\n"
            "try:\n"
            "    heatsim.run(%r, steps=10**7, output_dir=%r)\n"
            "except KeyboardInterrupt:\n"
            "    print('stopped')\n" % (case_path("heat2d.yaml"), str(out)))
        r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                           timeout=120, env=dict(os.environ, OMP_NUM_THREADS="1"))
        assert r.returncode == code, r.stdout + r.stderr
        assert "interrupted by signal 15" in r.stderr, r.stderr
        names = os.listdir(out)
        assert any(n.startswith("checkpoint_") for n in names), names
        assert not any(n.startswith("failed_run") for n in names), names
        if code == 0:
            assert "stopped" in r.stdout



def test_a_dict_cases_run_time_refusal_names_no_line():
    # The lines of the YAML rendered from a dict mean nothing to its author; a file's or text's
    # refusal names its line.
    case = {"grid": {"dims": 2, "n": [21, 21], "length": [0.1, 0.1]}, "physics": {"alpha": 1e-4},
            "boundary": {"all": {"type": "dirichlet", "value": 0}},
            "initial": {"type": "expression", "value": "1/(x-0.045)"},
            "time": {"dt": 0.01, "end": 0.02}}
    with pytest.raises(ValueError) as e:
        heatsim.run(case)
    assert "the expression is inf at node (9, 1)" in str(e.value), str(e.value)
    assert "(line" not in str(e.value), str(e.value)


def test_set_field_holds_the_dirichlet_faces_values_as_an_initial_field_does():
    # Dirichlet nodes take g(0) whatever an initial condition says; a field set from Python
    # kept its own values there for the first step, and the run differed from the command
    # line's with the same field as its initial one.
    case = {"grid": {"dims": 2, "n": [21, 17], "length": [1.0, 0.8]}, "physics": {"alpha": 1.0},
            "boundary": {"all": {"type": "insulated"},
                         "x-": {"type": "dirichlet", "value": [[0, 2.0], [1e-3, 3.0]]},
                         "y+": {"type": "dirichlet", "value": 0.5}},
            "initial": {"type": "constant", "value": 1.25}, "time": {"dt": "auto", "steps": 60}}
    held = heatsim.Simulation(case)
    case["initial"] = {"type": "constant", "value": 0.0}
    sim = heatsim.Simulation(case)
    sim.set_field(np.full(sim.field.shape, 1.25))
    assert sim.field[5, 0] == 2.0 and sim.field[-1, 7] == 0.5
    sim.advance(30)
    held.advance(30)
    np.testing.assert_array_equal(sim.field, held.field)
    # Between steps the faces' values now: g(t) of the table.
    g = 2.0 + min(sim.time / 1e-3, 1.0)
    sim.set_field(np.full(sim.field.shape, 1.25))
    assert sim.field[5, 0] == pytest.approx(g, rel=1e-15) and sim.field[-1, 7] == 0.5
    assert sim.field[5, 5] == 1.25


def test_a_simulation_busy_in_another_thread_refuses_other_calls(tmp_path):
    # Two threads' advance() on one Simulation corrupted its field and could abort Python.
    import threading
    import time
    steps = 2000
    sim = heatsim.Simulation(case_path("heat2d.yaml"), steps=steps)
    worker = threading.Thread(target=sim.advance, args=(steps,))
    worker.start()
    busy = None
    deadline = time.monotonic() + 60
    while busy is None and worker.is_alive() and time.monotonic() < deadline:
        try:
            sim.step
        except RuntimeError as e:
            busy = str(e)
    if busy is None:
        worker.join()  # its seconds of steps ended with every call of this thread accepted
    assert busy is not None, "calls from this thread were accepted during another's advance()"
    refused = []
    for attempt in (lambda: sim.advance(1), lambda: sim.field, lambda: sim.time,
                    lambda: sim.set_field(np.zeros((256, 256))),
                    lambda: sim.checkpoint(str(tmp_path / "x.h5"))):
        with pytest.raises(RuntimeError) as e:
            attempt()
        refused.append(str(e.value))
    worker.join()
    assert all("busy in another thread" in m for m in [busy] + refused), refused
    assert not (tmp_path / "x.h5").exists()
    assert sim.step == steps
    alone = heatsim.Simulation(case_path("heat2d.yaml"), steps=steps)
    alone.advance(steps)
    np.testing.assert_array_equal(sim.field, alone.field)


def test_set_field_advance_and_checkpoint_refuse_what_they_cannot_take(tmp_path):
    sim = heatsim.Simulation(case_path("heat2d.yaml"), steps=4)
    before = sim.field
    for bad in (before + 1j, before.astype(str), before > 0.5,
                np.full(before.shape, None)):
        with pytest.raises(TypeError, match="the field must hold real numbers"):
            sim.set_field(bad)
    np.testing.assert_array_equal(sim.field, before)
    sim.set_field(np.ones(before.shape, dtype=np.int32))  # integers are numbers
    with pytest.raises(ValueError):
        sim.advance(10**30)
    with pytest.raises(ValueError, match="checkpoint needs a file path"):
        sim.checkpoint("")
    assert sim.step == 0
    assert sim.run().step == 4


def test_validate_gives_the_warnings_the_command_line_prints(tmp_path):
    # They went to the log only: a sweep could not collect them, and with the log off they
    # were lost.
    text = BAD_CASE.replace("n: [64, 2]", "n: [64, 8]").replace("alpha: -1.0", "alpha: 1.0")
    text = text.replace("all: {type: dirichlet, value: 0}",
                        "all: {type: dirichlet, value: [[-2, 1], [-1, 0]]}")
    problems, warnings = heatsim.validate(text, warnings=True)
    assert problems == []
    assert heatsim.validate(text) == []
    assert any(path.startswith("boundary.all.value") and line == 7
               for path, line, _ in warnings), warnings
    (tmp_path / "warned.yaml").write_text(text)
    code, said = run_cli("validate", str(tmp_path / "warned.yaml"))
    assert code == 0
    for path, line, message in warnings:
        assert f"{path}: {message} (line {line})" in said
    # Beside a case's problems too, as the command line says both.
    problems, warnings = heatsim.validate(text.replace("n: [64, 8]", "n: [64, 2]"),
                                          warnings=True)
    assert ("grid.n[1]", 3, "must be >= 3 (got 2)") in problems
    assert any(path.startswith("boundary.all.value") for path, _, _ in warnings), warnings


def test_an_empty_restart_path_is_refused_not_taken_as_none(tmp_path):
    for start in (heatsim.run, heatsim.Simulation):
        with pytest.raises(ValueError, match="restart needs a checkpoint file, got an empty path"):
            start(case_path("heat2d.yaml"), steps=2, restart="", output_dir=tmp_path / "o")
    assert not (tmp_path / "o").exists()


def test_an_empty_output_dir_is_refused_by_its_keyword():
    with pytest.raises(heatsim.CaseError, match="output_dir: must not be empty") as e:
        heatsim.run(case_path("heat2d.yaml"), steps=2, output_dir="")
    assert "output.directory" not in str(e.value)
