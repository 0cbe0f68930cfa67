#!/usr/bin/env python3
"""Validation figures for docs/validation.md, made with the kolibri command as a user runs it.

    /usr/bin/python3 scripts/validate.py [--kolibri build/bin/kolibri] [--out docs/figures]

1. Poiseuille channel (inputs/channel2d.toml, BGK and TRT) at 8, 16, 32 cells: L2 error and order.
2. Taylor-Green vortex (inputs/taylor_green2d.toml): kinetic energy against exp(-2 nu k^2 t).
3. Lid-driven cavity (inputs/cavity2d.toml): speed, streamlines and Ghia's centrelines.
"""
import argparse
import glob
import json
import math
import os
import subprocess
import sys

import h5py
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(kolibri, deck, outdir, *sets):
    cmd = [kolibri, "run", os.path.join(ROOT, "inputs", deck), "--progress", "none", "--output-dir", outdir]
    for s in sets:
        cmd += ["--set", s]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    with open(os.path.join(outdir, "summary.json")) as f:
        return json.load(f)


def poiseuille(kolibri, work, figdir):
    rows = []
    plt.figure(figsize=(5.5, 4))
    ns = [8, 16, 32]
    for col in ("bgk", "trt"):
        errs = []
        for n in ns:
            tau, umax = 0.9, 0.02
            nu = (tau - 0.5) / 3
            F = 8 * nu * umax / n**2
            steps = int(math.ceil(3.5 * n * n / nu))
            d = os.path.join(work, f"poiseuille_{col}_{n}")
            run(kolibri, "channel2d.toml", d, f"domain.ny={n}", f"physics.tau={tau}", f"physics.force=[{F},0.0]",
                f"model.collision={col}", f"run.steps={steps}")
            data = np.genfromtxt(os.path.join(d, "line_profile.csv"), delimiter=",", names=True)
            y = data["y"] + 0.5
            exact = F / (2 * nu) * y * (n - y)
            errs.append(float(np.sqrt(np.sum((data["ux"] - exact) ** 2) / np.sum(exact**2))))
        orders = [math.log(errs[i] / errs[i + 1]) / math.log(2) for i in range(2)]
        rows.append((col, errs, orders))
        label = f"{col.upper()}: orders {orders[0]:.2f}, {orders[1]:.2f}" if col == "bgk" else \
            f"{col.upper()} (Λ = 3/16): exact to round-off"
        plt.loglog(ns, np.maximum(errs, 1e-17), "o-", label=label)
    plt.loglog([8, 32], [rows[0][1][0], rows[0][1][0] / 16], "k--", lw=0.8, label="slope −2")
    plt.xlabel("cells across the channel")
    plt.ylabel("relative L2 error of u(y)")
    plt.title("Force-driven Poiseuille flow, D2Q9, τ = 0.9")
    plt.legend(fontsize=8)
    plt.grid(alpha=0.3, which="both")
    plt.tight_layout()
    plt.savefig(os.path.join(figdir, "poiseuille_convergence.png"), dpi=110)
    plt.close()
    return rows


def taylor_green(kolibri, work, figdir):
    d = os.path.join(work, "tgv")
    s = run(kolibri, "taylor_green2d.toml", d, "run.output_every=100", "run.steps=2000")
    nu, n = s["viscosity"], s["nx"]
    k2 = 2 * (2 * math.pi / n) ** 2
    t, e = [], []
    for f in sorted(glob.glob(os.path.join(d, "taylor_green2d_[0-9]*.h5"))):
        with h5py.File(f) as h:
            u = h["velocity"][...]
            t.append(int(h["step"][0]))
            e.append(float(np.sum(u[..., 0] ** 2 + u[..., 1] ** 2)))
    t, e = np.array(t), np.array(e)
    late = t >= 500
    nu_fit = -np.polyfit(t[late], np.log(e[late]), 1)[0] / (2 * k2)
    plt.figure(figsize=(5.5, 4))
    plt.semilogy(t, e / e[0], "o", mfc="none", label="kolibri (D2Q9 BGK, 64²)")
    plt.semilogy(t, np.exp(-2 * nu * k2 * t), "k-", lw=1, label="exp(−2 ν k² t)")
    plt.xlabel("time step")
    plt.ylabel("E / E0")
    plt.title(f"Taylor–Green decay: fitted ν {nu_fit:.6f}, set {nu:.6f}")
    plt.legend()
    plt.grid(alpha=0.3)
    plt.tight_layout()
    plt.savefig(os.path.join(figdir, "taylor_green_decay.png"), dpi=110)
    plt.close()
    return nu, nu_fit


def cavity(kolibri, work, figdir):
    d = os.path.join(work, "cavity2d")
    s = run(kolibri, "cavity2d.toml", d)
    subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "plot_cavity.py"), d, "--out",
                    os.path.join(figdir, "cavity2d.png")], check=True, stdout=subprocess.DEVNULL)
    return s


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kolibri", default=os.path.join(ROOT, "build", "bin", "kolibri"))
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "figures"))
    ap.add_argument("--work", default=os.path.join(ROOT, "output", "validation"))
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    for col, errs, orders in poiseuille(a.kolibri, a.work, a.out):
        print(f"poiseuille {col}: errors " + ", ".join(f"{x:.3e}" for x in errs) +
              "; orders " + ", ".join(f"{o:.3f}" for o in orders))
    nu, nu_fit = taylor_green(a.kolibri, a.work, a.out)
    print(f"taylor-green: nu {nu:.6f}, fitted {nu_fit:.6f}, relative error {nu_fit / nu - 1:.2e}")
    s = cavity(a.kolibri, a.work, a.out)
    print(f"cavity: {s['steps']} steps, {s['mlups']:.1f} MLUPS on {s['backend']}")


if __name__ == "__main__":
    main()
