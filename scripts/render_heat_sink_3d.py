"""Renders the 3D heat sink (inputs/heat_sink_3d.yaml) for the README: the body cut through
the chip's middle (y = 20 mm), coloured by temperature, with arrows of the heat flux on the cut.

    heatsim run inputs/heat_sink_3d.yaml
    xvfb-run -a pvpython scripts/render_heat_sink_3d.py $PWD/out/heat_sink_3d/field.xmf \
        docs/heat-sink-3d-paraview.png

(pvpython needs a display to render: xvfb-run gives it one; give the .xmf an absolute path.)
"""
import sys

from paraview import simple

src = simple.OpenDataFile(sys.argv[1])
src.UpdatePipeline()
# The body: nodes of a material (voids have material id -2).
body = simple.Threshold(Input=src)
body.Scalars = ["POINTS", "material"]
try:
    body.LowerThreshold = -0.5; body.UpperThreshold = 100
    body.ThresholdMethod = "Between"
except Exception:
    body.ThresholdRange = [-0.5, 100]
view = simple.CreateView("RenderView")
view.ViewSize = [1200, 800]
view.Background = [1, 1, 1]
try:
    view.UseColorPaletteForBackground = 0
except Exception:
    pass
view.OrientationAxesVisibility = 0
# The half in front of the chip's middle.
half = simple.Clip(Input=body)
half.ClipType = "Plane"
half.ClipType.Origin = [0.02, 0.02, 0.0]
half.ClipType.Normal = [0.0, -1.0, 0.0]
try:
    half.Crinkleclip = 0
except Exception:
    pass
d = simple.Show(half, view)
simple.ColorBy(d, ("POINTS", "u"))
lut = simple.GetColorTransferFunction("u")
lut.ApplyPreset("Inferno (matplotlib)", True)
d.SetScalarBarVisibility(view, True)
bar = simple.GetScalarBar(lut, view)
bar.Title = "T (K)"; bar.ComponentTitle = ""
bar.AutomaticLabelFormat = 0
bar.LabelFormat = "%-#6.1f"
bar.RangeLabelFormat = "%-#6.1f"
bar.TitleColor = [0, 0, 0]; bar.LabelColor = [0, 0, 0]
# Arrows of the heat flux on the cut, every other node: the heat spreads from the chip
# through the base and rises in the fins.
cut = simple.Slice(Input=body)
cut.SliceType = "Plane"
cut.SliceType.Origin = [0.02, 0.0199, 0.0]
cut.SliceType.Normal = [0.0, 1.0, 0.0]
mask = simple.MaskPoints(Input=cut)
mask.OnRatio = 2
mask.MaximumNumberofPoints = 100000
mask.GenerateVertices = 0
glyph = simple.Glyph(Input=mask, GlyphType="Arrow")
glyph.OrientationArray = ["POINTS", "heat_flux"]
glyph.ScaleArray = ["POINTS", "heat_flux"]
glyph.ScaleFactor = 4e-8
glyph.GlyphMode = "All Points"
g = simple.Show(glyph, view)
simple.ColorBy(g, None)
g.AmbientColor = [0.2, 0.9, 1.0]; g.DiffuseColor = [0.2, 0.9, 1.0]
simple.Render(view)
view.CameraPosition = [0.062, -0.038, 0.047]
view.CameraFocalPoint = [0.021, 0.021, 0.011]
view.CameraViewUp = [0, 0, 1]
view.CameraParallelProjection = 0
simple.Render(view)
simple.SaveScreenshot(sys.argv[2], view, ImageResolution=[1200, 800])
