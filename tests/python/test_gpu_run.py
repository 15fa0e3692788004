# The module against the command line on every GPU backend (ctest label gpu): bit for bit, as
# on the CPU. Skipped without a GPU unless HEATSIM_REQUIRE_GPU=1.
import os

import numpy as np
import pytest

import heatsim
from conftest import case_path, run_cli

GPU_BACKENDS = [b["name"] for b in heatsim.backends() if b["gpu"] and b["available"]]


def test_a_gpu_is_there_when_required():
    if os.environ.get("HEATSIM_REQUIRE_GPU") != "1":
        pytest.skip("HEATSIM_REQUIRE_GPU is not 1")
    assert GPU_BACKENDS, "HEATSIM_REQUIRE_GPU=1 but no GPU backend can run here"


@pytest.mark.skipif(not GPU_BACKENDS, reason="no GPU")
@pytest.mark.parametrize("backend", GPU_BACKENDS or ["none"])
@pytest.mark.parametrize("precision", ["fp64", "fp32"])
def test_run_equals_the_command_line_on_the_gpu(tmp_path, backend, precision):
    if backend == "convstencil" and precision == "fp32":
        pytest.skip("convstencil runs fp64 only")
    code, text = run_cli("run", case_path("heat2d.yaml"), "-o", str(tmp_path), "--backend",
                         backend, "--steps", "300", "--precision", precision)
    assert code == 0, text
    cli = heatsim.read(tmp_path / "field_00000300.h5")
    r = heatsim.run(case_path("heat2d.yaml"), backend=backend, steps=300, precision=precision)
    assert r.summary["backend"] == backend
    assert np.array_equal(r.field, cli.field)
