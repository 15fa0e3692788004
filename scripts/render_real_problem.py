"""Renders a real-problem run (materials, temperature, probes) for the README and checks what
ParaView reads against what heatsim wrote. Run by scripts/render-real-problem under pvpython:

    pvpython --force-offscreen-rendering render_real_problem.py --xmf /abs/out/field.xmf \
        --materials silicon,copper,mold --conductivity 0.9:401 --last-range 300:311.7 \
        --probes /abs/out/probes.csv --png-dir DIR [--cut 0.0095,0.0095] [--z-scale 3]

Writes DIR/real-problem-paraview.png (top: the materials on a vertical cut through the
package, bottom: the temperature at the last output on the same cut) and DIR/real-problem-probes.png
(the probe temperatures over time, with matplotlib). Exits 1 with one line per problem when
ParaView's view of the output disagrees with heatsim's.
"""
import argparse
import csv
import math
import os
import sys

from paraview import simple


def pair(text):
    lo, hi = text.split(":")
    return float(lo), float(hi)


def close(a, b, rel=1e-9):
    return math.isclose(a, b, rel_tol=rel, abs_tol=rel * max(abs(a), abs(b), 1e-300))


def check_reader(reader, args, names, problems):
    times = list(reader.TimestepValues or [])
    if not times:
        problems.append("no time steps in " + args.xmf)
        return None
    last = times[-1]
    reader.UpdatePipeline(last)
    arrays = reader.PointData.keys()
    for a in ("u", "material", "conductivity", "capacity", "source_density"):
        if a not in arrays:
            problems.append("no point array %r at the last step (have %s)" % (a, arrays))
    if problems:
        return None
    lo, hi = reader.PointData["material"].GetRange()
    if (lo, hi) != (0.0, float(len(names) - 1)):
        problems.append("material ids span %g..%g, expected 0..%d" % (lo, hi, len(names) - 1))
    klo, khi = reader.PointData["conductivity"].GetRange()
    elo, ehi = args.conductivity
    if not (close(klo, elo) and close(khi, ehi)):
        problems.append("conductivity %r..%r, expected %r..%r" % (klo, khi, elo, ehi))
    ulo, uhi = reader.PointData["u"].GetRange()
    elo, ehi = args.last_range
    if not (close(ulo, elo, 1e-12) and close(uhi, ehi, 1e-12)):
        problems.append("u at t=%g: %r..%r, expected %r..%r" % (last, ulo, uhi, elo, ehi))
    # The material array must stay the same at the first step (one file for the whole run).
    reader.UpdatePipeline(times[0])
    if reader.PointData["material"].GetRange() != (lo, hi):
        problems.append("material ids differ between the first and the last step")
    reader.UpdatePipeline(last)
    return last


def read_probes(path, problems):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    if len(rows) < 3 or rows[0][:2] != ["step", "time"]:
        problems.append("%s: expected a header step,time,... and at least two rows" % path)
        return [], [], []
    names = rows[0][2:]
    steps = [int(r[0]) for r in rows[1:]]
    if steps != sorted(set(steps)):
        problems.append("%s: steps are not increasing (a row lost or repeated)" % path)
    times = [float(r[1]) for r in rows[1:]]
    values = [[float(v) for v in r[2:]] for r in rows[1:]]
    return names, times, values


PANEL = (1400, 440)  # pixels of each of the two pictures stacked into one


def frame_cut(view, bounds):
    """Looks at the cut face on, z up, framing its bounds, the right side kept free for the
    colour bar."""
    simple.Render(view)  # the first render of a view resets its camera: get it over with
    x0, x1, y0, y1, z0, z1 = bounds
    width = ((x1 - x0) ** 2 + (y1 - y0) ** 2) ** 0.5
    height = z1 - z0
    aspect = PANEL[0] / PANEL[1]
    scale = 0.55 * max(height, width / (0.78 * aspect))
    # Seen from (-1, 1, 0) with z up, screen right is (-1, -1, 0): the view's centre goes
    # that way from the cut's, so the cut sits left of the colour bar.
    shift = 0.08 * 2 * scale * aspect / 2 ** 0.5
    focal = [0.5 * (x0 + x1) - shift, 0.5 * (y0 + y1) - shift, 0.5 * (z0 + z1)]
    view.CameraFocalPoint = focal
    view.CameraPosition = [focal[0] - 1.0, focal[1] + 1.0, focal[2]]
    view.CameraViewUp = [0.0, 0.0, 1.0]
    view.CameraParallelProjection = 1
    view.CameraParallelScale = scale
    simple.Render(view)


def render_views(reader, last, args):
    """Top: the materials on a vertical cut through the package; bottom: the temperature at
    the last output on the same cut. The cut runs along the diagonal through (cut_x, cut_y),
    the thickness drawn z_scale times larger."""
    transform = simple.Transform(Input=reader)
    transform.Transform.Scale = [1.0, 1.0, args.z_scale]
    cut = simple.Slice(Input=transform)
    cut.SliceType = "Plane"
    cut.SliceType.Origin = [args.cut_x, args.cut_y, 0.0]
    cut.SliceType.Normal = [1.0, -1.0, 0.0]
    cut.UpdatePipeline(last)
    bounds = cut.GetDataInformation().GetBounds()

    # Two separate views, saved one by one and stacked: ParaView 5.11 sizes the views of a
    # split layout inconsistently when saving offscreen.
    top = simple.CreateView("RenderView")
    bottom = simple.CreateView("RenderView")
    for view in (top, bottom):
        view.ViewSize = [PANEL[0], PANEL[1]]

    views = ((top, "material", "material"), (bottom, "u", "T (K) at t = %.3g s" % last))
    for view, array, title in views:
        view.ViewTime = last
        view.OrientationAxesVisibility = 0
        view.Background = [1.0, 1.0, 1.0]
        try:
            view.UseColorPaletteForBackground = 0
        except AttributeError:
            pass
        display = simple.Show(cut, view)
        display.Representation = "Surface"
        simple.ColorBy(display, ("POINTS", array))
        lut = simple.GetColorTransferFunction(array)
        if array == "material":
            # One colour per id, named as in the case: silicon blue-grey, copper, mould dark.
            lut.InterpretValuesAsCategories = 1
            lut.Annotations = sum(([str(i), n] for i, n in enumerate(args.names)), [])
            palette = {"silicon": [0.35, 0.45, 0.70], "copper": [0.85, 0.50, 0.20],
                       "mold": [0.30, 0.30, 0.32]}
            others = [[0.45, 0.65, 0.35], [0.70, 0.30, 0.60], [0.55, 0.55, 0.55]]
            colours = []
            for i, n in enumerate(args.names):
                colours += palette.get(n, others[i % len(others)])
            lut.IndexedColors = colours
        else:
            lut.ApplyPreset("Inferno (matplotlib)", True)
            lut.RescaleTransferFunction(*args.last_range)
        display.SetScalarBarVisibility(view, True)
        bar = simple.GetScalarBar(lut, view)
        bar.Title = title
        bar.ComponentTitle = ""
        bar.TitleColor = [0.0, 0.0, 0.0]
        bar.LabelColor = [0.0, 0.0, 0.0]
        bar.TitleFontSize = 18
        bar.LabelFontSize = 16
        bar.WindowLocation = "Any Location"
        bar.Orientation = "Vertical"
        bar.Position = [0.86, 0.12]
        bar.ScalarBarLength = 0.76
        if array == "u":
            bar.RangeLabelFormat = "%-#.1f"
    # Cameras last: showing data in a view resets its camera.
    for view, _, _ in views:
        frame_cut(view, bounds)
    return [top, bottom]


def stack_pictures(paths, out):
    import matplotlib.image
    import numpy

    images = [matplotlib.image.imread(p) for p in paths]
    matplotlib.image.imsave(out, numpy.vstack(images))


def plot_probes(names, times, values, path, title):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4.2), dpi=110)
    for i, name in enumerate(names):
        ax.plot(times, [v[i] for v in values], label=name, linewidth=1.6)
    ax.set_xlabel("t (s)")
    ax.set_ylabel("T (K)")
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    ax.legend(loc="upper left", frameon=False)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--xmf", required=True)
    p.add_argument("--materials", required=True, help="names of ids 0, 1, ..., comma-separated")
    p.add_argument("--conductivity", type=pair, required=True, help="min:max over the nodes")
    p.add_argument("--last-range", type=pair, required=True, help="min:max of u, last output")
    p.add_argument("--probes", required=True)
    p.add_argument("--png-dir", required=True)
    p.add_argument("--cut", default="", help="x,y: a point of the diagonal cut (default centre)")
    p.add_argument("--z-scale", type=float, default=3.0)
    p.add_argument("--title", default="probe temperatures")
    args = p.parse_args()
    names = args.materials.split(",")
    args.names = names
    problems = []

    reader = simple.OpenDataFile(args.xmf)
    if reader is None:
        print("ParaView found no reader for " + args.xmf)
        return 1
    last = check_reader(reader, args, names, problems)
    probe_names, times, values = read_probes(args.probes, problems)
    if values and last is not None:
        lo, hi = args.last_range
        final = values[-1]
        if not close(times[-1], last, 1e-12):
            problems.append("last probe row at t=%r, last output at t=%r" % (times[-1], last))
        if any(v < lo - 1e-9 * abs(lo) or v > hi + 1e-9 * abs(hi) for v in final):
            problems.append("last probe values %r outside the field's range %r..%r" % (final, lo, hi))
    if problems:
        for line in problems:
            print(line)
        return 1

    bounds = reader.GetDataInformation().GetBounds()
    if args.cut:
        args.cut_x, args.cut_y = (float(v) for v in args.cut.split(","))
    else:
        args.cut_x, args.cut_y = 0.5 * (bounds[0] + bounds[1]), 0.5 * (bounds[2] + bounds[3])
    os.makedirs(args.png_dir, exist_ok=True)
    picture = os.path.join(args.png_dir, "real-problem-paraview.png")
    views = render_views(reader, last, args)
    panels = []
    for i, view in enumerate(views):
        panels.append(os.path.join(args.png_dir, "real-problem-panel-%d.png" % i))
        simple.SaveScreenshot(panels[-1], view, ImageResolution=list(PANEL),
                              FontScaling="Do not scale fonts")
    # Views go before the interpreter does: tearing them down at exit fails on some X servers
    # (GLXBadContext) after the pictures are written.
    for view in views:
        simple.Delete(view)
    stack_pictures(panels, picture)
    for p in panels:
        os.remove(p)
    plot = os.path.join(args.png_dir, "real-problem-probes.png")
    plot_probes(probe_names, times, values, plot, args.title)
    for f in (picture, plot):
        if not os.path.isfile(f) or os.path.getsize(f) < 10000:
            print("no picture written: " + f)
            return 1
    print("wrote %s and %s" % (picture, plot))
    return 0


if __name__ == "__main__":
    sys.exit(main())
