#!/usr/bin/env python3
"""The chip example's peak temperature against the heat-sink coefficient h.

inputs/chip_cooling_3d.yaml loses its heat through the top face (convective, h = 2500
W/(m^2 K) to 300 K). For each h this runs, with nothing written to disk:
- the steady state with both heaters at full power (35 W; their schedules left out), and its
  hottest node;
- the case as it is (0.3 s of switching heaters from 300 K), and the highest temperature its
  probes saw;
and plots both against h.

    PYTHONPATH=build/python /usr/bin/python3 examples/heat_sink_sweep.py
        [--png docs/heat-sink-sweep.png]
        [--coarse]   # 48 x 48 x 16 nodes instead of 96 x 96 x 32, for a quick look

with the interpreter the module was built for (the configure log names it; a pyenv or venv
python3 without NumPy cannot import it).

Needs matplotlib and PyYAML (Debian: python3-matplotlib python3-yaml).
"""
import argparse
import copy
import os
import time

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import yaml  # noqa: E402

import heatsim  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--png", default=os.path.join(ROOT, "docs", "heat-sink-sweep.png"))
    parser.add_argument("--coarse", action="store_true")
    parser.add_argument("--backend", default="auto")
    args = parser.parse_args()

    with open(os.path.join(ROOT, "inputs", "chip_cooling_3d.yaml")) as f:
        case = yaml.safe_load(f)
    if args.coarse:
        case["grid"]["n"] = [48, 48, 16]
    probes = list(case["probes"]["points"])

    hs = [250, 500, 1000, 2500, 5000, 10000, 25000]
    steady_peak, transient_peak = [], []
    for h in hs:
        case["boundary"]["z+"]["h"] = h
        start = time.monotonic()
        transient = heatsim.run(case, backend=args.backend)
        transient_peak.append(max(float(transient.probes[name].max()) for name in probes))
        steady_case = copy.deepcopy(case)
        for source in steady_case["sources"]:
            source.pop("schedule", None)
        steady_case["time"] = {"method": "steady"}
        steady = heatsim.run(steady_case, backend=args.backend)
        steady_peak.append(float(steady.field.max()))
        print(f"h {h:6d}: steady {steady_peak[-1]:.2f} K, transient peak {transient_peak[-1]:.2f} K"
              f" ({transient.summary['steps']} steps on {transient.summary['backend']}; "
              f"{time.monotonic() - start:.1f} s for both)", flush=True)

    fig, ax = plt.subplots(figsize=(6.4, 4.2), dpi=110)
    ax.plot(hs, steady_peak, "o-", label="steady state, both heaters at full power (35 W)")
    ax.plot(hs, transient_peak, "s-", label="highest probe reading in the 0.3 s run")
    ax.axhline(300.0, color="gray", lw=0.8, ls=":")
    ax.set_xscale("log")
    ax.set_xlabel("heat-sink coefficient h [W/(m$^2$ K)] on the top face, ambient 300 K")
    ax.set_ylabel("peak temperature [K]")
    grid = " x ".join(str(n) for n in case["grid"]["n"])
    ax.set_title(f"inputs/chip_cooling_3d.yaml ({grid} nodes)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(args.png)
    print(f"wrote {args.png}")


if __name__ == "__main__":
    main()
