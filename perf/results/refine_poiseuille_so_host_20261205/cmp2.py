import h5py, numpy as np, glob, sys
def prof(d):
    f = h5py.File([g for g in sorted(glob.glob(d + '/*_0*.h5')) if 'levels' not in g][-1])
    u = f['velocity'][0, :, :, 0].mean(axis=1)
    return u
uni = prof(sys.argv[1]); uni0 = 0.5 * (uni[0::2] + uni[1::2])  # to level-0 rows
H = len(uni0)
for d in sys.argv[2:]:
    u = prof(d)
    e = (u - uni0) / uni0.max()
    print(f"{d}: max|du|/umax {np.abs(e).max():.3e} at row {np.abs(e).argmax()}, centre {e[H//2]:+.3e}, rows 6-10 {np.round(e[6:11]*1e4,2)} e-4")
