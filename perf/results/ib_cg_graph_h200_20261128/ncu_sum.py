import re, sys
def parse(path):
    out = {}; name = None
    for line in open(path, errors="replace"):
        m = re.match(r"\s+void cuda_parallel_(?:launch|reduce)\w*<(.*)\(T1\).*Invocations (\d+)", line)
        if m:
            full, n = m.group(1), int(m.group(2))
            k = re.search(r"(?:kolibri::(?:<unnamed>::)?|KokkosSparse::|Kokkos::Impl::)?(\w+)(?:<|,| )", full.split("<", 1)[1] if "<" in full else full)
            lam = re.search(r"(\w+)::(\w+)\([^)]*\)(?: const)?::\[lambda\(\w+\) \(instance (\d+)\)\]", full)
            key = f"{lam.group(1)}::{lam.group(2)} lambda {lam.group(3)}" if lam else full[:110]
            name = (key, n); continue
        m = re.match(r"\s+gpu__time_duration.sum\s+(\w+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)", line)
        if m and name:
            unit, avg = m.group(1), float(m.group(4))
            avg *= {"ns": 1e-3, "us": 1.0, "ms": 1e3}[unit]
            k, n = name
            t = out.get(k, [0, 0.0]); t[0] += n; t[1] += n * avg; out[k] = t; name = None
    return out
a, b = parse(sys.argv[1]), parse(sys.argv[2])
keys = sorted(set(a) | set(b), key=lambda k: -max(a.get(k, [0, 0])[1], b.get(k, [0, 0])[1]))
print(f"{'kernel':112} {'n_a':>5} {'us_a':>9} {'n_b':>5} {'us_b':>9}  (total us over the profiled launches)")
for k in keys:
    na, ta = a.get(k, [0, 0]); nb, tb = b.get(k, [0, 0])
    print(f"{k[:112]:112} {na:5d} {ta:9.1f} {nb:5d} {tb:9.1f}")
print(f"{'sum':112} {sum(v[0] for v in a.values()):5d} {sum(v[1] for v in a.values()):9.1f} {sum(v[0] for v in b.values()):5d} {sum(v[1] for v in b.values()):9.1f}")
