#!/usr/bin/env python3
"""Compare `kolibri bench` JSON files (any devices, vendors, backends) in one table and one plot.

    /usr/bin/python3 perf/compare.py perf/results/bench_*.json [--png perf/results/compare.png]
                                    [--extra perf/results/fluidx3d_*.json]

--extra takes JSON files of other codes with the same case fields ({"code": ..., "device": ...,
"cases": [{"lattice", "collision", "precision", "storage", "n", "mlups"}]}).

--scaling reads scaling.json files of perf/scaling.sh instead (and of other codes in the same form:
{"code": ..., "runs": [{"case", "kind", "ranks", "mlups", "efficiency"}]}), prints the efficiency
table and, with --png, draws parallel efficiency against GPUs, weak and strong side by side:

    /usr/bin/python3 perf/compare.py --scaling perf/results/scaling_*/scaling.json --png docs/figures/scaling.png

--predict adds rows for GPUs without a measurement (AMD MI250X, one GCD; MI300X), marked as
predictions: each measured case scaled by the ratio of datasheet memory bandwidths, i.e. assuming
the same fraction of peak bandwidth as on the measured GPU. A roofline estimate, not a result.
"""
import argparse
import json
import sys


# Datasheet peak memory bandwidth, GB/s (read + write), by device name.
PEAK_GBS = {
    "H100 80GB HBM3": 3350.0,  # H100 SXM5
    "H200": 4800.0,
    "MI250X GCD": 1638.4,      # 3276.8 GB/s per MI250X module, two GCDs
    "MI300X": 5300.0,
}


def peak_of(device):
    for k, v in PEAK_GBS.items():
        if k in device:
            return v
    return None


def predictions(rows):
    out = []
    for r in rows:
        if r["code"] != "kolibri" or "prediction" in r["device"]:
            continue
        peak = peak_of(r["device"])
        if not peak:
            continue
        for target in ("MI250X GCD", "MI300X"):
            p = dict(r)
            p["device"] = f"{target} (prediction from {r['device']})"
            p["mlups"] = r["mlups"] * PEAK_GBS[target] / peak
            p["frac"] = None
            out.append(p)
    return out


def load(path):
    with open(path) as f:
        d = json.load(f)
    code = d.get("code", "kolibri")
    for c in d["cases"]:
        yield {
            "code": code,
            "device": d["device"],
            "backend": d.get("backend", ""),
            "copy": d.get("copy_bandwidth_gbs"),
            "lattice": c["lattice"],
            "collision": c.get("collision", "bgk"),
            "precision": c["precision"],
            "storage": c.get("storage", c["precision"]),
            "streaming": c.get("streaming", ""),
            "n": c["n"],
            "mlups": c["mlups"],
            "bpu": c.get("bytes_per_update"),
            "frac": c.get("fraction_of_copy"),
            "bpc": c.get("bytes_per_cell"),
        }


def scaling(files, png):
    """Efficiency table and curves of perf/scaling.sh's scaling.json files."""
    runs = []
    for f in files:
        d = json.load(open(f))
        for r in d["runs"]:
            runs.append(dict(r, code=d.get("code", "kolibri"), label=d.get("label", "")))
    if not runs:
        sys.exit("compare.py: no scaling runs")
    print("| code | case | kind | GPUs | MLUPS | efficiency |")
    print("|---|---|---|---:|---:|---:|")
    key = lambda r: (r["kind"], r["code"], r["label"], r["case"], r["ranks"])  # noqa: E731
    for r in sorted(runs, key=key):
        name = f"{r['code']} {r['label']}".strip()
        print(f"| {name} | {r['case']} | {r['kind']} | {r['ranks']} | {r['mlups']:.0f} | {r['efficiency']:.3f} |")
    if not png:
        return
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    kinds = [k for k in ("weak", "strong") if any(r["kind"] == k for r in runs)]
    fig, axes = plt.subplots(1, len(kinds), figsize=(6.5 * len(kinds), 4.5), squeeze=False)
    for ax, kind in zip(axes[0], kinds):
        series = sorted({(r["code"], r["label"], r["case"]) for r in runs if r["kind"] == kind})
        ax.set_prop_cycle(color=plt.cm.tab20.colors)
        for code, label, case in series:
            pts = sorted((r["ranks"], r["efficiency"]) for r in runs
                         if (r["code"], r["label"], r["case"], r["kind"]) == (code, label, case, kind))
            style = "--" if code != "kolibri" else "-"
            ax.plot([p[0] for p in pts], [p[1] for p in pts], style, marker="o",
                    label=f"{code} {label} {case}".replace("  ", " "))
        ax.set_title(f"{kind} scaling")
        ax.set_xlabel("GPUs")
        ax.set_ylabel("parallel efficiency")
        ax.set_ylim(0, 1.05)
        ax.xaxis.get_major_locator().set_params(integer=True)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    print(f"wrote {png}", file=sys.stderr)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="+")
    ap.add_argument("--scaling", action="store_true", help="the files are scaling.json of perf/scaling.sh")
    ap.add_argument("--extra", nargs="*", default=[])
    ap.add_argument("--png", help="bar chart of MLUPS per case and device")
    ap.add_argument("--predict", action="store_true", help="add roofline predictions for MI250X (one GCD) and MI300X")
    a = ap.parse_args()
    if a.scaling:
        return scaling(a.files, a.png)
    rows = [r for f in a.files + a.extra for r in load(f)]
    if a.predict:
        rows += predictions(rows)
    if not rows:
        sys.exit("compare.py: no cases")
    hdr = "| code | device | lattice | collision | arith/storage | streaming | n | MLUPS | B/update | of copy | B/cell |"
    print(hdr)
    print("|" + "---|" * (hdr.count("|") - 1))
    fmt = lambda v, f: ("" if v is None else f.format(v))  # noqa: E731
    for r in sorted(rows, key=lambda r: (r["lattice"], r["precision"], r["collision"], r["n"], r["code"], r["device"])):
        print(f"| {r['code']} | {r['device']} | {r['lattice']} | {r['collision']} | {r['precision']}/{r['storage']} | "
              f"{r['streaming']} | {r['n']} | {r['mlups']:.0f} | {fmt(r['bpu'], '{:.0f}')} | "
              f"{fmt(r['frac'] and 100 * r['frac'], '{:.1f}%')} | {fmt(r['bpc'], '{:.0f}')} |")
    if a.png:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        keys = sorted({(r["lattice"], r["collision"], r["precision"], r["storage"], r["n"]) for r in rows})
        series = sorted({(r["code"], r["device"]) for r in rows})
        width = 0.8 / len(series)
        fig, ax = plt.subplots(figsize=(max(8, 0.5 * len(keys) * len(series)), 4.5))
        for i, s in enumerate(series):
            vals = []
            for k in keys:
                m = [r["mlups"] for r in rows if (r["code"], r["device"]) == s and
                     (r["lattice"], r["collision"], r["precision"], r["storage"], r["n"]) == k]
                vals.append(max(m) if m else 0)
            ax.bar([j + i * width for j in range(len(keys))], vals, width, label=f"{s[0]} on {s[1]}")
        ax.set_xticks([j + 0.4 - width / 2 for j in range(len(keys))])
        ax.set_xticklabels([f"{k[0]} {k[1]}\n{k[2]}/{k[3]} {k[4]}³" for k in keys], fontsize=7, rotation=60, ha="right")
        ax.set_ylabel("MLUPS")
        ax.legend(fontsize=8)
        ax.grid(axis="y", alpha=0.3)
        fig.tight_layout()
        fig.savefig(a.png, dpi=110)
        print(f"wrote {a.png}", file=sys.stderr)


if __name__ == "__main__":
    main()
