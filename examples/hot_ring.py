#!/usr/bin/env python3
"""A notebook-style script: an initial field made with numpy, a run, its probes plotted.

A 2D plate (1 x 1, Dirichlet 0 on every face) starts with a hot ring drawn with numpy; two
probes watch the ring and the centre. Simulation.set_field() takes the numpy field, outputs()
gives the field every 200 steps, and the probes come back as numpy arrays.

    PYTHONPATH=build/python /usr/bin/python3 examples/hot_ring.py [--png docs/hot-ring.png]

with the interpreter the module was built for (the configure log names it).
"""
import argparse
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import heatsim  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CASE = {
    "grid": {"dims": 2, "n": [129, 129], "length": 1.0},
    "physics": {"alpha": 1.0},
    "boundary": {"all": {"type": "dirichlet", "value": 0.0}},
    "initial": {"type": "constant", "value": 0.0},  # replaced from numpy below
    "time": {"dt": "auto", "steps": 1000},
    "probes": {"every": 10, "points": {"ring": [0.8, 0.5], "centre": [0.5, 0.5]}},
}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--png", default=os.path.join(ROOT, "docs", "hot-ring.png"))
    args = parser.parse_args()

    sim = heatsim.Simulation(CASE)
    y, x = np.mgrid[0:1:129j, 0:1:129j]  # [y][x], as the field is laid out
    r = np.hypot(x - 0.5, y - 0.5)
    sim.set_field(np.exp(-((r - 0.3) / 0.03) ** 2))

    snapshots = list(sim.outputs(every=200))  # (time, field) at steps 0, 200, ..., 1000
    probes = sim.probes

    fig, axes = plt.subplots(1, 3, figsize=(11, 3.4), dpi=100)
    for ax, (t, field) in zip(axes[:2], (snapshots[0], snapshots[2])):
        image = ax.imshow(field, origin="lower", extent=(0, 1, 0, 1), cmap="inferno")
        ax.set_title(f"t = {t:.3g}")
        fig.colorbar(image, ax=ax, shrink=0.8)
    for name in ("ring", "centre"):
        axes[2].plot(probes["time"], probes[name], label=name)
    axes[2].set_xlabel("t")
    axes[2].set_title("probes")
    axes[2].legend()
    fig.tight_layout()
    fig.savefig(args.png)
    print(f"{len(snapshots)} snapshots to t = {sim.time:.3g}; centre peaks at "
          f"{probes['centre'].max():.4f}; wrote {args.png}")


if __name__ == "__main__":
    main()
