#!/usr/bin/env python3
"""Centreline velocities of lid-driven cavity runs against Ghia, Ghia & Shin (1982), for uniform
and refined grids alike: a refined run is read from its levels' own cells (<name>_levels_*.h5,
the finest cells along each centreline), a uniform one from its field file; a run without field
files from its centreline line probes (u_vertical_centreline, v_horizontal_centreline).

    /usr/bin/python3 scripts/cavity_levels.py RUN_DIR [RUN_DIR ...] [--re 1000]

Prints, per run: the largest deviation of u (vertical centreline) and v (horizontal) from Ghia's
interior points and their RMS, in units of the lid speed, and the run's wall time.
"""
import argparse
import csv
import glob
import json
import os

import h5py
import numpy as np

from ghia import ghia  # noqa: E402


def last(pattern):
    files = sorted(f for f in glob.glob(pattern) if "diverged" not in f)
    if not files:
        raise SystemExit(f"cavity_levels.py: no files {pattern}")
    return files[-1]


def centrelines_levels(path, n0):
    """(s, u) along x = 1/2 and (s, v) along y = 1/2 from every level's cells that touch the line
    (the leaves partition the box, so together they cover each line once)."""
    out = {"u": [], "v": []}
    with h5py.File(path, "r") as h:
        levels = sorted({int(k[5:].split("_")[0]) for k in h.keys() if k.startswith("level")})
        for l in levels:
            pts = h[f"level{l}_points"][...].reshape(-1, 4, 3)
            vel = h[f"level{l}_velocity"][...]
            c = pts.mean(axis=1) / n0  # box units
            w = 1.0 / (n0 * 2 ** l)
            for axis, key, comp in ((0, "u", 0), (1, "v", 1)):
                side = np.abs(np.abs(c[:, axis] - 0.5) - 0.5 * w) < 1e-9
                other = 1 - axis
                for s in np.unique(np.round(c[side, other], 12)):
                    pick = side & (np.abs(c[:, other] - s) < 1e-9)
                    out[key].append((s, vel[pick, comp].mean()))
    return {k: np.array(sorted(v)) for k, v in out.items()}


def centrelines_probes(run):
    """(s, u) and (s, v) from the run's centreline line probes (level-0 cells: on a refined grid
    each the average of the leaves inside it)."""
    out = {}
    for key, name, comp in (("u", "u_vertical_centreline", "ux"), ("v", "v_horizontal_centreline", "uy")):
        with open(os.path.join(run, f"line_{name}.csv")) as f:
            rows = list(csv.DictReader(f))
        out[key] = np.array([[float(r["s"]), float(r[comp])] for r in rows])
    return out


def centrelines_uniform(path):
    with h5py.File(path, "r") as h:
        u = h["velocity"][0]
    n = u.shape[0]
    s = (np.arange(n) + 0.5) / n
    return {"u": np.stack([s, 0.5 * (u[:, n // 2 - 1, 0] + u[:, n // 2, 0])], 1),
            "v": np.stack([s, 0.5 * (u[n // 2 - 1, :, 1] + u[n // 2, :, 1])], 1)}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="+")
    ap.add_argument("--re", type=int, default=1000, choices=[100, 1000])
    a = ap.parse_args()
    g = ghia()
    for run in a.runs:
        with open(os.path.join(run, "summary.json")) as f:
            js = json.load(f)
        U, n0 = js["velocity_scale"], js["nx"]
        if glob.glob(os.path.join(run, "*_levels_[0-9]*.h5")):
            lines, src = centrelines_levels(last(os.path.join(run, "*_levels_[0-9]*.h5")), n0), "levels' cells"
        elif glob.glob(os.path.join(run, "*_[0-9]*.h5")):
            lines, src = centrelines_uniform(last(os.path.join(run, "*_[0-9]*.h5"))), "fields"
        else:
            lines, src = centrelines_probes(run), "line probes"
        # walls: u = 0 at y = 0, U at y = 1; v = 0 at both ends
        su = np.concatenate([[0.0], lines["u"][:, 0], [1.0]])
        fu = np.concatenate([[0.0], lines["u"][:, 1] / U, [1.0]])
        sv = np.concatenate([[0.0], lines["v"][:, 0], [1.0]])
        fv = np.concatenate([[0.0], lines["v"][:, 1] / U, [0.0]])
        du = np.interp(g["y"][1:-1], su, fu) - g[f"u_re{a.re}"][1:-1]
        dv = np.interp(g["x"][1:-1], sv, fv) - g[f"v_re{a.re}"][1:-1]
        rms = np.sqrt(np.mean(np.concatenate([du, dv]) ** 2))
        print(f"{run} ({src}): max |du| {np.abs(du).max():.4f}, max |dv| {np.abs(dv).max():.4f}, RMS {rms:.4f} "
              f"(of U); {js['steps']} steps in {js['wall_time_s']:.2f} s (stepping {js['step_time_s']:.2f} s, "
              f"{js['mlups']:.0f} MLUPS)")


if __name__ == "__main__":
    main()
