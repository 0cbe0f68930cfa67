#!/usr/bin/env python3
"""Flow past an immersed sphere (D3Q27) or circular cylinder (D2Q9) in a uniform stream, with
kolibri, for the box and resolution studies of docs/validation.md (immersed boundaries).

  python3 scripts/wake.py run sphere 24 OUT [--re 100] [--box 20x10x10] [--kolibri K] [--set k=v ...]
  python3 scripts/wake.py analyse OUT            (prints one JSON object)
  python3 scripts/wake.py run sphere 24 OUT --no-body ...   (the same box and stream, no body)
  python3 scripts/wake.py run sphere 32 OUT --levels 3 ...  (a refined grid, the body in its finest level)
  python3 scripts/wake.py run sphere 32 OUT [--levels 3] --obstacle ...  (a bounce-back sphere instead, on either grid)

The stream U = 0.05 enters at x_min; the side faces move with it (the far field), the outlet is a
pressure outlet. The body (diameter D cells) sits on the box's axis, `--upstream` diameters from
the inlet (default: 0.3 of the box's length). The run lasts `--time` convective units D/U.
`analyse` reads bodies.csv and the axis probes: C_D = 2 F_x / (rho U^2 A) (A = D in 2D, pi D^2 / 4
in 3D), averaged over the last tenth of the run, its change over that tenth, C_L the same from
F_y, and the spread of C_D over that tenth; for a shedding cylinder the mean C_D and the amplitude of C_L over the last whole periods and
St = f D / U from the lift's upward zero crossings; the recirculation length L/D from the rear of
the body to where u_x on the axis turns positive (steady wakes; on a refined grid read on the axis itself,
each leaf cell along it, so on the finest level where that passes).

With `--levels L` (L > 1) the grid is refined ([refinement]): D is the body's diameter in cells of
the finest level, level 0 has D / 2^(L-1) across it and the box in level-0 cells; the finest level
is a band of 8 of its cells around the body (`--band W`: W cells; about D keeps the recirculation
bubble inside it, docs/user-guide.md), level 1 (L >= 3) a box from one diameter upstream of
the body to three downstream, one diameter to each side of the axis. The body is immersed in the
finest level (the uniform runs' operators and storage, its samples 0.3 cells of that level apart).
Loads are in level-0 units, so C_D uses level 0's diameter.

With `--obstacle` (either grid) the body is a halfway bounce-back `[[obstacle]]` instead (D3Q27
`kbc` FP64, D2Q9 for the cylinder; loads from obstacles.csv; `--set 'obstacle[0].wall="interpolated"'`
for Bouzidi's rule).
"""
import argparse
import json
import math
import os
import sys

from caserun import finished_run, rows, run_case

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
U = 0.05


def deck(body, d, re, box, upstream, time, with_body=True, levels=1, obstacle=False, band=8):
    three = body == "sphere"
    bounce = obstacle  # a bounce-back obstacle instead of the immersed body
    d = d // 2 ** (levels - 1)  # level 0's diameter
    n = [round(b * d) for b in box]
    c = [upstream * d, n[1] / 2, n[2] / 2 if three else 0.5]
    nu = U * d / re
    faces = ["y_min", "y_max"] + (["z_min", "z_max"] if three else [])
    vel = "[0.05, 0.0, 0.0]" if three else "[0.05, 0.0]"
    every = max(1, d // 4)
    lines = [
        "[model]",
        f'lattice = "{"D3Q27" if three else "D2Q9"}"',
        f'collision = "{"kbc" if bounce else ("acm" if three else "cm")}"',
        f'precision = "{"fp64" if bounce else "fp32"}"',
    ]
    if three and not bounce:
        lines.append("acm_viscosity = 0.005")
    lines += ["", "[domain]", f"nx = {n[0]}", f"ny = {n[1]}"] + ([f"nz = {n[2]}"] if three else [])
    lines += ["", "[initial]", f"velocity = {vel}", "", "[physics]", f"reynolds = {re}", f"velocity = {U}",
              f"length = {d}", "", "[boundary]", f'x_min = {{ type = "velocity_inlet", velocity = {vel} }}',
              'x_max = { type = "pressure_outlet" }']
    lines += [f'{f} = {{ type = "moving_wall", velocity = {vel} }}' for f in faces]
    pos = f"[{c[0]}, {c[1]}, {c[2]}]" if three else f"[{c[0]}, {c[1]}]"
    if with_body and bounce:
        lines += ["", "[[obstacle]]", 'name = "body"', 'type = "sphere"' if three else 'type = "cylinder"',
                  f"center = {pos}", f"radius = {d / 2}"]
    elif with_body:
        lines += ["", "[[body]]", 'name = "body"', f'type = "{"sphere" if three else "cylinder"}"',
                  f"radius = {d / 2}", f"position = {pos}", "spacing = 0.3", "", "[ib]", f"loads_every = {every}"]
    if with_body and levels > 1:
        lines += ["", "[refinement]", f"levels = {levels}", "", "[[refinement.region]]", f"level = {levels - 1}",
                  'type = "band"', 'around = "body"', f"width = {band}"]
        if levels >= 3:
            lo = [c[0] - d, c[1] - d] + ([c[2] - d] if three else [])
            hi = [c[0] + 3 * d, c[1] + d] + ([c[2] + d] if three else [])
            lines += ["", "[[refinement.region]]", "level = 1", f"min = {lo}", f"max = {hi}"]
    lines += ["", "[run]", f"steps = {round(time * d / U)}", "write_fields = false", "progress = \"lines\""]
    lines += [f"obstacle_loads_every = {every}", ""] if bounce else [""]
    if levels > 1:  # the axis itself, a line between cells: each leaf cell along it (the finest where it passes)
        at = f"[0, {n[1] // 2}.0, {n[2] // 2}.0]" if three else f"[0, {n[1] // 2}.0]"
        lines += ["[[probe]]", 'name = "axis"', 'type = "line"', f"at = {at}", 'axis = "x"', ""]
        return "\n".join(lines), nu
    # u_x on the rows of cells beside the axis (the centre lies on cell faces).
    rows = [(y, z) for y in (n[1] // 2 - 1, n[1] // 2) for z in ((n[2] // 2 - 1, n[2] // 2) if three else (None,))]
    for i, (y, z) in enumerate(rows):
        start = f"[0, {y}, {z}]" if three else f"[0, {y}]"
        lines += ["[[probe]]", f'name = "axis{i}"', 'type = "line"', f"start = {start}", 'axis = "x"', ""]
    return "\n".join(lines), nu


def analyse(out):
    meta, summary = finished_run(out, "wake.py")
    three, levels = meta["body"] == "sphere", meta.get("levels", 1)
    d = meta["D"] // 2 ** (levels - 1)  # in the cells of level 0, whose units the loads are in
    area = math.pi * d * d / 4 if three else d
    scale = 2.0 / (U * U * area)
    loads = os.path.join(out, "obstacles.csv" if meta.get("obstacle") else "bodies.csv")
    hist = [(int(r["step"]), float(r["fx"]) * scale, float(r["fy"]) * scale) for r in rows(loads)]
    res = dict(meta)
    res["steps"] = hist[-1][0]
    tenth = [h for h in hist if h[0] > hist[-1][0] * 0.9]
    res["cd"] = sum(h[1] for h in tenth) / len(tenth)
    first = [h for h in hist if hist[-1][0] * 0.8 < h[0] <= hist[-1][0] * 0.9]
    res["cd_change_last_tenth"] = res["cd"] - sum(h[1] for h in first) / max(1, len(first))
    res["cd_spread_last_tenth"] = max(h[1] for h in tenth) - min(h[1] for h in tenth)
    res["cl"] = sum(h[2] for h in tenth) / len(tenth)
    lift = [h[2] for h in hist]
    ups = []
    for i in range(1, len(lift)):
        if lift[i - 1] < 0.0 <= lift[i]:
            t = lift[i - 1] / (lift[i - 1] - lift[i])
            ups.append(hist[i - 1][0] + t * (hist[i][0] - hist[i - 1][0]))
    # Shedding: a lift of amplitude above 0.02 that changes sign at least five times, with a
    # period longer than D/U (shorter ones are pressure waves, not vortices).
    amplitude = 0.5 * (max(h[2] for h in tenth) - min(h[2] for h in tenth))
    shedding = len(ups) >= 6 and amplitude > 0.02 and (ups[-1] - ups[-6]) / 5 > d / U
    if shedding:  # the last five periods
        last = ups[-6:]
        period = (last[-1] - last[0]) / 5
        window = [h for h in hist if last[0] <= h[0] < last[-1]]
        res["st"] = d / (period * U)
        res["cd"] = sum(h[1] for h in window) / len(window)
        res["cl_amplitude"] = 0.5 * (max(h[2] for h in window) - min(h[2] for h in window))
        res["periods"] = 5
    else:
        rear = meta["centre_x"] + d / 2  # level-0 cells, as the probes
        if levels > 1:  # one line between cells: its rows give the point itself
            ux = [(float(r["x"]), float(r["ux"])) for r in rows(os.path.join(out, "line_axis.csv"))]
        else:  # rows along cells give the cell (its centre + 0.5)
            probes = [rows(os.path.join(out, f"line_axis{i}.csv")) for i in range(4 if three else 2)]
            ux = [(float(p[0]["x"]) + 0.5, sum(float(q["ux"]) for q in p) / len(p)) for p in zip(*probes)]
        behind = [(x, v) for x, v in ux if x > rear]
        res["recirculation"] = None
        seen = False
        for (x0, v0), (x1, v1) in zip(behind, behind[1:]):
            seen = seen or v0 < 0.0
            if seen and v0 < 0.0 <= v1:
                res["recirculation"] = (x0 + (x1 - x0) * (-v0) / (v1 - v0) - rear) / d
                break
    for k in ("ib_retraction", "ib_iterations", "ib_samples", "mlups", "wall_seconds"):
        if k in summary:
            res[k] = summary[k]
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("action", choices=["run", "analyse"])
    ap.add_argument("body", nargs="?", choices=["sphere", "cylinder"])
    ap.add_argument("D", nargs="?", type=int, help="diameter in cells (even)")
    ap.add_argument("out", help="output directory")
    ap.add_argument("--re", type=float, default=100.0)
    ap.add_argument("--box", default=None, help="box in diameters, LxW(xW): default 20x10x10 (sphere), 32x20 (cylinder)")
    ap.add_argument("--upstream", type=float, default=None, help="body centre from the inlet in diameters")
    ap.add_argument("--time", type=float, default=60.0, help="run length in convective units D/U")
    ap.add_argument("--kolibri", default=os.path.join(ROOT, "build", "bin", "kolibri"))
    ap.add_argument("--set", action="append", default=[], help="more deck overrides")
    ap.add_argument("--levels", type=int, default=1,
                    help="refinement levels (> 1: a refined grid, the body in its finest level, D in its cells)")
    ap.add_argument("--band", type=int, default=8,
                    help="with --levels: the finest level's band around the body, in its cells")
    ap.add_argument("--obstacle", action="store_true",
                    help="a halfway bounce-back obstacle instead of the immersed body (KBC FP64)")
    ap.add_argument("--no-body", action="store_true",
                    help="the same box, stream and steps without the body: the fluid's step time, against which "
                         "a run with the body measures the immersed boundary's cost without ib.timing's fences")
    a = ap.parse_args()
    if a.action == "analyse":
        print(json.dumps(analyse(a.out), indent=1))
        return
    if a.body is None or a.D is None or a.D < 4 or a.D % 2:
        sys.exit("wake.py: run needs a body and an even diameter D >= 4 (cells)")
    if a.levels < 1 or a.D % 2 ** a.levels:
        sys.exit(f"wake.py: --levels {a.levels}: D must be a multiple of 2^levels (an even diameter on level 0)")
    if a.band < 1:
        sys.exit("wake.py: --band takes a width of at least one cell")
    box = [float(x) for x in (a.box or ("20x10x10" if a.body == "sphere" else "32x20")).split("x")]
    if len(box) != (3 if a.body == "sphere" else 2):
        sys.exit("wake.py: --box takes three lengths for a sphere, two for a cylinder (diameters)")
    box += [0.0] * (3 - len(box))
    upstream = a.upstream if a.upstream is not None else 0.3 * box[0]
    text, _ = deck(a.body, a.D, a.re, box, upstream, a.time, with_body=not a.no_body, levels=a.levels,
                   obstacle=a.obstacle, band=a.band)
    d0 = a.D // 2 ** (a.levels - 1)
    meta = {"body": a.body, "D": a.D, "re": a.re, "box": box, "upstream": upstream, "centre_x": upstream * d0,
            "no_body": a.no_body, "levels": a.levels, "obstacle": a.obstacle, "band": a.band if a.levels > 1 else None}
    sys.exit(run_case(a.out, text, meta, a.kolibri, a.set))


if __name__ == "__main__":
    main()
