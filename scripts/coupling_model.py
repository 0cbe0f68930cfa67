#!/usr/bin/env python3
"""A model of the implicit forcing's coupling system M = Phi D Phi^T (docs/theory.md, "Implicit
forcing"): samples on a circle (2D) or a sphere (3D), trilinear stencils, rho = 1 (D = 1/2), a
body at rest in a uniform stream (b = -Phi u*), and the iterations Jacobi-preconditioned conjugate
gradients need, from the first direct-forcing pass's force and from zero, at several tolerances.

  python3 scripts/coupling_model.py 2 10 0.3     # dims, radius (cells), sample spacing (cells)
"""
import argparse
import math

import numpy as np


def stencil_matrix(points, dims):
    """Phi: one row per sample, its 2^dims trilinear weights on the nodes (cell centres)."""
    nodes, rows = {}, []
    for p in points:
        s = np.asarray(p) - 0.5
        base = np.floor(s).astype(int)
        frac = s - base
        entries = []
        for k in range(2 ** dims):
            o = [(k >> d) & 1 for d in range(dims)]
            w = 1.0
            for d in range(dims):
                w *= frac[d] if o[d] else 1.0 - frac[d]
            key = tuple(base[d] + o[d] for d in range(dims))
            entries.append((nodes.setdefault(key, len(nodes)), w))
        rows.append(entries)
    phi = np.zeros((len(points), len(nodes)))
    for i, entries in enumerate(rows):
        for n, w in entries:
            phi[i, n] += w
    return phi


def pcg(m, b, x, tol, max_iterations):
    """Jacobi-preconditioned conjugate gradients; returns the solution and the iterations."""
    dinv = 1.0 / np.diag(m)
    r = b - m @ x
    z = dinv * r
    p = z.copy()
    rz = r @ z
    bn = np.linalg.norm(b)
    for it in range(max_iterations):
        if np.linalg.norm(r) <= tol * bn:
            return x, it
        ap = m @ p
        a = rz / (p @ ap)
        x, r = x + a * p, r - a * ap
        z = dinv * r
        rz_next = r @ z
        p = z + rz_next / rz * p
        rz = rz_next
    return x, max_iterations


def samples(dims, radius, spacing):
    """Points about `spacing` apart on the circle or sphere, and the area each stands for."""
    centre = np.array([20.3, 20.1, 20.2][:dims])
    if dims == 2:
        n = int(2 * math.pi * radius / spacing)
        pts = [centre + radius * np.array([math.cos(2 * math.pi * i / n), math.sin(2 * math.pi * i / n)])
               for i in range(n)]
        return pts, 2 * math.pi * radius / n
    n = int(4 * math.pi * radius ** 2 / (0.7 * spacing ** 2) / 1.4)
    golden = (1 + 5 ** 0.5) / 2
    pts = []
    for i in range(n):  # a Fibonacci sphere
        z = 1 - 2 * (i + 0.5) / n
        t = 2 * math.pi * i / golden
        rr = math.sqrt(1 - z * z)
        pts.append(centre + radius * np.array([rr * math.cos(t), rr * math.sin(t), z]))
    return pts, 4 * math.pi * radius ** 2 / n


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dims", type=int, choices=[2, 3])
    ap.add_argument("radius", type=float)
    ap.add_argument("spacing", type=float)
    ap.add_argument("--max-iterations", type=int, default=2000)
    args = ap.parse_args()
    pts, area = samples(args.dims, args.radius, args.spacing)
    phi = stencil_matrix(pts, args.dims)
    m = 0.5 * phi @ phi.T
    u = 0.05
    b = -phi @ (u * np.ones(phi.shape[1]))
    first_pass = 2.0 * (0.0 - u) * area * np.ones(len(pts))
    print(f"samples {len(pts)}, nodes {phi.shape[1]}, area a sample {area:.3f}")
    for tol in (1e-2, 1e-3, 1e-4, 1e-6):
        _, it = pcg(m, b, first_pass.copy(), tol, args.max_iterations)
        _, it0 = pcg(m, b, np.zeros(len(pts)), tol, args.max_iterations)
        print(f"tolerance {tol:g}: {it} iterations from the first pass's force, {it0} from zero")


if __name__ == "__main__":
    main()
