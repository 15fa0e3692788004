#!/usr/bin/env python3
"""Writes the malformed-case corpus next to this script: each case is a valid 2D case with one
thing broken, or a file that is not a case at all. The first line of each file names a
substring the error text must contain; binary files list theirs in expectations.txt.

Run it again after changing the cases here; the files are committed.
"""
import os

HERE = os.path.dirname(os.path.abspath(__file__))

BASE = """grid:
  dims: 2
  n: [32, 32]
  length: [1.0, 1.0]
physics:
  alpha: 1.0
  source: 0.0
scheme: order2
boundary:
  all: {type: dirichlet, value: 0}
initial:
  type: gaussian
  amplitude: 1.0
  center: [0.5, 0.5]
  width: 0.1
time:
  dt: auto
  steps: 100
precision: fp64
backend: auto
output:
  directory: out
  every: 10
  name: field
checkpoint:
  every: 0
"""

BASE_1D = """grid: {dims: 1, n: [64], length: [1.0]}
physics: {alpha: 1.0}
boundary:
  all: {type: dirichlet, value: 0}
initial: {type: constant, value: 1.0}
time: {steps: 10}
"""

BASE_3D = """grid: {dims: 3, n: [16, 16, 16], length: [1.0, 1.0, 1.0]}
physics: {alpha: 1.0}
boundary:
  all: {type: neumann, flux: 0}
initial: {type: gaussian, center: [0.5, 0.5, 0.5], width: 0.1}
time: {steps: 10}
"""

cases = []  # (name, expected substring, text)


def sub(text, old, new):
    assert old in text, old
    return text.replace(old, new, 1)


def case(name, expect, text):
    cases.append((name, expect, text))


def mutate(name, expect, old, new, base=BASE):
    case(name, expect, sub(base, old, new))


# grid
mutate("grid_dims_zero", "grid.dims: must be 1, 2 or 3", "dims: 2", "dims: 0")
mutate("grid_dims_four", "grid.dims: must be 1, 2 or 3", "dims: 2", "dims: 4")
mutate("grid_dims_word", "grid.dims: expected an integer", "dims: 2", "dims: two")
mutate("grid_dims_fraction", "grid.dims: expected an integer", "dims: 2", "dims: 2.5")
mutate("grid_dims_missing", "grid.dims: missing required key", "  dims: 2\n", "")
mutate("grid_n_missing", "grid.n: missing required key", "  n: [32, 32]\n", "")
mutate("grid_n_short", "grid.n: expected 2 values", "n: [32, 32]", "n: [32]")
mutate("grid_n_long", "grid.n: expected 2 values", "n: [32, 32]", "n: [32, 32, 32]")
mutate("grid_n_too_small", "grid.n[1]: must be >= 3", "n: [32, 32]", "n: [32, 2]")
mutate("grid_n_negative", "grid.n[0]: must be >= 3", "n: [32, 32]", "n: [-5, 32]")
mutate("grid_n_zero", "grid.n[1]: must be >= 3", "n: [32, 32]", "n: [32, 0]")
mutate("grid_n_fraction", "grid.n[0]: expected an integer", "n: [32, 32]", "n: [32.5, 32]")
mutate("grid_n_word", "grid.n[1]: expected an integer", "n: [32, 32]", "n: [32, many]")
mutate("grid_n_huge", "more than the limit of 2^34", "n: [32, 32]", "n: [1000000, 1000000]")
mutate("grid_n_overflow", "grid.n[0]: integer '99999999999999999999' is out of range",
       "n: [32, 32]", "n: [99999999999999999999, 32]")
mutate("grid_n_scalar", "grid.n: expected a list", "n: [32, 32]", "n: 32")
mutate("grid_n_map", "grid.n: expected a list", "n: [32, 32]", "n: {x: 32, y: 32}")
mutate("grid_n_null", "grid.n: expected a list", "n: [32, 32]", "n:")
mutate("grid_length_negative", "grid.length[0]: must be > 0", "length: [1.0, 1.0]", "length: [-1.0, 1.0]")
mutate("grid_length_zero", "grid.length[1]: must be > 0", "length: [1.0, 1.0]", "length: [1.0, 0]")
mutate("grid_length_nan", "grid.length[0]: must be a finite number", "length: [1.0, 1.0]", "length: [.nan, 1.0]")
mutate("grid_length_inf", "grid.length[1]: must be a finite number", "length: [1.0, 1.0]", "length: [1.0, .inf]")
mutate("grid_length_scalar_negative", "grid.length[0]: must be > 0", "length: [1.0, 1.0]", "length: -2")
mutate("grid_length_three", "grid.length: expected 2 values", "length: [1.0, 1.0]", "length: [1, 1, 1]")
mutate("grid_not_map", "grid: expected a map", "grid:\n  dims: 2\n  n: [32, 32]\n  length: [1.0, 1.0]\n", "grid: 5\n")
mutate("grid_typo_dims", "unknown key 'dimz' (did you mean 'dims'?)", "dims: 2", "dimz: 2")
mutate("grid_typo_length", "did you mean 'length'?", "length:", "lenght:")
case("grid_n_below_radius", "grid.n[0]: must be >= 7",
     sub(sub(BASE, "n: [32, 32]", "n: [5, 32]"), "scheme: order2", "scheme: order6"))
mutate("grid_3d_too_many_points", "more than the limit of 2^34", "n: [16, 16, 16]",
       "n: [4096, 4096, 4096]", BASE_3D)
mutate("grid_3d_n_two_values", "grid.n: expected 3 values", "n: [16, 16, 16]", "n: [16, 16]", BASE_3D)

# physics
mutate("physics_alpha_missing", "physics.alpha: missing required key", "  alpha: 1.0\n", "")
mutate("physics_alpha_zero", "physics.alpha: must be > 0", "alpha: 1.0", "alpha: 0")
mutate("physics_alpha_negative", "physics.alpha: must be > 0", "alpha: 1.0", "alpha: -0.5")
mutate("physics_alpha_nan", "physics.alpha: must be a finite number", "alpha: 1.0", "alpha: .NaN")
mutate("physics_alpha_inf", "physics.alpha: must be a finite number", "alpha: 1.0", "alpha: .inf")
mutate("physics_alpha_overflow", "physics.alpha: must be a finite number", "alpha: 1.0", "alpha: 1e999")
mutate("physics_alpha_word", "physics.alpha: expected a number, got 'fast'", "alpha: 1.0", "alpha: fast")
mutate("physics_alpha_quoted", "physics.alpha: expected a number, got the string", "alpha: 1.0", "alpha: \"1.0\"")
mutate("physics_alpha_list", "physics.alpha: expected a number, got a list", "alpha: 1.0", "alpha: [1.0]")
mutate("physics_alpha_null", "physics.alpha: expected a number, got nothing", "alpha: 1.0", "alpha:")
mutate("physics_alpha_typo", "unknown key 'alpah' (did you mean 'alpha'?)", "alpha: 1.0", "alpah: 1.0")
mutate("physics_source_nan", "physics.source: must be a finite number", "source: 0.0", "source: nan")
mutate("physics_source_word", "physics.source: expected a number", "source: 0.0", "source: hot")
mutate("physics_not_map", "physics: expected a map", "physics:\n  alpha: 1.0\n  source: 0.0\n", "physics: [1.0]\n")
mutate("physics_hex_alpha", "physics.alpha: expected a number", "alpha: 1.0", "alpha: 0x10")

# scheme
mutate("scheme_unknown", "scheme: unknown value 'order3' (did you mean 'order2'?)", "scheme: order2", "scheme: order3")
mutate("scheme_isotropic_1d", "scheme: isotropic is a box stencil for 2D and 3D", "time: {steps: 10}",
       "time: {steps: 10}\nscheme: isotropic", BASE_1D)
mutate("scheme_custom_scalar", "scheme: custom needs a map", "scheme: order2", "scheme: custom")
mutate("scheme_custom_wrong_size", "scheme.weights: expected 9 weights", "scheme: order2",
       "scheme: {type: custom, radius: 1, weights: [0, 1, 0, 1, -4, 1, 0, 1]}")
mutate("scheme_custom_wrong_size_radius2", "scheme.weights: expected 25 weights", "scheme: order2",
       "scheme: {type: custom, radius: 2, weights: [0, 1, 0, 1, -4, 1, 0, 1, 0]}")
mutate("scheme_custom_radius_zero", "scheme.radius: must be between 1 and 3", "scheme: order2",
       "scheme: {type: custom, radius: 0, weights: [1]}")
mutate("scheme_custom_radius_four", "scheme.radius: must be between 1 and 3", "scheme: order2",
       "scheme: {type: custom, radius: 4, weights: [1]}")
mutate("scheme_custom_sum_nonzero", "weights must sum to zero (consistency)", "scheme: order2",
       "scheme: {type: custom, radius: 1, weights: [0, 1, 0, 1, -3, 1, 0, 1, 0]}")
mutate("scheme_custom_nan_weight", "scheme.weights[4]: must be a finite number", "scheme: order2",
       "scheme: {type: custom, radius: 1, weights: [0, 1, 0, 1, .nan, 1, 0, 1, 0]}")
mutate("scheme_custom_nested_weights", "one flat list", "scheme: order2",
       "scheme: {type: custom, radius: 1, weights: [[0, 1, 0], [1, -4, 1], [0, 1, 0]]}")
mutate("scheme_custom_missing_weights", "scheme.weights: missing required key", "scheme: order2",
       "scheme: {type: custom, radius: 1}")
mutate("scheme_custom_missing_radius", "scheme.radius: missing required key", "scheme: order2",
       "scheme: {type: custom, weights: [0, 1, 0, 1, -4, 1, 0, 1, 0]}")
case("scheme_custom_unequal_spacing", "equal spacing",
     sub(sub(BASE, "scheme: order2",
             "scheme: {type: custom, radius: 1, weights: [0, 1, 0, 1, -4, 1, 0, 1, 0]}"),
         "n: [32, 32]", "n: [32, 17]"))
mutate("scheme_custom_unstable_operator", "amplifies some frequency for every dt > 0", "scheme: order2",
       "scheme: {type: custom, radius: 1, weights: [0, -1, 0, -1, 4, -1, 0, -1, 0]}")
mutate("scheme_custom_all_zero_auto", "all weights are zero", "scheme: order2",
       "scheme: {type: custom, radius: 1, weights: [0, 0, 0, 0, 0, 0, 0, 0, 0]}")
mutate("scheme_order4_with_weights", "scheme.weights: only a custom scheme takes weights", "scheme: order2",
       "scheme: {type: order4, weights: [1, -2, 1]}")
mutate("scheme_type_missing", "scheme.type: missing required key", "scheme: order2", "scheme: {radius: 1}")
mutate("scheme_too_many_weights", "expected at most 343 weights", "scheme: order2",
       "scheme: {type: custom, radius: 3, weights: [" + ", ".join(["0"] * 400) + "]}")
mutate("scheme_list", "scheme: expected a map", "scheme: order2", "scheme: [order2]")
mutate("scheme_weights_scalar", "scheme.weights: expected a flat list", "scheme: order2",
       "scheme: {type: custom, radius: 1, weights: 5}")
mutate("scheme_typo_key", "did you mean 'weights'?", "scheme: order2",
       "scheme: {type: custom, radius: 1, wieghts: [0, 1, 0, 1, -4, 1, 0, 1, 0]}")

# boundary
mutate("boundary_missing", "boundary: missing required section", "boundary:\n  all: {type: dirichlet, value: 0}\n", "")
mutate("boundary_face_missing", "boundary.y+: missing",
       "  all: {type: dirichlet, value: 0}\n",
       "  x-: {type: dirichlet}\n  x+: {type: dirichlet}\n  y-: {type: dirichlet}\n")
mutate("boundary_type_typo", "unknown value 'dirichet' (did you mean 'dirichlet'?)", "type: dirichlet", "type: dirichet")
mutate("boundary_type_missing", "boundary.all.type: missing required key", "{type: dirichlet, value: 0}", "{value: 0}")
mutate("boundary_periodic_one_face", "inconsistent periodic faces", "  all: {type: dirichlet, value: 0}\n",
       "  all: {type: dirichlet, value: 0}\n  x-: {type: periodic}\n")
mutate("boundary_periodic_override", "inconsistent periodic faces", "  all: {type: dirichlet, value: 0}\n",
       "  all: {type: periodic}\n  y+: {type: neumann, flux: 0}\n")
mutate("boundary_z_face_in_2d", "boundary.z-: the grid is 2D; it has no z- face", "  all: {type: dirichlet, value: 0}\n",
       "  all: {type: dirichlet, value: 0}\n  z-: {type: dirichlet}\n")
mutate("boundary_dirichlet_flux", "unknown key 'flux' for a dirichlet face", "{type: dirichlet, value: 0}",
       "{type: dirichlet, flux: 0}")
mutate("boundary_neumann_value", "unknown key 'value' for a neumann face", "{type: dirichlet, value: 0}",
       "{type: neumann, value: 0}")
mutate("boundary_value_nan", "boundary.x-.value: must be a finite number", "  all: {type: dirichlet, value: 0}\n",
       "  all: {type: dirichlet, value: 0}\n  x-: {type: dirichlet, value: .nan}\n")
mutate("boundary_value_word", "boundary.all.value: expected a number", "value: 0}", "value: warm}")
mutate("boundary_amplitude_inf", "boundary.all.amplitude: must be a finite number", "value: 0}", "value: 0, amplitude: -.inf}")
mutate("boundary_flux_list", "boundary.all.flux: expected a number", "{type: dirichlet, value: 0}", "{type: neumann, flux: [1]}")
mutate("boundary_not_map", "boundary: expected a map", "boundary:\n  all: {type: dirichlet, value: 0}\n", "boundary: dirichlet\n")
mutate("boundary_face_scalar", "boundary.x-: expected a map", "  all: {type: dirichlet, value: 0}\n",
       "  all: {type: dirichlet, value: 0}\n  x-: 0\n")
mutate("boundary_unknown_face", "unknown key 'x'", "  all: {type: dirichlet, value: 0}\n",
       "  all: {type: dirichlet, value: 0}\n  x: {type: dirichlet}\n")
mutate("boundary_periodic_odd_mode", "initial.terms[0].k[0]: must be even on the periodic x axis", "  all: {type: dirichlet, value: 0}\n"
       "initial:\n  type: gaussian\n  amplitude: 1.0\n  center: [0.5, 0.5]\n  width: 0.1\n",
       "  all: {type: periodic}\ninitial:\n  type: modes\n  terms:\n    - {k: [3, 2], functions: [sin, cos]}\n")
mutate("boundary_periodic_1d_one_side", "inconsistent periodic faces", "  all: {type: dirichlet, value: 0}\n",
       "  x-: {type: dirichlet, value: 0}\n  x+: {type: periodic}\n", BASE_1D)
mutate("boundary_y_face_in_1d", "it has no y+ face", "  all: {type: dirichlet, value: 0}\n",
       "  all: {type: dirichlet, value: 0}\n  y+: {type: neumann}\n", BASE_1D)
mutate("boundary_duplicate_face", "boundary.x-: duplicate key 'x-'", "  all: {type: dirichlet, value: 0}\n",
       "  all: {type: dirichlet, value: 0}\n  x-: {type: neumann}\n  x-: {type: dirichlet}\n")

# initial
mutate("initial_missing", "initial: missing required section",
       "initial:\n  type: gaussian\n  amplitude: 1.0\n  center: [0.5, 0.5]\n  width: 0.1\n", "")
mutate("initial_type_typo", "unknown value 'gauss' (did you mean 'gaussian'?)", "type: gaussian", "type: gauss")
mutate("initial_type_missing", "initial.type: missing required key", "  type: gaussian\n", "")
mutate("initial_width_zero", "initial.width: must be > 0", "width: 0.1", "width: 0")
mutate("initial_width_negative", "initial.width: must be > 0", "width: 0.1", "width: -0.1")
mutate("initial_width_missing", "initial.width: missing required key", "  width: 0.1\n", "")
mutate("initial_center_short", "initial.center: expected 2 values", "center: [0.5, 0.5]", "center: [0.5]")
mutate("initial_center_nan", "initial.center[1]: must be a finite number", "center: [0.5, 0.5]", "center: [0.5, .nan]")
mutate("initial_amplitude_word", "initial.amplitude: expected a number", "amplitude: 1.0", "amplitude: big")
mutate("initial_gaussian_value_key", "unknown key 'value' for a gaussian initial condition", "width: 0.1", "width: 0.1\n  value: 1")
mutate("initial_box_lower_missing", "initial.lower: missing required key",
       "  type: gaussian\n  amplitude: 1.0\n  center: [0.5, 0.5]\n  width: 0.1\n",
       "  type: box\n  upper: [0.6, 0.6]\n")
mutate("initial_box_upper_below_lower", "initial.upper[0]: must be greater than initial.lower[0]",
       "  type: gaussian\n  amplitude: 1.0\n  center: [0.5, 0.5]\n  width: 0.1\n",
       "  type: box\n  lower: [0.6, 0.2]\n  upper: [0.4, 0.8]\n")
mutate("initial_box_wrong_length", "initial.upper: expected 2 values",
       "  type: gaussian\n  amplitude: 1.0\n  center: [0.5, 0.5]\n  width: 0.1\n",
       "  type: box\n  lower: [0.2, 0.2]\n  upper: [0.4, 0.8, 0.9]\n")
mutate("initial_modes_no_terms", "initial.terms: needs at least one term",
       "  type: gaussian\n  amplitude: 1.0\n  center: [0.5, 0.5]\n  width: 0.1\n", "  type: modes\n  terms: []\n")
mutate("initial_modes_terms_map", "initial.terms: expected a list",
       "  type: gaussian\n  amplitude: 1.0\n  center: [0.5, 0.5]\n  width: 0.1\n", "  type: modes\n  terms: {k: [1, 1]}\n")
mutate("initial_modes_k_short", "initial.terms[0].k: expected 2 values",
       "  type: gaussian\n  amplitude: 1.0\n  center: [0.5, 0.5]\n  width: 0.1\n", "  type: modes\n  terms:\n    - {k: [1]}\n")
mutate("initial_modes_k_fraction", "initial.terms[1].k[0]: expected an integer",
       "  type: gaussian\n  amplitude: 1.0\n  center: [0.5, 0.5]\n  width: 0.1\n",
       "  type: modes\n  terms:\n    - {k: [1, 1]}\n    - {k: [1.5, 1]}\n")
mutate("initial_modes_function_tan", "initial.terms[0].functions[1]: unknown value 'tan'",
       "  type: gaussian\n  amplitude: 1.0\n  center: [0.5, 0.5]\n  width: 0.1\n",
       "  type: modes\n  terms:\n    - {k: [1, 1], functions: [sin, tan]}\n")
mutate("initial_modes_k_missing", "initial.terms[0].k: missing required key",
       "  type: gaussian\n  amplitude: 1.0\n  center: [0.5, 0.5]\n  width: 0.1\n",
       "  type: modes\n  terms:\n    - {amplitude: 2}\n")
mutate("initial_modes_k_negative", "initial.terms[0].k[0]: must be >= 0",
       "  type: gaussian\n  amplitude: 1.0\n  center: [0.5, 0.5]\n  width: 0.1\n",
       "  type: modes\n  terms:\n    - {k: [-1, 1]}\n")
mutate("initial_modes_term_scalar", "initial.terms[0]: expected a map",
       "  type: gaussian\n  amplitude: 1.0\n  center: [0.5, 0.5]\n  width: 0.1\n",
       "  type: modes\n  terms: [sin]\n")
mutate("initial_constant_inf", "initial.value: must be a finite number", "initial: {type: constant, value: 1.0}",
       "initial: {type: constant, value: .inf}", BASE_1D)
mutate("initial_not_map", "initial: expected a map", "initial: {type: constant, value: 1.0}", "initial: 1.0", BASE_1D)
mutate("initial_3d_center_short", "initial.center: expected 3 values", "center: [0.5, 0.5, 0.5]",
       "center: [0.5, 0.5]", BASE_3D)

# time
mutate("time_missing", "time: missing required section", "time:\n  dt: auto\n  steps: 100\n", "")
mutate("time_steps_and_end", "time: give exactly one of 'steps' and 'end', not both", "steps: 100", "steps: 100\n  end: 0.1")
mutate("time_neither_steps_nor_end", "time: give exactly one of", "  steps: 100\n", "")
mutate("time_dt_zero", "time.dt: must be > 0", "dt: auto", "dt: 0")
mutate("time_dt_negative", "time.dt: must be > 0", "dt: auto", "dt: -1e-5")
mutate("time_dt_nan", "time.dt: must be a finite number", "dt: auto", "dt: .nan")
mutate("time_dt_word", "time.dt: expected a number or 'auto'", "dt: auto", "dt: fast")
mutate("time_dt_typo", "did you mean 'auto'?", "dt: auto", "dt: atuo")
mutate("time_dt_unstable", "time.dt: 0.01 is unstable for this scheme; the largest stable dt is", "dt: auto", "dt: 0.01")
mutate("time_dt_unstable_3d", "time.dt: 0.001 is unstable for this scheme", "time: {steps: 10}",
       "time: {steps: 10, dt: 1e-3}", BASE_3D)
mutate("time_steps_negative", "time.steps: must be >= 0", "steps: 100", "steps: -1")
mutate("time_steps_fraction", "time.steps: expected an integer", "steps: 100", "steps: 10.5")
mutate("time_end_zero", "time.end: must be > 0", "steps: 100", "end: 0")
mutate("time_end_nan", "time.end: must be a finite number", "steps: 100", "end: .nan")
mutate("time_end_too_far", "time.end: needs more than 1e15 steps", "steps: 100", "end: 1e300")
mutate("time_typo_steps", "unknown key 'stpes' (did you mean 'steps'?)", "steps: 100", "stpes: 100")
mutate("time_not_map", "time: expected a map", "time:\n  dt: auto\n  steps: 100\n", "time: 100\n")

# run options
mutate("precision_unknown", "precision: unknown value 'fp16'", "precision: fp64", "precision: fp16")
mutate("precision_list", "precision: expected one of fp64 or fp32", "precision: fp64", "precision: [fp64]")
mutate("backend_unknown", "backend: unknown backend 'cuda-magic'", "backend: auto", "backend: cuda-magic")
mutate("backend_map", "backend: expected a string", "backend: auto", "backend: {name: cpu}")
mutate("output_every_negative", "output.every: must be >= 0", "every: 10", "every: -10")
mutate("output_name_with_slash", "output.name: is a file name prefix", "name: field", "name: a/b")
mutate("output_name_with_colon", "output.name: must not contain ':' or '|'", "name: field", "name: 'run:1'")
mutate("output_name_leading_space", "output.name: must not begin with a space", "name: field", "name: ' run'")
mutate("output_name_checkpoint", "output.name: 'checkpoint' names the checkpoints", "name: field", "name: checkpoint")
mutate("output_directory_empty", "output.directory: must not be empty", "directory: out", "directory: ''")
mutate("output_not_map", "output: expected a map", "output:\n  directory: out\n  every: 10\n  name: field\n", "output: out\n")
mutate("checkpoint_every_negative", "checkpoint.every: must be >= 0", "checkpoint:\n  every: 0", "checkpoint:\n  every: -3")
mutate("checkpoint_typo", "unknown key 'evry' (did you mean 'every'?)", "checkpoint:\n  every: 0", "checkpoint:\n  evry: 0")
mutate("checkpoint_keep_negative", "checkpoint.keep: must be >= 0 (got -2; 0 keeps every one)", "checkpoint:\n  every: 0", "checkpoint:\n  every: 10\n  keep: -2")
mutate("checkpoint_keep_not_integer", "checkpoint.keep: expected an integer", "checkpoint:\n  every: 0", "checkpoint:\n  every: 10\n  keep: 2.5")
mutate("top_unknown_key", "unknown key 'solver'", "precision: fp64", "precision: fp64\nsolver: fast")
mutate("top_typo_grid", "unknown key 'grdi' (did you mean 'grid'?)", "grid:", "grdi:")

# real problems: materials, regions, sources, schedules, convective and heat-flux faces, probes
BASE_REAL = """grid: {dims: 2, n: [11, 6], length: [1.0, 0.5]}
materials:
  copper: {conductivity: 401, density: 8960, specific_heat: 385}
  mold: {diffusivity: 0.5}
regions:
  - {material: mold}
  - {material: copper, box: {lower: [0, 0], upper: [0.5, 0.5]}}
  - {material: copper, where: "x > 0.7 && y < 0.2"}
sources:
  - {box: {lower: [0.1, 0.1], upper: [0.3, 0.3]}, power: 2.5}
  - {power_density: 10, schedule: [[0, 0], [0.1, 1], [2, 1], [2.1, 0]]}
boundary:
  all: {type: neumann, flux: 0}
  x+: {type: convective, h: 25.0, ambient: 300.0}
initial: {type: constant, value: 300}
time: {steps: 10}
probes:
  every: 5
  points: {center: [0.5, 0.25], corner: [1, 0.5]}
"""


def real(name, expect, old, new):
    mutate(name, expect, old, new, BASE_REAL)


real("materials_not_map", "materials: expected a map of materials by name",
     "  copper: {conductivity: 401, density: 8960, specific_heat: 385}\n  mold: {diffusivity: 0.5}\n",
     "  - copper\n")
real("materials_empty", "materials: needs at least one material",
     "materials:\n  copper: {conductivity: 401, density: 8960, specific_heat: 385}\n  mold: {diffusivity: 0.5}\n",
     "materials: {}\n")
real("materials_conductivity_negative", "materials.copper.conductivity: must be > 0",
     "conductivity: 401", "conductivity: -401")
real("materials_density_zero", "materials.copper.density: must be > 0", "density: 8960", "density: 0")
real("materials_specific_heat_nan", "materials.copper.specific_heat: must be a finite number",
     "specific_heat: 385", "specific_heat: .nan")
real("materials_specific_heat_missing", "materials.copper.specific_heat: missing required key",
     ", specific_heat: 385", "")
real("materials_diffusivity_mixed", "materials.mold.conductivity: a material gives either diffusivity alone",
     "{diffusivity: 0.5}", "{diffusivity: 0.5, conductivity: 2}")
real("materials_diffusivity_zero", "materials.mold.diffusivity: must be > 0", "diffusivity: 0.5", "diffusivity: 0")
real("materials_typo", "unknown key 'conductivty' (did you mean 'conductivity'?)", "conductivity: 401",
     "conductivty: 401")
real("materials_duplicate", "materials.mold: duplicate key 'mold'", "  mold: {diffusivity: 0.5}\n",
     "  mold: {diffusivity: 0.5}\n  mold: {diffusivity: 0.7}\n")
real("materials_with_physics_alpha", "physics.alpha: is not used with materials", "materials:\n",
     "physics: {alpha: 1}\nmaterials:\n")
real("materials_need_order2", "scheme: materials need the order2 scheme", "time: {steps: 10}",
     "time: {steps: 10}\nscheme: order4")
real("materials_without_regions", "materials: give regions too",
     "regions:\n  - {material: mold}\n  - {material: copper, box: {lower: [0, 0], upper: [0.5, 0.5]}}\n"
     "  - {material: copper, where: \"x > 0.7 && y < 0.2\"}\n", "")
real("materials_nodes_without_material", "nodes have no material", "  - {material: mold}\n", "")
# materials that depend on temperature
COPPER = "  copper: {conductivity: 401, density: 8960, specific_heat: 385}\n"
real("length_with_unit", "grid.length[0]: expected a number, got '1000 mm' (numbers are bare, in SI units: metres, W/(m K), W/(m^2 K), kelvin; 200 mm is 0.2, 20 C is 293.15)",
     "length: [1.0, 0.5]", "length: [1000 mm, 0.5]")
real("conductivity_with_unit", "materials.copper.conductivity: expected a number (or a table [[T, conductivity], ...], T in K; or one value per axis), got '401 W/mK' (numbers are bare",
     COPPER, "  copper: {conductivity: 401 W/mK, density: 8960, specific_heat: 385}\n")
real("table_unsorted", "materials.copper.conductivity[1][0]: the temperatures must increase strictly (got 300 after 400)",
     COPPER, "  copper: {conductivity: [[400, 390], [300, 401]], density: 8960, specific_heat: 385}\n")
real("table_duplicate_temperature", "materials.copper.specific_heat[1][0]: the temperatures must increase strictly (got 300 after 300)",
     COPPER, "  copper: {conductivity: 401, density: 8960, specific_heat: [[300, 385], [300, 390]]}\n")
real("table_negative_value", "materials.copper.conductivity[1][1]: the conductivity must be > 0 at every temperature (got -1)",
     COPPER, "  copper: {conductivity: [[300, 401], [900, -1]], density: 8960, specific_heat: 385}\n")
real("table_zero_value", "materials.copper.specific_heat[0][1]: the specific heat must be > 0 at every temperature (got 0)",
     COPPER, "  copper: {conductivity: 401, density: 8960, specific_heat: [[300, 0], [900, 400]]}\n")
real("table_celsius_temperature", "materials.copper.conductivity[0][0]: a table's temperatures are absolute (K) and must be > 0",
     COPPER, "  copper: {conductivity: [[-20, 401], [100, 390]], density: 8960, specific_heat: 385}\n")
real("table_not_pairs", "materials.copper.conductivity[1]: expected a [T, conductivity] pair, got a list of 3 values",
     COPPER, "  copper: {conductivity: [[300, 401], [400, 390, 2]], density: 8960, specific_heat: 385}\n")
real("anisotropic_wrong_length", "materials.copper.conductivity: an anisotropic conductivity lists one value per axis of the 2D grid ([kx, ky]), got 3 values",
     COPPER, "  copper: {conductivity: [401, 401, 20], density: 8960, specific_heat: 385}\n")
real("anisotropic_specific_heat", "materials.copper.specific_heat: expected a number or a table [[T, specific heat], ...] (T in K), got a list of numbers",
     COPPER, "  copper: {conductivity: 401, density: 8960, specific_heat: [385, 390]}\n")
real("anisotropic_negative", "materials.copper.conductivity[1]: must be > 0 (got -3)",
     COPPER, "  copper: {conductivity: [401, -3], density: 8960, specific_heat: 385}\n")
real("phase_change_narrower_than_fp64",
     "materials.copper.phase_change.liquidus: must lie at least 1.36e-06 K above the solidus (1e-9 of the temperature; got a range of 1e-07 K",
     COPPER, "  copper: {conductivity: 401, density: 8960, specific_heat: 385, phase_change: {solidus: 1358, liquidus: 1358.0000001, latent_heat: 2.05e5}}\n")
real("table_nan", "materials.copper.specific_heat[1][1]: must be a finite number (got nan)",
     COPPER, "  copper: {conductivity: 401, density: 8960, specific_heat: [[300, 385], [600, .nan]]}\n")
real("table_overflow", "materials.copper.conductivity[1][1]: must be a finite number (got inf)",
     COPPER, "  copper: {conductivity: [[300, 401], [600, 1e400]], density: 8960, specific_heat: 385}\n")
real("phase_change_reversed", "materials.copper.phase_change.liquidus: must be above the solidus (got solidus 1358, liquidus 1357)",
     COPPER, "  copper: {conductivity: 401, density: 8960, specific_heat: 385, phase_change: {solidus: 1358, liquidus: 1357, latent_heat: 2.05e5}}\n")
real("phase_change_equal", "materials.copper.phase_change.liquidus: must be above the solidus",
     COPPER, "  copper: {conductivity: 401, density: 8960, specific_heat: 385, phase_change: {solidus: 1358, liquidus: 1358, latent_heat: 2.05e5}}\n")
real("phase_change_without_range", "materials.copper.phase_change.solidus: missing required key",
     COPPER, "  copper: {conductivity: 401, density: 8960, specific_heat: 385, phase_change: {latent_heat: 2.05e5}}\n")
real("phase_change_without_latent", "materials.copper.phase_change.latent_heat: missing required key",
     COPPER, "  copper: {conductivity: 401, density: 8960, specific_heat: 385, phase_change: {solidus: 1356, liquidus: 1358}}\n")
real("phase_change_negative_latent", "materials.copper.phase_change.latent_heat: must be > 0",
     COPPER, "  copper: {conductivity: 401, density: 8960, specific_heat: 385, phase_change: {solidus: 1356, liquidus: 1358, latent_heat: -5}}\n")
real("phase_change_with_diffusivity", "materials.mold.phase_change: a phase change needs conductivity, density and specific_heat",
     "  mold: {diffusivity: 0.5}\n", "  mold: {diffusivity: 0.5, phase_change: {solidus: 300, liquidus: 301, latent_heat: 10}}\n")
real("emissivity_above_one", "boundary.x+.emissivity: must lie in [0, 1]",
     "x+: {type: convective, h: 25.0, ambient: 300.0}", "x+: {type: convective, h: 25.0, ambient: 300.0, emissivity: 1.2}")
real("emissivity_negative", "boundary.x+.emissivity: must lie in [0, 1]",
     "x+: {type: convective, h: 25.0, ambient: 300.0}", "x+: {type: radiative, emissivity: -0.1, ambient: 300.0}")
real("radiative_without_emissivity", "boundary.x+.emissivity: missing required key",
     "x+: {type: convective, h: 25.0, ambient: 300.0}", "x+: {type: radiative, ambient: 300.0}")
real("convective_sine_keys_on_the_face",
     "boundary.x+.amplitude: unknown key 'amplitude' for a convective face (an ambient that varies is written in `ambient` itself",
     "x+: {type: convective, h: 25.0, ambient: 300.0}", "x+: {type: convective, h: 25.0, ambient: 300.0, amplitude: 8, frequency: 1.16e-5}")
real("radiative_with_h", "boundary.x+.h: unknown key",
     "x+: {type: convective, h: 25.0, ambient: 300.0}", "x+: {type: radiative, h: 5, emissivity: 0.8, ambient: 300.0}")
case("nonlinear_with_crank_nicolson",
     "time.method: materials.copper depends on temperature: such cases run explicit, backward-euler, bdf2 or steady, not crank-nicolson",
     sub(sub(BASE_REAL, COPPER, "  copper: {conductivity: [[300, 401], [600, 380]], density: 8960, specific_heat: 385}\n"),
         "time: {steps: 10}", "time: {method: crank-nicolson, dt: 0.1, steps: 10}"))
case("nonlinear_and_radiating_with_crank_nicolson",
     "time.method: materials.copper depends on temperature, boundary.x+ radiates: such cases run explicit, backward-euler, bdf2 or steady, not crank-nicolson",
     sub(sub(sub(BASE_REAL, COPPER, "  copper: {conductivity: [[300, 401], [600, 380]], density: 8960, specific_heat: 385}\n"),
             "x+: {type: convective, h: 25.0, ambient: 300.0}", "x+: {type: convective, h: 25.0, ambient: 300.0, emissivity: 0.8}"),
         "time: {steps: 10}", "time: {method: crank-nicolson, dt: 0.1, steps: 10}"))
real("boundary_insulated_flux", "unknown key 'flux' for an insulated face",
     "all: {type: neumann, flux: 0}", "all: {type: insulated, flux: 0}")
real("void_surface_insulated_h", "regions[1].surface.h: unknown key 'h' for an insulated face",
     "{material: copper, box: {lower: [0, 0], upper: [0.5, 0.5]}}",
     "{void: true, box: {lower: [0, 0], upper: [0.5, 0.5]}, surface: {type: insulated, h: 5}}")
case("void_radiating_with_crank_nicolson",
     "time.method: regions[1].surface radiates: such cases run explicit, backward-euler, bdf2 or steady, not crank-nicolson",
     sub(sub(BASE_REAL, "{material: copper, box: {lower: [0, 0], upper: [0.5, 0.5]}}",
             "{void: true, box: {lower: [0, 0], upper: [0.5, 0.5]}, "
             "surface: {type: convective, h: 5, ambient: 300, emissivity: 0.8}}"),
         "time: {steps: 10}", "time: {method: crank-nicolson, dt: 0.1, steps: 10}"))
real("radiative_ambient_below_zero", "boundary.x+.ambient: a radiating face needs its ambient in kelvin",
     "x+: {type: convective, h: 25.0, ambient: 300.0}", "x+: {type: radiative, emissivity: 0.8, ambient: -20}")
real("radiative_ambient_overflow", "boundary.x+.ambient: an ambient of 1.5e+308 K has no finite radiated power",
     "x+: {type: convective, h: 25.0, ambient: 300.0}", "x+: {type: radiative, emissivity: 0.8, ambient: 1.5e308}")
real("regions_unknown_material", "regions[1].material: unknown material 'coper' (did you mean 'copper'?)",
     "{material: copper, box", "{material: coper, box")
real("regions_box_without_thickness", "regions[1].box.upper[1]: the box has no thickness along y (lower = upper = 0.5)",
     "{material: copper, box: {lower: [0, 0], upper: [0.5, 0.5]}}", "{material: copper, box: {lower: [0, 0.5], upper: [0.5, 0.5]}}")
real("regions_not_list", "regions: expected a list of regions",
     "regions:\n  - {material: mold}\n  - {material: copper, box: {lower: [0, 0], upper: [0.5, 0.5]}}\n"
     "  - {material: copper, where: \"x > 0.7 && y < 0.2\"}\n", "regions: {material: mold}\n")
real("void_with_material", "regions[1].material: a void region holds no material",
     "{material: copper, box: {lower: [0, 0], upper: [0.5, 0.5]}}",
     "{void: true, material: copper, box: {lower: [0, 0], upper: [0.5, 0.5]}}")
real("void_without_shape", "regions[1]: a void needs a shape",
     "{material: copper, box: {lower: [0, 0], upper: [0.5, 0.5]}}", "{void: true}")
real("void_surface_dirichlet", "regions[1].surface.type: a void's surface cannot hold a temperature (dirichlet)",
     "{material: copper, box: {lower: [0, 0], upper: [0.5, 0.5]}}",
     "{void: true, box: {lower: [0, 0], upper: [0.5, 0.5]}, surface: {type: dirichlet, value: 3}}")
real("void_surface_on_where", "regions[2].surface: a surface condition needs the void's surface area",
     "{material: copper, where: \"x > 0.7 && y < 0.2\"}",
     "{void: true, where: \"x > 0.7 && y < 0.2\", surface: {type: convective, h: 5, ambient: 300}}")
real("void_surface_h_negative", "regions[1].surface.h: must be >= 0",
     "{material: copper, box: {lower: [0, 0], upper: [0.5, 0.5]}}",
     "{void: true, box: {lower: [0, 0], upper: [0.5, 0.5]}, surface: {type: convective, h: -5, ambient: 300}}")
real("surface_without_void", "regions[1].surface: only a void region",
     "{material: copper, box: {lower: [0, 0], upper: [0.5, 0.5]}}",
     "{material: copper, box: {lower: [0, 0], upper: [0.5, 0.5]}, surface: {type: convective, h: 5, ambient: 300}}")
real("void_not_boolean", "regions[1].void: expected true or false",
     "{material: copper, box: {lower: [0, 0], upper: [0.5, 0.5]}}",
     "{void: yes please, box: {lower: [0, 0], upper: [0.5, 0.5]}}")
# The body on the grid (io::resolve_body, as validate and run check it after loading).
real("void_surface_faces_no_body", "regions[1].surface: the void faces no node of the body",
     "{material: copper, box: {lower: [0, 0], upper: [0.5, 0.5]}}",
     "{void: true, box: {lower: [2, 0], upper: [3, 0.5]}, surface: {type: convective, h: 5, ambient: 300}}")
real("source_inside_void", "sources[0].box: lies wholly inside the void regions[1] (gap, line 8)",
     "{material: copper, box: {lower: [0, 0], upper: [0.5, 0.5]}}",
     "{void: true, name: gap, box: {lower: [0, 0], upper: [0.5, 0.5]}}")
case("void_cuts_off_steady_piece", "regions[1].box: the voids cut the body into 2 pieces",
     sub(sub(BASE_REAL, "{material: copper, box: {lower: [0, 0], upper: [0.5, 0.5]}}",
             "{void: true, box: {lower: [0.45, -1], upper: [0.55, 1]}}"),
         "time: {steps: 10}", "time: {method: steady}"))
real("void_removes_every_node", "regions: the voids remove every node",
     "  - {material: copper, where: \"x > 0.7 && y < 0.2\"}\n",
     "  - {material: copper, where: \"x > 0.7 && y < 0.2\"}\n"
     "  - {void: true, box: {lower: [-1, -1], upper: [2, 2]}}\n")
case("liquid_fraction_without_phase_change",
     "output.fields: liquid_fraction is written for materials with a phase_change, and none "
     "has one (leave it out)",
     sub(BASE_REAL, "time: {steps: 10}",
         "time: {steps: 10}\noutput: {fields: [temperature, liquid_fraction]}"))
real("regions_material_missing", "regions[0].material: missing required key", "{material: mold}", "{}")
real("regions_two_shapes", "regions[1].where: give at most one shape",
     "upper: [0.5, 0.5]}}", "upper: [0.5, 0.5]}, where: \"x > 0\"}")
real("regions_box_upper_below_lower", "regions[1].box.upper[0]: must be >= box.lower[0]",
     "upper: [0.5, 0.5]}}", "upper: [-0.5, 0.5]}}")
real("regions_box_short", "regions[1].box.upper: expected 2 values", "upper: [0.5, 0.5]}}", "upper: [0.5]}}")
real("regions_ball_radius_negative", "regions[1].ball.radius: must be > 0",
     "box: {lower: [0, 0], upper: [0.5, 0.5]}", "ball: {center: [0.5, 0.25], radius: -0.1}")
real("regions_where_bad_column", "regions[2].where: unknown name 'q'", "y < 0.2", "q < 0.2")
real("regions_where_z_in_2d", "regions[2].where: unknown name 'z'", "y < 0.2", "z < 0.2")
real("regions_where_unclosed", "regions[2].where: ')' expected", "x > 0.7 && y < 0.2", "(x > 0.7")
real("regions_file_with_material", "regions[1].material: a file region takes its materials from file.ids",
     "box: {lower: [0, 0], upper: [0.5, 0.5]}", "file: {path: m.h5, dataset: m, ids: {1: copper}}")
real("regions_file_missing", "regions[1].file.path: /nonexistent/map.h5: no such file",
     "{material: copper, box: {lower: [0, 0], upper: [0.5, 0.5]}}",
     "{file: {path: /nonexistent/map.h5, dataset: material, ids: {1: copper, 2: mold}}}")
real("regions_file_ids_unknown_material", "regions[1].file.ids.2: unknown material 'mould'",
     "{material: copper, box: {lower: [0, 0], upper: [0.5, 0.5]}}",
     "{file: {path: /nonexistent/map.h5, dataset: material, ids: {1: copper, 2: mould}}}")
real("regions_file_ids_word", "regions[1].file.ids.one: expected an integer",
     "{material: copper, box: {lower: [0, 0], upper: [0.5, 0.5]}}",
     "{file: {path: map.h5, dataset: material, ids: {one: copper}}}")
real("regions_file_ids_missing", "regions[1].file.ids: missing required key",
     "{material: copper, box: {lower: [0, 0], upper: [0.5, 0.5]}}",
     "{file: {path: map.h5, dataset: material}}")
real("regions_without_materials", "regions: regions name materials; give a materials section",
     "materials:\n  copper: {conductivity: 401, density: 8960, specific_heat: 385}\n  mold: {diffusivity: 0.5}\n",
     "physics: {alpha: 1}\n")
real("sources_power_and_density", "sources[0].power_density: give exactly one of power (W) and power_density",
     "power: 2.5}", "power: 2.5, power_density: 1}")
real("sources_neither_power", "sources[0]: give one of power", ", power: 2.5}", "}")
real("sources_power_nan", "sources[0].power: must be a finite number", "power: 2.5", "power: .nan")
# With materials a source's box is sampled below the grid: one between two nodes holds part of
# their control volumes; one outside the domain holds none. The shorthand keeps node shares.
real("sources_power_no_volume", "sources[0].box: holds no volume of the domain",
     "{lower: [0.1, 0.1], upper: [0.3, 0.3]}", "{lower: [1.1, 0.1], upper: [1.2, 0.3]}")
mutate("sources_power_no_node", "sources[0].box: holds no node of the grid",
       "scheme: order2\n",
       "scheme: order2\nsources:\n  - {box: {lower: [0.5, 0.5], upper: [0.51, 0.51]}, power: 2.5}\n")
real("sources_not_list", "sources: expected a list of sources",
     "  - {box: {lower: [0.1, 0.1], upper: [0.3, 0.3]}, power: 2.5}\n"
     "  - {power_density: 10, schedule: [[0, 0], [0.1, 1], [2, 1], [2.1, 0]]}\n", "  power: 2\n")
real("sources_typo", "unknown key 'pwoer' (did you mean 'power'?)", "power: 2.5", "pwoer: 2.5")
real("sources_file_with_power", "sources[0].power: a file source gives the density",
     "box: {lower: [0.1, 0.1], upper: [0.3, 0.3]}", "file: {path: q.h5, dataset: q}")
real("sources_file_missing", "sources[0].file.path: /nonexistent/q.h5: no such file",
     "box: {lower: [0.1, 0.1], upper: [0.3, 0.3]}, power: 2.5", "file: {path: /nonexistent/q.h5, dataset: q}")
real("sources_five_schedules", "at most 4 different source schedules",
     "  - {power_density: 10, schedule: [[0, 0], [0.1, 1], [2, 1], [2.1, 0]]}\n",
     "".join("  - {power_density: 1, schedule: %d}\n" % k for k in range(2, 7)))
real("schedule_not_sorted", "sources[1].schedule[3][0]: the table is not sorted by time: t = 2 follows t = 2.1",
     "[2, 1], [2.1, 0]", "[2.1, 1], [2, 0]")
real("schedule_equal_times", "sources[1].schedule[2][0]: the table is not sorted by time",
     "[0.1, 1], [2, 1]", "[0.1, 1], [0.1, 1]")
real("schedule_pair_of_three", "sources[1].schedule[1]: expected a [time, value] pair",
     "[0.1, 1],", "[0.1, 1, 3],")
real("schedule_empty", "sources[1].schedule: needs at least one [time, value] pair",
     "[[0, 0], [0.1, 1], [2, 1], [2.1, 0]]", "[]")
real("schedule_time_nan", "sources[1].schedule[0][0]: must be a finite number", "[[0, 0]", "[[.nan, 0]")
real("schedule_sine_typo", "unknown key 'amplitde' (did you mean 'amplitude'?)",
     "[[0, 0], [0.1, 1], [2, 1], [2.1, 0]]", "{value: 1, amplitde: 2}")
real("convective_h_negative", "boundary.x+.h: must be >= 0", "h: 25.0", "h: -25.0")
real("convective_h_missing", "boundary.x+.h: missing required key", "h: 25.0, ", "")
real("convective_ambient_missing", "boundary.x+.ambient: missing required key", ", ambient: 300.0", "")
real("convective_ambient_inf", "boundary.x+.ambient: must be a finite number", "ambient: 300.0", "ambient: .inf")
real("convective_ambient_unsorted", "boundary.x+.ambient[1][0]: the table is not sorted by time",
     "ambient: 300.0", "ambient: [[1, 300], [0.5, 310]]")
real("convective_flux_key", "unknown key 'flux' for a convective face", "h: 25.0", "h: 25.0, flux: 1")
real("convective_type_typo", "unknown value 'convecitve' (did you mean 'convective'?)",
     "type: convective", "type: convecitve")
real("neumann_flux_and_heat_flux", "boundary.all.heat_flux: give one of flux (du/dn) and heat_flux",
     "{type: neumann, flux: 0}", "{type: neumann, flux: 0, heat_flux: 2}")
real("neumann_heat_flux_nan", "boundary.all.heat_flux: must be a finite number",
     "{type: neumann, flux: 0}", "{type: neumann, heat_flux: .nan}")
real("dirichlet_table_with_amplitude", "boundary.all.amplitude: a table value takes no amplitude",
     "{type: neumann, flux: 0}", "{type: dirichlet, value: [[0, 1], [1, 2]], amplitude: 1}")
real("dirichlet_table_unsorted", "boundary.all.value[1][0]: the table is not sorted by time",
     "{type: neumann, flux: 0}", "{type: dirichlet, value: [[1, 1], [0, 2]]}")
real("probes_outside", "probes.points.corner[0]: lies outside the domain: x = 1.5", "corner: [1, 0.5]",
     "corner: [1.5, 0.5]")
real("probes_negative", "probes.points.center[1]: lies outside the domain", "center: [0.5, 0.25]",
     "center: [0.5, -0.25]")
real("probes_short", "probes.points.corner: expected 2 values", "corner: [1, 0.5]", "corner: [1]")
real("probes_every_negative", "probes.every: must be >= 0", "every: 5", "every: -5")
real("probes_points_missing", "probes.points: missing required key",
     "  points: {center: [0.5, 0.25], corner: [1, 0.5]}\n", "")
real("probes_points_list", "probes.points: expected a map of probe points by name",
     "{center: [0.5, 0.25], corner: [1, 0.5]}", "[[0.5, 0.25]]")
real("probes_name_comma", "must not hold commas", "corner: [1, 0.5]", "\"a,b\": [1, 0.5]")
real("probes_name_time", "probes.points.time: 'time' is a column of probes.csv", "corner: [1, 0.5]", "time: [1, 0.5]")
real("probes_typo", "unknown key 'evrey' (did you mean 'every'?)", "every: 5", "evrey: 5")
real("dt_unstable_for_materials", "time.dt: 1 is unstable for these materials and faces",
     "time: {steps: 10}", "time: {steps: 10, dt: 1}")
mutate("sources_need_order2", "scheme: sources need the order2 scheme", "scheme: order2",
       "scheme: order4\nsources:\n  - {power: 1}")
case("convective_needs_order2", "scheme: convective and heat_flux faces need the order2 scheme",
     sub(sub(BASE, "all: {type: dirichlet, value: 0}", "all: {type: convective, h: 1, ambient: 0}"),
         "scheme: order2", "scheme: order6"))

# not a case at all
case("empty_file", "the case is empty", "")
case("comments_only", "the case is empty", "# nothing here\n# at all\n")
case("top_level_list", "the top level must be a map", "- grid\n- physics\n")
case("top_level_scalar", "the top level must be a map", "heat\n")
case("truncated_flow", "not valid YAML", BASE.split("  n: [32, 32]")[0] + "  n: [32, 3")
case("truncated_inside_map", "not valid YAML", BASE.split("value: 0}")[0] + "value: 0")
case("unclosed_quote", "output.directory: the quoted string that starts here is never closed", sub(BASE, "directory: out", "directory: \"out"))
case("bad_indentation", "not valid YAML", sub(BASE, "  n: [32, 32]\n", "    n: [32, 32]\n   length: 1\n"))
case("duplicate_top_key", "grid: duplicate key 'grid'", BASE + "grid:\n  dims: 1\n")
case("duplicate_nested_key", "physics.alpha: duplicate key 'alpha' (first given on line", sub(BASE, "alpha: 1.0", "alpha: 1.0\n  alpha: 2.0"))
case("two_documents", "more than one YAML document", BASE + "---\n" + BASE)
case("deep_flow_100000", "nests lists and maps more than 64 levels", "[" * 100000 + "\n")
case("deep_flow_closed", "nests lists and maps more than 64 levels", "[" * 5000 + "]" * 5000 + "\n")
case("deep_block_sequence", "nests lists and maps more than 64 levels", "- " * 50000 + "x\n")
case("deep_flow_maps", "nests lists and maps more than 64 levels", "{a: " * 2000 + "1" + "}" * 2000 + "\n")
case("deep_indented_maps", "nests lists and maps more than 64 levels",
     "".join(" " * i + "k%d:\n" % i for i in range(100)))
case("deep_value_of_known_key", "nests lists and maps more than 64 levels", sub(BASE, "alpha: 1.0", "alpha: " + "[" * 100 + "]" * 100))
bomb = "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
for prev, cur in zip("abcdefgh", "bcdefghi"):
    bomb += "%s: &%s [%s]\n" % (cur, cur, ", ".join(["*" + prev] * 9))
case("alias_bomb_top", "grid: expected a map", bomb + "grid: *i\n")
case("alias_bomb_in_value", "physics.alpha: expected a number, got a list",
     bomb + sub(BASE, "alpha: 1.0", "alpha: *i"))
case("alias_as_key", "keys must be names", sub(BASE, "physics:\n", "physics:\n  ? [a, b]\n  : 1\n"))
case("unclosed_quote_in_flow", "the quoted string that starts on line 11 is never closed, so the '{' opened on line 11 finds no end",
     sub(BASE, "all: {type: dirichlet, value: 0}", "all: {type: \"dirichlet, value: 0}"))
case("unclosed_single_quote", "backend: the quoted string that starts here is never closed",
     sub(BASE, "backend: auto", "backend: 'it''s auto"))
case("stray_comma_top", "a ',' outside [ ] or { } cannot start a value", ",\n")
case("stray_comma_after_sequence", "a ',' outside [ ] or { } cannot start a value", "- a\n, b\n")
case("stray_comma_after_case", "a ',' outside [ ] or { } cannot start a value",
     "- " + BASE.replace("\n", "\n  ").rstrip() + "\n, x\n")
case("alias_undefined", "not valid YAML", sub(BASE, "alpha: 1.0", "alpha: *nowhere"))
case("flow_bracket_closed_by_brace", "the '[' opened on line 4 is not closed before the '}' on line 4",
     sub(BASE, "  n: [32, 32]\n  length: [1.0, 1.0]\n", "  n: {a: [32, 32}\n  length: [1.0, 1.0]\n"))
case("key_indented_under_a_value", "line 20 is indented by 3 spaces, more than line 19 above it (2), whose key holds a value",
     sub(BASE, "  steps: 100\n", "  steps: 100\n   every: 10\n"))
case("key_lined_up_with_no_key", "which lines it up with no key above it",
     sub(BASE, "physics:\n  alpha: 1.0\n  source: 0.0\n", "physics:\n    alpha: 1.0\n  source: 0.0\n"))
case("decimal_comma_in_flow_map", "a number as a key: a decimal comma?",
     sub(BASE, "physics:\n  alpha: 1.0\n  source: 0.0\n", "physics: {alpha: 1,5e-4}\n"))
case("merge_key_unknown", "unknown key '<<'", sub(BASE, "physics:\n", "base: &b {alpha: 2}\nphysics:\n  <<: *b\n"))
real("conductivity_below_fp64", "materials.copper.conductivity: must be at least 1e-30 (got 1.0e-200)",
     "conductivity: 401,", "conductivity: 1.0e-200,")
real("specific_heat_table_below_fp64", "materials.copper.specific_heat[1][1]: must be at least 1e-30",
     "specific_heat: 385}", "specific_heat: [[300, 385], [400, 1e-40]]}")

binary = {
    "binary_nul_bytes.yaml": ("NUL bytes", b"grid:\n  dims: 2\x00\x00\x00\n"),
    "binary_garbage.yaml": ("NUL bytes", bytes((i * 73 + 41) % 256 for i in range(512))),
    "binary_invalid_utf8.yaml": ("not valid UTF-8", b"\xff\xfe\xfdgrid: 1\n"),
    "binary_utf16.yaml": ("NUL bytes", "grid:\n  dims: 2\n".encode("utf-16")),
    "binary_control_char.yaml": ("control character 0x01", b"grid:\n  dims: \x01\n"),
    "binary_overlong_utf8.yaml": ("not valid UTF-8", b"physics:\n  alpha: \xc0\xaf\n"),
    "binary_surrogate_utf8.yaml": ("not valid UTF-8", b"physics:\n  alpha: \xed\xa0\x80\n"),
    "binary_truncated_utf8.yaml": ("not valid UTF-8", b"physics:\n  alpha: \xe2\x82"),
}


# Files of the corpus written by hand (committed beside the generated ones, kept by main()).
HAND_WRITTEN = {
    "ambient_sine_without_value_radiating.yaml",
    "contact_negative_resistance.yaml",
    "contact_three_materials.yaml",
    "contact_unknown_material.yaml",
    "materials_conductivity_subnormal.yaml",
    "materials_specific_heat_subnormal.yaml",
    "physics_alpha_subnormal.yaml",
}


def main():
    for name in os.listdir(HERE):
        if name.endswith(".yaml") and name not in HAND_WRITTEN:
            os.remove(os.path.join(HERE, name))
    names = set()
    for name, expect, text in cases:
        assert name not in names, name
        names.add(name)
        with open(os.path.join(HERE, name + ".yaml"), "w", newline="\n") as f:
            f.write("# expect: " + expect + "\n" + text)
    with open(os.path.join(HERE, "expectations.txt"), "w") as f:
        f.write("# Binary files of the corpus: file name, then the substring its error must contain.\n")
        for name, (expect, data) in sorted(binary.items()):
            with open(os.path.join(HERE, name), "wb") as out:
                out.write(data)
            f.write(name + " " + expect + "\n")
    print(len(cases) + len(binary), "files")


if __name__ == "__main__":
    main()
