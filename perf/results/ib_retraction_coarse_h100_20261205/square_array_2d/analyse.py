# The 2D square-array runs: drag L^2/k against the Sangani & Acrivos series, at the last step and
# extrapolated to the steady state (the body's force deficit fitted to one exponential over the
# second half of its history). Usage: tar -xJf csv.tar.xz; python3 analyse.py .
import json, csv, math, re, sys, glob, os
SA = 15.394912572339399
root = sys.argv[1]
rows = []
for d in sorted(glob.glob(root + '/*/')):
    name = os.path.basename(d.rstrip('/'))
    deck = open(d + 'deck.toml').read()
    L = int(re.search(r'nx = (\d+)', deck).group(1)); tau = float(re.search(r'tau = ([\d.]+)', deck).group(1))
    f = float(re.search(r'force = \[([\d.e+-]+)', deck).group(1)); nu = (tau - 0.5) / 3
    s = json.load(open(d + 'summary.json' if os.path.exists(d + 'summary.json') else d + 'out/summary.json'))
    k = s['permeability']; steps = s['steps']
    fn = d + 'out/' + ('bodies.csv' if os.path.exists(d + 'out/bodies.csv') else 'obstacles.csv')
    t, F = [], []
    for r in csv.DictReader(open(fn)):
        t.append(int(r['step'])); F.append(float(r['fx']))
    total = f * L * L * (s['porosity'] if 'obstacle' in name else 1.0)  # obstacles: the force acts on fluid cells only
    # deficit over the last half of the history: exponential fit
    n = len(t); i0 = n // 2
    xs = [t[i] for i in range(i0, n) if total - F[i] > 0]
    ys = [math.log(total - F[i]) for i in range(i0, n) if total - F[i] > 0]
    if len(xs) > 10:
        mx = sum(xs) / len(xs); my = sum(ys) / len(ys)
        slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
        T = -1 / slope if slope < 0 else float('nan')
    else:
        T = float('nan')
    deficit = total - F[-1]
    U = k * f / nu
    k_inf = k * (1 + deficit * T / (L * L * U)) if T == T else k
    drag_end = L * L / k; drag_inf = L * L / k_inf
    row = dict(run=name, L=L, D=L / 4, tau=tau, status=s['status'], steps=steps, dev_times=steps * nu / k,
               force_balance=F[-1] / total, decay_steps=T, drag_at_end=drag_end, drag_extrapolated=drag_inf,
               error_at_end=drag_end / SA - 1, error_extrapolated=drag_inf / SA - 1)
    rows.append(row)
    print(f"{name:15s} L={L:4d} {s['status']:9s} steps={steps:8d} devT={row['dev_times']:5.1f} bal={row['force_balance']:.6f} T={T:9.0f} "
          f"err_end={100*row['error_at_end']:+.3f}% err_inf={100*row['error_extrapolated']:+.3f}%")
with open(root + '/results.jsonl', 'w') as fo:
    for r in rows: fo.write(json.dumps(r) + '\n')
