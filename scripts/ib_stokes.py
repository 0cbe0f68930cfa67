#!/usr/bin/env python3
"""Stokes flow through a simple cubic array of immersed spheres, with kolibri: the drag of the
immersed boundary against Zick & Homsy (1982), to calibrate the retraction in 3D the way Breugem
(2012) did (docs/validation.md, "Immersed boundaries: the retraction in 3D").

  python3 scripts/ib_stokes.py run L OUT [--fraction 0.125] [--retraction 0.3] [--kolibri K] [--set k=v ...]
  python3 scripts/ib_stokes.py analyse OUT [OUT ...]     (one JSON object a run)
  python3 scripts/ib_stokes.py fit OUT [OUT ...]         (the error's first- and second-order parts)

One sphere (an immersed body, D3Q27 `acm` FP64, samples 0.3 cells apart, three direct-forcing
passes) of radius a = (a/L) L at the centre of a periodic cube of L cells, its solid fraction
c = 4 pi a^3 / (3 L^3) one of Zick & Homsy's (0.064, 0.125, 0.216), driven by a body force along x
small enough for creeping flow (superficial velocity 1e-5). The viscosity is that of the Re = 100
sphere of docs/validation.md at the same diameter (nu = U D / 100, U = 0.05), so the forcing
meets the relaxation time it meets there (`--nu` sets another). The run lasts 14 times the
flow's development time k / nu (k from Zick & Homsy's K), to about 1e-6 of the steady state.

`analyse` reads the permeability k from summary.json (kolibri writes it for bodies that stand
still in a periodic box driven by a body force) and gives K = F / (6 pi mu a U) = L^3 / (6 pi a k)
with the nominal radius a, its error against Zick & Homsy, and the force balance: the body's
force in the last row of bodies.csv over f L^3 (1 at the steady state).

`fit` takes runs at several L and retractions r of one fraction and gives, for each L and
viscosity with runs on both sides of the published drag, delta: the retraction at which the error
K/K_ZH - 1 is zero (linear between the two nearest retractions on either side); the sphere then
acts as one of radius a + delta - r. It fits delta = delta_inf + beta / D over them (least
squares): delta_inf is the retraction that cancels the drag's first-order error, delta(D) the one
that makes the body act as large as it is (docs/validation.md, "The retraction in 3D"). Pass runs
of one viscosity rule (the default U D / 100, or one --nu for all L: a case's own tau).
"""
import argparse
import json
import math
import os
import sys

from caserun import finished_run, rows, run_case

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
U = 0.05
# Zick & Homsy (1982), Table 2, simple cubic array: solid fraction c -> K (tests/support/Permeability.hpp)
ZICK_HOMSY = {0.064: 2.810, 0.125: 4.292, 0.216: 7.442}
U_SUPERFICIAL = 1e-5


def radius_ratio(c):
    return (3.0 * c / (4.0 * math.pi)) ** (1.0 / 3.0)


def deck(n, c, retraction, nu, collision):
    a = radius_ratio(c) * n
    d = 2.0 * a
    k = n * n / (6.0 * math.pi * radius_ratio(c) * ZICK_HOMSY[c])  # cells^2
    force = U_SUPERFICIAL * nu / k
    every = 50
    steps = every * math.ceil(14.0 * k / nu / every)
    lines = ["[model]", 'lattice = "D3Q27"', f'collision = "{collision}"', 'precision = "fp64"']
    if collision == "acm":
        lines += ["acm_viscosity = 0.005", f"acm_velocity = {U}"]
    lines += ["", "[domain]", f"nx = {n}", f"ny = {n}", f"nz = {n}", "", "[physics]", f"tau = {3.0 * nu + 0.5!r}",
              f"force = [{force!r}, 0.0, 0.0]", "", "[[body]]", 'name = "sphere"', 'type = "sphere"',
              f"radius = {a!r}", f"position = [{n / 2}, {n / 2}, {n / 2}]", "", "[ib]", f"retraction = {retraction}",
              f"loads_every = {every}", "", "[run]", f"steps = {steps}", "write_fields = false",
              'progress = "lines"', ""]
    return "\n".join(lines), {"L": n, "fraction": c, "a": a, "D": d, "nu": nu, "force": force,
                              "retraction": retraction, "collision": collision, "steps": steps}


def analyse(out):
    meta, summary = finished_run(out, "ib_stokes.py")
    n, a, nu, f = meta["L"], meta["a"], meta["nu"], meta["force"]
    if "permeability" not in summary:
        sys.exit(f"ib_stokes.py: {out}/summary.json has no permeability")
    k = summary["permeability"]
    drag = n ** 3 / (6.0 * math.pi * a * k)
    ref = ZICK_HOMSY[meta["fraction"]]
    last = rows(os.path.join(out, "bodies.csv"))[-1]
    res = {key: meta[key] for key in ("L", "D", "fraction", "retraction", "nu", "collision")}
    res.update(K=drag, K_zick_homsy=ref, error=drag / ref - 1.0, permeability=k,
               force_balance=float(last["fx"]) / (f * n ** 3), steps=int(last["step"]),
               porosity=summary.get("porosity"), wall_seconds=summary.get("wall_seconds"))
    return res


def zero_retraction(runs):
    """The retraction at which the error is zero, linear between the nearest runs on either side."""
    above = [r for r in runs if r["error"] > 0]
    below = [r for r in runs if r["error"] <= 0]
    if not above or not below:
        return None
    p = max(above, key=lambda r: r["retraction"])
    q = min(below, key=lambda r: r["retraction"])
    return p["retraction"] + (q["retraction"] - p["retraction"]) * p["error"] / (p["error"] - q["error"])


def fit(outs):
    runs = [analyse(o) for o in outs]
    if len({r["fraction"] for r in runs}) != 1:
        sys.exit("ib_stokes.py: fit takes runs of one solid fraction")
    groups = {}
    for r in runs:  # the runs of one size and viscosity
        groups.setdefault((r["L"], r["nu"]), []).append(r)
    rows = []
    for (n, _), g in sorted(groups.items()):
        delta = zero_retraction(g)
        if delta is not None:
            rows.append({"L": n, "D": g[0]["D"], "tau": 3.0 * g[0]["nu"] + 0.5, "delta": delta,
                         "errors": {str(r["retraction"]): r["error"] for r in sorted(g, key=lambda r: r["retraction"])}})
    res = {"fraction": runs[0]["fraction"], "runs": len(runs), "sizes": rows}
    if len(rows) >= 2:
        x = [1.0 / r["D"] for r in rows]
        y = [r["delta"] for r in rows]
        mx, my = sum(x) / len(x), sum(y) / len(y)
        beta = sum((a - mx) * (b - my) for a, b in zip(x, y)) / sum((a - mx) ** 2 for a in x)
        res.update(delta_inf=my - beta * mx, beta=beta,
                   worst_residual=max(abs(b - (my - beta * mx) - beta * a) for a, b in zip(x, y)))
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("action", choices=["run", "analyse", "fit"])
    ap.add_argument("args", nargs="+", help="run: L OUT; analyse, fit: OUT ...")
    ap.add_argument("--fraction", type=float, default=0.125, choices=sorted(ZICK_HOMSY))
    ap.add_argument("--retraction", type=float, default=0.3)
    ap.add_argument("--nu", type=float, default=None, help="lattice viscosity (default U D / 100)")
    ap.add_argument("--collision", default="acm")
    ap.add_argument("--kolibri", default=os.path.join(ROOT, "build", "bin", "kolibri"))
    ap.add_argument("--set", action="append", default=[], help="more deck overrides")
    a = ap.parse_args()
    if a.action == "analyse":
        for o in a.args:
            print(json.dumps(analyse(o)))
        return
    if a.action == "fit":
        print(json.dumps(fit(a.args), indent=1))
        return
    if len(a.args) != 2 or not a.args[0].isdigit() or int(a.args[0]) < 8:
        sys.exit("ib_stokes.py: run takes L (cells, at least 8) and OUT")
    n = int(a.args[0])
    nu = a.nu if a.nu is not None else U * 2.0 * radius_ratio(a.fraction) * n / 100.0
    text, meta = deck(n, a.fraction, a.retraction, nu, a.collision)
    sys.exit(run_case(a.args[1], text, meta, a.kolibri, a.set))


if __name__ == "__main__":
    main()
