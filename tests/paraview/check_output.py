"""Opens a heatsim XDMF series with ParaView's own readers and checks it against what heatsim
wrote (the expected values come from `heatsim inspect`, passed on the command line by run.sh).

    pvpython --force-offscreen-rendering check_output.py --xmf /abs/out/field.xmf \
        --times 0,0.1,0.2 --ranges 0:1,0:0.5,0:0.25 --bounds 0,1,0,1,0,0 \
        [--reader xdmf3|xdmf2] [--png last.png]

Exits 0 when everything matches, 1 with one line per problem otherwise.
"""
import argparse
import math
import os
import sys

from paraview import simple


def floats(text):
    return [float(v) for v in text.split(",")] if text else []


def close(a, b, rel, abs_tol=0.0):
    return math.isclose(a, b, rel_tol=rel, abs_tol=abs_tol)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--xmf", required=True)
    p.add_argument("--times", required=True, help="comma-separated output times")
    p.add_argument("--ranges", required=True, help="min:max per output, comma-separated")
    p.add_argument("--bounds", required=True, help="xmin,xmax,ymin,ymax,zmin,zmax")
    p.add_argument("--points", type=int, required=True)
    p.add_argument("--array", default="u")
    p.add_argument("--reader", choices=["xdmf3", "xdmf2"], default="xdmf3")
    p.add_argument("--png", default="")
    args = p.parse_args()

    times = floats(args.times)
    ranges = [tuple(float(v) for v in r.split(":")) for r in args.ranges.split(",")]
    bounds = floats(args.bounds)
    problems = []

    if args.reader == "xdmf3":
        # What `paraview out/field.xmf` does: the default reader for .xmf (Xdmf3).
        reader = simple.OpenDataFile(args.xmf)
    else:
        reader = simple.XDMFReader(FileNames=[args.xmf])
    if reader is None:
        print("ParaView found no reader for " + args.xmf)
        return 1
    label = "%s (%s)" % (args.xmf, type(reader).__name__)

    got_times = list(reader.TimestepValues or [])
    if len(got_times) != len(times):
        problems.append("time steps: %d, expected %d" % (len(got_times), len(times)))
    for i, (g, e) in enumerate(zip(got_times, times)):
        if not close(g, e, 1e-12, 1e-300):
            problems.append("time %d: %r, expected %r" % (i, g, e))

    for i, t in enumerate(got_times[: len(ranges)]):
        reader.UpdatePipeline(t)
        info = reader.GetDataInformation()
        arrays = reader.PointData.keys()
        if args.array not in arrays:
            problems.append("t=%g: no point array %r (have %s)" % (t, args.array, arrays))
            continue
        lo, hi = reader.PointData[args.array].GetRange()
        elo, ehi = ranges[i]
        scale = max(abs(elo), abs(ehi), 1e-300)
        if not (close(lo, elo, 1e-12, 1e-12 * scale) and close(hi, ehi, 1e-12, 1e-12 * scale)):
            problems.append("t=%g: range %r..%r, expected %r..%r" % (t, lo, hi, elo, ehi))
        if info.GetNumberOfPoints() != args.points:
            problems.append("t=%g: %d points, expected %d" % (t, info.GetNumberOfPoints(), args.points))
        got_bounds = info.GetBounds()
        extent = max(abs(b) for b in bounds) or 1.0
        if any(not close(g, e, 1e-9, 1e-9 * extent) for g, e in zip(got_bounds, bounds)):
            problems.append("t=%g: bounds %r, expected %r" % (t, tuple(got_bounds), tuple(bounds)))

    # The time slider: the animation scene takes its steps from the data.
    scene = simple.GetAnimationScene()
    scene.UpdateAnimationUsingDataTimeSteps()
    if len(scene.TimeKeeper.TimestepValues) != len(times):
        problems.append("animation has %d time steps, expected %d"
                        % (len(scene.TimeKeeper.TimestepValues), len(times)))

    if args.png and got_times:
        scene.AnimationTime = got_times[-1]
        view = simple.GetActiveViewOrCreate("RenderView")
        view.ViewSize = [800, 600]
        view.OrientationAxesVisibility = 1
        is_3d = bounds[5] > bounds[4]
        shown = reader
        if is_3d:
            # The boundary faces say little; show the mid-plane z = const and the box outline.
            outline = simple.Show(reader, view)
            outline.Representation = "Outline"
            shown = simple.Slice(Input=reader)
            shown.SliceType = "Plane"
            shown.SliceType.Origin = [(bounds[0] + bounds[1]) / 2, (bounds[2] + bounds[3]) / 2,
                                      (bounds[4] + bounds[5]) / 2]
            shown.SliceType.Normal = [0.0, 0.0, 1.0]
        display = simple.Show(shown, view)
        display.Representation = "Surface"
        simple.ColorBy(display, ("POINTS", args.array))
        display.RescaleTransferFunctionToDataRange(False, True)
        display.SetScalarBarVisibility(view, True)
        if is_3d:
            view.CameraPosition = [-1.0, -1.5, 1.2]
            view.CameraFocalPoint = [0.0, 0.0, 0.0]
            view.CameraViewUp = [0.0, 0.0, 1.0]
        else:
            view.InteractionMode = "2D"
        if bounds[3] == bounds[2]:
            display.LineWidth = 6.0  # a 1D run is a line along x
        view.ResetCamera()
        simple.Render(view)
        simple.SaveScreenshot(args.png, view, ImageResolution=[800, 600])

    for msg in problems:
        print("%s: %s" % (label, msg))
    if not problems:
        print("%s: %d time steps, array %s, bounds and ranges as written"
              % (label, len(got_times), args.array))
    return 1 if problems else 0


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    sys.stderr.flush()
    # sys.exit() tears ParaView's X11 render window down through Python finalization, which
    # under Xvfb ends in a GLXBadContext X error and exit status 1; leave directly instead.
    os._exit(code)
