#!/usr/bin/env python3
"""The DFG cylinder benchmarks 2D-1 (steady, Re 20) and 2D-2 (periodic, Re 100) of Schaefer &
Turek (1996) with kolibri, at a cylinder diameter of D cells, and their analysis against the
published bands (docs/validation.md).

  python3 scripts/dfg.py run 2d1 40 OUT [--kolibri build/bin/kolibri] [--velocity U] [--immersed] [--levels L] [--set k=v ...]
  python3 scripts/dfg.py analyse 2d1 40 OUT [--levels L]     (prints one JSON object)

`--immersed` replaces the bounce-back cylinder by an immersed body of the same diameter (the deck
is written to OUT/deck.toml; `--set ib.retraction=0.3 --set ib.iterations=3` set its forcing);
`analyse` then reads bodies.csv.

`--levels L` (L > 1) refines the grid (the deck is written to OUT/deck.toml): D is the cylinder's
diameter in cells of the finest level, level 0 has D / 2^(L-1) across it (the channel, the steps
and the loads in level-0 cells); the finest level is a band of 8 of its cells around the cylinder
(`--band W`: W cells; about D keeps the recirculation bubble inside it, docs/user-guide.md),
level 1 (L >= 3) a box from one diameter upstream of the cylinder to three downstream, one to
each side of its centre (`--wall-band W`: the channel's walls too, a band of W of its cells). The
pressure probes stand 0.5 and 1.5 cells of the finest level off the
surface (points between cells read the finest level there), and L_a is read on the axis itself,
a line between cells through each leaf cell along it (on the finest level where it passes).
`analyse` takes the same --levels.

`run` takes inputs/dfg_2d1.toml or inputs/dfg_2d2.toml (written for D = 20) and scales the
channel, the cylinder, the probes, the steps and the sampling to D; the lattice velocity stays,
so tau grows with D (acoustic scaling), unless --velocity sets another mean inflow. `analyse` reads the run's obstacles.csv and probes:
C_D = 2 F_x / (U^2 D), C_L = 2 F_y / (U^2 D) (U the mean inflow, 2/3 of the parabola's peak),
the pressure difference between the cylinder's front and back points in the benchmark's units
(rho = 1 kg/m^3, U = 0.2 m/s in 2D-1 and 1 m/s in 2D-2), each point's pressure extrapolated
linearly from the two probes half a cell and one and a half cells off the surface (an immersed
cylinder: 1.5 and 2.5 cells, outside its forcing layer); 2D-1 also the
recirculation length L_a (m; where u_x on the axis behind the cylinder turns positive), 2D-2 the
Strouhal number St = f D / U from the lift's period and the extremes over the last periods.
"""
import argparse
import json
import math
import os
import re
import subprocess
import sys

from caserun import rows

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The published bands (lower, upper), Schaefer & Turek 1996, Table 4 and Table 5.
BANDS = {
    "2d1": {"cd": (5.57, 5.59), "cl": (0.0104, 0.0110), "la": (0.0842, 0.0852),
            "dp": (0.1172, 0.1176)},
    "2d2": {"cd_max": (3.22, 3.24), "cl_max": (0.99, 1.01), "st": (0.295, 0.305),
            "dp": (2.46, 2.50)},
}
U_SI = {"2d1": 0.2, "2d2": 1.0}  # the benchmarks' mean inflow (m/s), rho = 1 kg/m^3
U_LATTICE = {"2d1": 0.04, "2d2": 0.05}  # the decks' mean inflow (lattice units)
STEPS_PER_D = 5500  # 2D-1: about ten flow-throughs; 2D-2: about 80 shedding periods


def overrides(case, d, u=None, immersed=False, levels=1):
    """--set arguments that scale the D = 20 deck to diameter d (cells of level 0) and, where
    given, to the mean inflow u (lattice units; the steps and the sampling scale with 1/u); the
    pressure probes 0.5 and 1.5 cells of the finest of `levels` off the surface."""
    c = 2 * d  # the centre, 0.2 m from the inlet and the lower wall
    slow = 1.0 if u is None else U_LATTICE[case] / u
    every = max(1, round((50 * d if case == "2d1" else d // 4) * slow))
    sets = [f"domain.nx={22 * d}", f"domain.ny={round(4.1 * d)}", f"physics.length={d}",
            f"run.steps={round(STEPS_PER_D * d * slow)}"]
    if immersed:
        sets += [f"body[0].position=[{c},{c}]", f"body[0].radius={d / 2}", f"ib.loads_every={every}"]
    else:
        sets += [f"obstacle[0].center=[{c},{c}]", f"obstacle[0].radius={d / 2}",
                 f"run.obstacle_loads_every={every}"]
    if u is not None:
        sets += [f"physics.velocity={u}", f"boundary.x_min.velocity=[{1.5 * u},0.0]"]
    front, back = c - d / 2, c + d / 2
    near, far = (x / 2 ** (levels - 1) for x in probe_offsets(immersed))
    for i, x in enumerate([front - near, front - far, back + near, back + far]):
        sets += [f"probe[{i}].at=[{x},{c}]", f"probe[{i}].every={every}"]
    if case == "2d1" and levels > 1:  # the axis itself, on the finest level along it
        sets += [f"probe[4].at=[0,{c}]", f"probe[5].at=[0,{c}]"]
    elif case == "2d1":
        sets += [f"probe[4].start=[0,{c - 1}]", f"probe[5].start=[0,{c}]"]
    return sets


def probe_offsets(immersed):
    """How far off the surface (cells) the two pressure probes on either side stand: an immersed
    body's force acts up to about a cell outside its surface, where the pressure jumps across the
    forcing layer, so its probes stand a cell farther out."""
    return (1.5, 2.5) if immersed else (0.5, 1.5)


def immersed_deck(text):
    """The deck with its [[obstacle]] table replaced by an immersed cylinder (samples 0.3 cells
    apart) and an [ib] table."""
    start = text.index("[[obstacle]]")
    end = text.index("\n\n", start)
    body = ('[[body]]\nname = "cylinder"\ntype = "cylinder"\nradius = 10.0\nposition = [40.0, 40.0]\n'
            'spacing = 0.3\n\n[ib]\nloads_every = 1000')
    text = text[:start] + body + text[end:]
    return re.sub(r"obstacle_loads_every = \d+\n", "", text)


def refined_deck(text, levels, d, wall_band=0, band=8):
    """The deck with a [refinement] of `levels` levels around its cylinder (diameter d cells of
    level 0, centred at (2 d, 2 d)): a band of `band` cells of the finest level, and from L = 3 on
    level 1 in a box from one diameter upstream to three downstream, one diameter to each side;
    with `wall_band` > 0 also a band of that many finest cells along the channel's walls."""
    c = 2 * d
    lines = ["", "[refinement]", f"levels = {levels}", "", "[[refinement.region]]",
             f"level = {levels - 1}", 'type = "band"', 'around = "cylinder"', f"width = {band}"]
    if levels >= 3:
        lines += ["", "[[refinement.region]]", "level = 1", f"min = [{c - d}, {c - d}]",
                  f"max = [{c + 3 * d}, {c + d}]"]
    if wall_band > 0:
        lines += ["", "[[refinement.region]]", f"level = {levels - 1}", 'type = "band"', 'around = "walls"',
                  f"width = {wall_band}"]
    start = text.index("[run]")
    text = text[:start] + "\n".join(lines[1:]) + "\n\n" + text[start:]
    # The wake's two rows beside the axis become lines between cells on the axis (overrides
    # places them): each leaf cell along it, on the finest level where it passes.
    return text.replace("start = [0, 39]", "at = [0, 40.0]").replace("start = [0, 40]", "at = [0, 40.0]")


def pressure(rho):
    return (float(rho) - 1.0) / 3.0


def surface_pressures(out, immersed):
    """Front and back surface pressures (lattice units) per probe row: (step, p_front, p_back),
    each extrapolated linearly to the surface from its two probes."""
    p = {k: rows(os.path.join(out, f"probe_{k}.csv")) for k in ("front1", "front2", "back1", "back2")}
    near, far = probe_offsets(immersed)

    def surface(a, b):
        return (far * pressure(a["rho"]) - near * pressure(b["rho"])) / (far - near)

    result = []
    for a, b, c, e in zip(p["front1"], p["front2"], p["back1"], p["back2"]):
        front, back = surface(a, b), surface(c, e)
        result.append((int(a["step"]), front, back))
    return result


def analyse(case, d, out):
    with open(os.path.join(out, "summary.json")) as f:
        status = json.load(f).get("status")
    if status != "completed":
        sys.exit(f"dfg.py: the run in {out} did not complete (status {status}): nothing to analyse")
    with open(os.path.join(out, "summary.json")) as f:
        u = json.load(f)["velocity_scale"]  # the mean inflow (physics.velocity)
    scale = 2.0 / (u * u * d)
    immersed = os.path.exists(os.path.join(out, "bodies.csv"))
    history = os.path.join(out, "bodies.csv" if immersed else "obstacles.csv")
    loads = [(int(r["step"]), float(r["fx"]) * scale, float(r["fy"]) * scale) for r in rows(history)]
    dp_unit = (U_SI[case] / u) ** 2
    res = {"case": case, "D": d, "steps": loads[-1][0], "cylinder": "immersed" if immersed else "obstacle"}
    if case == "2d1":
        res["cd"], res["cl"] = loads[-1][1], loads[-1][2]
        res["cd_change_last_tenth"] = loads[-1][1] - loads[-len(loads) // 10 - 1][1]
        _, front, back = surface_pressures(out, immersed)[-1]
        res["dp"] = (front - back) * dp_unit
        below = rows(os.path.join(out, "line_wake_below.csv"))
        above = rows(os.path.join(out, "line_wake_above.csv"))
        # Rows along cells give the cell (its centre + 0.5); lines between cells the point itself.
        ux = [(float(a["x"]) + (0.0 if "level" in a else 0.5), 0.5 * (float(a["ux"]) + float(b["ux"])))
              for a, b in zip(below, above)]
        back_x = 2 * d + d / 2
        behind = [(x, v) for x, v in ux if x > back_x]
        la = None
        for (x0, v0), (x1, v1) in zip(behind, behind[1:]):
            if v0 <= 0.0 < v1:
                la = x0 + (x1 - x0) * (-v0) / (v1 - v0) - back_x
                break
        res["la"] = None if la is None else la * 0.1 / d  # D = 0.1 m
    else:
        steps = [s for s, _, _ in loads]
        lift = [cl for _, _, cl in loads]
        ups = []  # upward zero crossings of the lift, interpolated
        for i in range(1, len(lift)):
            if lift[i - 1] < 0.0 <= lift[i]:
                t = lift[i - 1] / (lift[i - 1] - lift[i])
                ups.append(steps[i - 1] + t * (steps[i] - steps[i - 1]))
        last = ups[-11:]  # the last ten periods
        period = (last[-1] - last[0]) / (len(last) - 1)
        res["st"] = d / (period * u)
        window = [(s, cd, cl) for s, cd, cl in loads if s >= last[0]]
        res["cd_max"] = max(cd for _, cd, _ in window)
        res["cl_max"] = max(cl for _, _, cl in window)
        res["periods_used"] = len(last) - 1
        # dp at t0 + T/2, t0 the last lift maximum with half a period of data after it
        lastp = [(s, cl) for s, _, cl in loads if last[-2] <= s < last[-1]]
        t0 = max(lastp, key=lambda r: r[1])[0]
        pr = surface_pressures(out, immersed)
        target = t0 + period / 2
        s_, f_, b_ = min(pr, key=lambda r: abs(r[0] - target))
        res["dp"] = (f_ - b_) * dp_unit
    res["inside"] = {k: (res[k] is not None and lo <= res[k] <= hi) for k, (lo, hi) in BANDS[case].items()}
    res["bands"] = BANDS[case]
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("action", choices=["run", "analyse"])
    ap.add_argument("case", choices=["2d1", "2d2"])
    ap.add_argument("D", type=int, help="cylinder diameter in cells (even)")
    ap.add_argument("out", help="output directory")
    ap.add_argument("--kolibri", default=os.path.join(ROOT, "build", "bin", "kolibri"))
    ap.add_argument("--velocity", type=float, help="mean inflow in lattice units (default: the deck's)")
    ap.add_argument("--immersed", action="store_true", help="an immersed cylinder instead of the bounce-back one")
    ap.add_argument("--set", action="append", default=[], help="more deck overrides")
    ap.add_argument("--levels", type=int, default=1,
                    help="refinement levels (> 1: a refined grid, the cylinder in its finest level, D in its cells)")
    ap.add_argument("--band", type=int, default=8,
                    help="with --levels: the finest level's band around the cylinder, in its cells")
    ap.add_argument("--wall-band", type=int, default=0,
                    help="with --levels: the channel's walls in the finest level too, a band of this many of its cells")
    a = ap.parse_args()
    if a.levels < 1 or a.D % 2 ** a.levels or a.D // 2 ** (a.levels - 1) < 4:
        sys.exit(f"dfg.py: D must be a multiple of 2^levels = {2 ** a.levels} cells, at least 4 cells on level 0")
    if a.band < 1:
        sys.exit("dfg.py: --band takes a width of at least one cell")
    if a.levels > 1 and a.immersed:
        sys.exit("dfg.py: --levels takes the obstacle cylinder, not --immersed")
    d0 = a.D // 2 ** (a.levels - 1)  # the diameter in cells of level 0
    if a.action == "run":
        deck = os.path.join(ROOT, "inputs", f"dfg_{a.case}.toml")
        if a.immersed or a.levels > 1:
            with open(deck) as f:
                text = f.read()
            text = immersed_deck(text) if a.immersed else refined_deck(text, a.levels, d0, a.wall_band, a.band)
            os.makedirs(a.out, exist_ok=True)
            deck = os.path.join(a.out, "deck.toml")
            with open(deck, "w") as f:
                f.write(text)
        cmd = [a.kolibri, "run", deck, "--output-dir", a.out, "--progress", "lines"]
        for s in overrides(a.case, d0, a.velocity, a.immersed, a.levels) + a.set:
            cmd += ["--set", s]
        sys.exit(subprocess.call(cmd))
    res = analyse(a.case, d0, a.out)
    res["D"], res["levels"] = a.D, a.levels
    print(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
