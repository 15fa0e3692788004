# heatsim.run and heatsim.Simulation against the command line (bit for bit) and against an
# analytic solution.
import os

import numpy as np
import pytest

import heatsim
from conftest import case_path, run_cli


def cli_field(tmp_path, case, *args):
    out = tmp_path / "cli"
    code, text = run_cli("run", case, "-o", str(out), "--backend", "cpu", *args)
    assert code == 0, text
    return out, text


def last_output(out):
    files = sorted(f for f in os.listdir(out) if f.startswith("field_") and f.endswith(".h5"))
    return heatsim.read(out / files[-1])


@pytest.mark.parametrize("case,steps,precision", [
    ("heat2d.yaml", 300, "fp64"),
    ("heat2d.yaml", 300, "fp32"),
    ("heat1d.yaml", 1500, "fp64"),
])
def test_run_equals_the_command_line_bit_for_bit(tmp_path, case, steps, precision):
    out, _ = cli_field(tmp_path, case_path(case), "--steps", str(steps), "--precision", precision)
    cli = last_output(out)
    r = heatsim.run(case_path(case), backend="cpu", steps=steps, precision=precision)
    assert r.step == steps == cli.step
    assert r.time == cli.time
    assert r.field.dtype == (np.float32 if precision == "fp32" else np.float64)
    assert r.field.shape == cli.field.shape
    assert np.array_equal(r.field, cli.field)
    assert r.summary["steps"] == steps and r.summary["backend"] == "cpu"
    assert r.summary["lines"][0].startswith(f"done: {steps} steps to step {steps}")


def small_chip_case():
    """The chip example on a coarse grid (24 x 24 x 8 nodes): probes, materials, sources."""
    with open(case_path("chip_cooling_3d.yaml")) as f:
        text = f.read()
    assert "n: [96, 96, 32]" in text
    return text.replace("n: [96, 96, 32]", "n: [24, 24, 8]")


def test_probes_equal_probes_csv_and_files_equal_the_command_lines(tmp_path):
    text = small_chip_case()
    (tmp_path / "chip.yaml").write_text(text)
    out, _ = cli_field(tmp_path, str(tmp_path / "chip.yaml"), "--steps", "400")
    csv = np.genfromtxt(out / "probes.csv", delimiter=",", names=True)
    r = heatsim.run(text, backend="cpu", steps=400, output_dir=tmp_path / "py")
    assert set(r.probes) == {"step", "time", "core", "hot_spot", "spreader_top", "package_corner"}
    assert np.array_equal(r.probes["time"], csv["time"])
    for name in ("core", "hot_spot", "spreader_top", "package_corner"):
        column = [c for c in csv.dtype.names if c.startswith(name)][0]
        assert np.array_equal(r.probes[name], csv[column]), name
    # The files the module wrote are the command line's (provenance aside).
    for name in ("field_00000000.h5", "field_00000400.h5", "checkpoint_00000400.h5"):
        py, cli = heatsim.read(tmp_path / "py" / name), heatsim.read(out / name)
        assert np.array_equal(py.field, cli.field), name
    assert (tmp_path / "py" / "probes.csv").read_text() == (out / "probes.csv").read_text()


def test_stepping_in_pieces_and_restarting_from_a_checkpoint_equal_one_run(tmp_path):
    whole = heatsim.run(case_path("heat2d.yaml"), backend="cpu", steps=300)
    sim = heatsim.Simulation(case_path("heat2d.yaml"), backend="cpu", steps=300)
    sim.advance(70)
    sim.advance_to(sim.dt * 150)
    assert sim.step == 150
    sim.checkpoint(tmp_path / "at150.h5")
    sim.advance(150)
    assert sim.finished
    assert np.array_equal(sim.field, whole.field)
    again = heatsim.Simulation(case_path("heat2d.yaml"), backend="cpu", steps=300,
                               restart=tmp_path / "at150.h5")
    assert again.step == 150
    assert np.array_equal(again.run().field, whole.field)


def test_a_restart_does_not_discard_a_finished_runs_results_unasked(tmp_path):
    # The command line's rule: a restart from a checkpoint before the end of a run that
    # finished in output_dir is refused, every file unchanged; overwrite=True discards the
    # later files and runs again from there, to the same field.
    with open(case_path("heat2d.yaml")) as f:
        text = f.read().replace("  every: 1000", "  every: 100")
    out = tmp_path / "out"
    whole = heatsim.run(text, backend="cpu", steps=300, output_dir=out)
    checkpoint = out / "checkpoint_00000100.h5"
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    with pytest.raises(heatsim.RunRefused, match="went on past step 100"):
        heatsim.Simulation(text, backend="cpu", steps=300, output_dir=out, restart=checkpoint)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    again = heatsim.run(text, backend="cpu", steps=300, output_dir=out, restart=checkpoint,
                        overwrite=True)
    assert np.array_equal(again.field, whole.field)


def test_outputs_iterate_over_output_times():
    sim = heatsim.Simulation(case_path("heat2d.yaml"), backend="cpu", steps=300)
    seen = [(round(t / sim.dt), f.max()) for t, f in sim.outputs(every=100)]
    assert [s for s, _ in seen] == [0, 100, 200, 300]
    assert all(a > b for (_, a), (_, b) in zip(seen, seen[1:]))  # the peak decays


def test_a_dict_case_and_set_field_against_the_analytic_decay():
    # u_t = u_xx on [0, 1], u = 0 at both ends: sin(pi x) decays as exp(-pi^2 t).
    n = 101
    case = {"grid": {"dims": 1, "n": [n], "length": [1.0]}, "physics": {"alpha": 1.0},
            "scheme": "order2", "boundary": {"all": {"type": "dirichlet", "value": 0}},
            "initial": {"type": "constant", "value": 0.0},
            "time": {"dt": "auto", "end": 0.05}}
    sim = heatsim.Simulation(case)
    x = np.linspace(0.0, 1.0, n)
    sim.set_field(np.sin(np.pi * x))
    sim.advance_to(0.05)
    exact = np.sin(np.pi * x) * np.exp(-np.pi ** 2 * sim.time)
    assert sim.time == pytest.approx(0.05, abs=sim.dt)
    # Second order in space: the error is about (pi h)^2 / 12 of the amplitude.
    assert np.max(np.abs(sim.field - exact)) < 1e-4 * np.exp(-np.pi ** 2 * sim.time)
    assert np.max(np.abs(sim.field - exact)) > 0.0


def test_output_dir_none_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = heatsim.run(case_path("heat2d.yaml"), steps=10)
    assert os.listdir(tmp_path) == []
    assert r.summary["output"] is None


def test_a_steady_state_with_heat_flows(tmp_path):
    r = heatsim.run(case_path("heat_sink_2d.yaml"), backend="cpu")
    assert r.summary["solves"] >= 1 and r.summary["residual"] < 1e-9
    assert any(line.startswith("heat flows into the body at the steady state")
               for line in r.summary["lines"])
    # The body above the air's temperature; void nodes keep their initial 298.15.
    assert r.field.min() >= 298.15 and r.field.max() > 300.0


def test_heat_flows_are_none_without_output_heat_flows_on_a_simulation_as_on_a_result():
    sim = heatsim.Simulation(case_path("heat2d.yaml"), steps=3)
    sim.advance(3)
    assert sim.heat_flows is None
    assert sim.run().heat_flows is None


def test_heat_flows_are_keyed_by_the_csv_columns_with_their_units(tmp_path):
    case = {
        "grid": {"dims": 1, "n": [41], "length": [0.2]},
        "materials": {"brick": {"conductivity": 0.72, "density": 1920, "specific_heat": 835}},
        "regions": [{"material": "brick"}],
        "boundary": {"x-": {"type": "convective", "h": 25, "ambient": 278},
                     "x+": {"type": "insulated"}},
        "initial": {"type": "constant", "value": 288},
        "time": {"dt": 60, "end": 3600, "method": "backward-euler"},
        "output": {"every": 20, "heat_flows": True},
    }
    r = heatsim.run(case, backend="cpu", output_dir=tmp_path / "out")
    with open(tmp_path / "out" / "heat_flows.csv") as f:
        header = f.readline().strip().split(",")
    assert header == ["step", "time", "face x- (convective) [W/m^2]",
                      "face x+ (insulated) [W/m^2]", "storage [W/m^2]", "imbalance [W/m^2]"]
    assert list(r.heat_flows) == header
    table = np.loadtxt(tmp_path / "out" / "heat_flows.csv", delimiter=",", skiprows=1)
    for k, name in enumerate(header):
        assert np.array_equal(r.heat_flows[name], table[:, k]), name
    # The wall loses heat through x- (about h (T - 278) at the start: 250 W/m^2 into the air).
    assert r.heat_flows["face x- (convective) [W/m^2]"][1] < -100.0
