#!/usr/bin/env python3
"""Picture of a kolibri run: speed and streamlines of the last field output, and, for a lid-driven
cavity with centreline probes, the centreline velocities against Ghia, Ghia & Shin (1982).

    python3 scripts/plot_cavity.py output/cavity2d --out output/cavity2d/cavity2d.png
"""
import argparse
import csv
import glob
import json
import os
import sys

import h5py
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from ghia import ghia  # noqa: E402


def read_line(path):
    with open(path) as f:
        data = list(csv.DictReader(f))
    return {k: np.array([float(r[k]) for r in data]) for k in data[0]}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run_dir", help="output directory of a kolibri run")
    ap.add_argument("--out", help="PNG to write (default: RUN_DIR/<name>.png)")
    ap.add_argument("--re", type=int, default=100, choices=[100, 1000], help="Ghia reference Reynolds number")
    a = ap.parse_args()

    files = sorted(f for f in glob.glob(os.path.join(a.run_dir, "*_[0-9]*.h5")) if "diverged" not in f)
    if not files:
        sys.exit(f"plot_cavity.py: no field files (*_NNNNNNNN.h5) in {a.run_dir}")
    last = files[-1]
    with h5py.File(last, "r") as h:
        u = h["velocity"][...]
        solid = h["solid"][...]
        step = int(h["step"][0])
    k = u.shape[0] // 2  # middle z plane
    ux, uy = u[k, :, :, 0], u[k, :, :, 1]
    speed = np.hypot(ux, uy)
    speed = np.ma.masked_where(solid[k] > 0, speed)
    ny, nx = speed.shape

    lines = {n: os.path.join(a.run_dir, f"line_{n}.csv") for n in ("u_vertical_centreline", "v_horizontal_centreline")}
    have_lines = all(os.path.exists(p) for p in lines.values())
    fig, axes = plt.subplots(1, 2 if have_lines else 1, figsize=(12 if have_lines else 6.5, 5.5))
    axes = np.atleast_1d(axes)
    ax = axes[0]
    im = ax.imshow(speed, origin="lower", extent=(0, nx, 0, ny), cmap="viridis")
    X, Y = np.meshgrid(np.arange(nx) + 0.5, np.arange(ny) + 0.5)
    ax.streamplot(X, Y, ux, uy, color="w", density=1.4, linewidth=0.6, arrowsize=0.6)
    ax.set_title(f"{os.path.basename(last)}: |u| (lattice units), step {step}")
    ax.set_xlabel("x (cells)")
    ax.set_ylabel("y (cells)")
    fig.colorbar(im, ax=ax, shrink=0.8)

    if have_lines:
        g = ghia()
        lu, lv = read_line(lines["u_vertical_centreline"]), read_line(lines["v_horizontal_centreline"])
        with open(os.path.join(a.run_dir, "summary.json")) as f:
            U = json.load(f)["velocity_scale"]  # the lid speed of a cavity deck
        ax = axes[1]
        ax.plot(lu["s"], lu["ux"] / U, "-", label="kolibri u(y) on x = 1/2")
        ax.plot(lv["s"], lv["uy"] / U, "-", label="kolibri v(x) on y = 1/2")
        ax.plot(g["y"], g[f"u_re{a.re}"], "o", mfc="none", label=f"Ghia et al. u, Re {a.re}")
        ax.plot(g["x"], g[f"v_re{a.re}"], "s", mfc="none", label=f"Ghia et al. v, Re {a.re}")
        ax.set_xlabel("y (for u) or x (for v), in cavity widths")
        ax.set_ylabel("velocity / lid speed")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
        ax.set_title("centrelines (cell column next to the centre)")
    fig.tight_layout()
    out = a.out or os.path.join(a.run_dir, os.path.basename(os.path.normpath(a.run_dir)) + ".png")
    fig.savefig(out, dpi=110)
    print(f"plot_cavity.py: wrote {out}")


if __name__ == "__main__":
    main()
