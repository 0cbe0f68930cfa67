#!/usr/bin/env python3
"""An immersed circular cylinder oscillating in-line in fluid at rest (D2Q9), with kolibri: the
benchmark of Dütsch, Durst, Becker & Lienhart (1998, J. Fluid Mech. 360), Re = U_m D / nu = 100,
KC = U_m T / D = 5, for docs/validation.md (immersed bodies, prescribed motion).

  python3 scripts/oscillating.py run 40 OUT [--box 30x20] [--periods 6] [--um 0.02] [--kolibri K] [--set k=v ...]
  python3 scripts/oscillating.py analyse OUT     (prints one JSON object)

The cylinder (diameter D cells) moves as x(t) = x_0 - A sin(2 pi t / T), A = KC D / (2 pi), in a
periodic box of `--box` diameters, its peak speed U_m = `--um`. `analyse` fits the in-line force
of the last two periods to Morison's equation, as Dütsch et al. do,
F(t) = -1/2 rho C_d D |u| u - 1/4 rho pi C_i D^2 du/dt (u the cylinder's velocity), by least
squares; they give C_d = 2.09 and C_i = 1.45 (their computation; the experiment: 2.10 and 1.45).
It also reports the fit's residual relative to the force's amplitude.
"""
import argparse
import json
import math
import os
import sys

from caserun import finished_run, rows, run_case

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KC, RE = 5.0, 100.0


def deck(d, box, periods, um):
    n = [round(b * d) for b in box]
    period = KC * d / um
    amplitude = KC * d / (2 * math.pi)
    steps = round(periods * period)
    lines = ["[model]", 'lattice = "D2Q9"', 'collision = "cm"', 'precision = "fp64"', "",
             "[domain]", f"nx = {n[0]}", f"ny = {n[1]}", "",
             "[physics]", f"reynolds = {RE}", f"velocity = {um}", f"length = {d}", "",
             "[[body]]", 'name = "cylinder"', 'type = "cylinder"', f"radius = {d / 2}",
             f"position = [{n[0] / 2}, {n[1] / 2}]", f"amplitude = [{-amplitude}, 0.0]",
             f"frequency = {1.0 / period}", "spacing = 0.3", "",
             "[ib]", f"loads_every = {max(1, round(period / 200))}", "",
             "[run]", f"steps = {steps}", "write_fields = false", 'progress = "lines"', ""]
    return "\n".join(lines), {"D": d, "box": box, "periods": periods, "um": um, "period": period,
                               "amplitude": amplitude, "steps": steps}


def analyse(out):
    meta, _ = finished_run(out, "oscillating.py")
    d, period, um = meta["D"], meta["period"], meta["um"]
    w = 2 * math.pi / period
    history = [(int(r["step"]), float(r["fx"])) for r in rows(os.path.join(out, "bodies.csv"))]
    last = [(t, fx) for t, fx in history if t >= history[-1][0] - 2 * period]
    # The cylinder's velocity u = -A w cos(w t) = -U_m cos(w t); du/dt = U_m w sin(w t).
    a_rows = [(-0.5 * d * abs(-um * math.cos(w * t)) * (-um * math.cos(w * t)),
               -0.25 * math.pi * d * d * um * w * math.sin(w * t), fx) for t, fx in last]
    s11 = sum(a * a for a, b, _ in a_rows)
    s12 = sum(a * b for a, b, _ in a_rows)
    s22 = sum(b * b for _, b, _ in a_rows)
    r1 = sum(a * y for a, _, y in a_rows)
    r2 = sum(b * y for _, b, y in a_rows)
    det = s11 * s22 - s12 * s12
    cd, ci = (r1 * s22 - r2 * s12) / det, (s11 * r2 - s12 * r1) / det
    amp = max(abs(y) for *_, y in a_rows)
    res = math.sqrt(sum((y - cd * a - ci * b) ** 2 for a, b, y in a_rows) / len(a_rows)) / amp
    out_json = dict(meta)
    out_json.update({"cd": cd, "ci": ci, "fit_residual": res, "force_amplitude": amp, "rows": len(a_rows),
                     "published": {"cd": 2.09, "ci": 1.45}})
    return out_json


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("action", choices=["run", "analyse"])
    ap.add_argument("D", nargs="?", type=int, help="diameter in cells (even)")
    ap.add_argument("out", help="output directory")
    ap.add_argument("--box", default="30x20", help="box in diameters, LxW")
    ap.add_argument("--periods", type=float, default=6.0)
    ap.add_argument("--um", type=float, default=0.02, help="peak speed of the cylinder (lattice units)")
    ap.add_argument("--kolibri", default=os.path.join(ROOT, "build", "bin", "kolibri"))
    ap.add_argument("--set", action="append", default=[], help="more deck overrides")
    a = ap.parse_args()
    if a.action == "analyse":
        print(json.dumps(analyse(a.out), indent=1))
        return
    if a.D is None or a.D < 4 or a.D % 2:
        sys.exit("oscillating.py: run needs an even diameter D >= 4 (cells)")
    box = [float(x) for x in a.box.split("x")]
    if len(box) != 2:
        sys.exit("oscillating.py: --box takes two lengths (diameters)")
    text, meta = deck(a.D, box, a.periods, a.um)
    sys.exit(run_case(a.out, text, meta, a.kolibri, a.set))


if __name__ == "__main__":
    main()
