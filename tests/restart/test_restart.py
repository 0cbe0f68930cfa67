#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""End-to-end checkpoint/restart and batch-job behaviour of the `kolibri` command.

Usage: test_restart.py KOLIBRI_BINARY DECK WORKDIR [MPIEXEC]

Checks: a run restarted from a checkpoint ends with fields bit-identical to the uninterrupted
run (two arrays and in place, from an odd step, on another rank count when MPIEXEC is given; also
with curved walls, with an outflow face and on a refined grid, with a halfway or a curved turning
sphere, with an immersed body, with a profiled, ramped inlet and an outflow face);
SIGTERM / SIGUSR1 / --walltime stop with exit 6 and a checkpoint that continues bit-identically;
corrupted, truncated and mismatched checkpoints are refused with exit 7 and a clear message,
writing nothing; only the newest checkpoint_keep checkpoints remain; a checkpoint counts only once
it reads back intact, damaged or incomplete ones in the way are moved aside, the step comes from
the data, `--restart latest` falls back past a damaged one, and a second run in the same output
directory is refused.
"""
import glob
import json
import os
import shutil
import signal
import subprocess
import sys
import time

import h5py
import numpy as np

KOLIBRI, DECK, WORK = sys.argv[1], sys.argv[2], sys.argv[3]
MPIEXEC = sys.argv[4] if len(sys.argv) > 4 and sys.argv[4] else None
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMPI_MCA_rmaps_base_oversubscribe="1")
failures = []


def check(cond, what):
    print(("ok    " if cond else "FAIL  ") + what, flush=True)
    if not cond:
        failures.append(what)


def run(out, *args, ranks=1, expect=0):
    cmd = [KOLIBRI, "run", DECK, "-o", out, "--progress", "lines", *args]
    if ranks > 1:
        cmd = [MPIEXEC, "-np", str(ranks), "--oversubscribe", *cmd]
    p = subprocess.run(cmd, capture_output=True, text=True, env=ENV)
    if p.returncode != expect:
        print(p.stdout[-3000:], p.stderr[-3000:])
    check(p.returncode == expect, f"exit {p.returncode} (expected {expect}): {' '.join(cmd[-6:])}")
    return p


def fields(path):
    with h5py.File(path, "r") as f:
        return f["density"][...], f["velocity"][...]


def same_fields(a, b, what):
    ra, ua = fields(a)
    rb, ub = fields(b)
    check(np.array_equal(ra, rb) and np.array_equal(ua, ub),
          f"{what}: bit-identical fields (max |d rho| {np.max(np.abs(ra - rb)):.3g})")


def final(out, steps):
    return os.path.join(out, f"restart_channel_{steps:08d}.h5")


def load_rows(out, name):
    """The rows of a loads CSV (obstacles.csv, bodies.csv) of run `out`, by their step."""
    with open(os.path.join(out, name)) as f:
        return {r.split(",")[0]: r for r in f.read().split("\n")[1:] if r}


def same_loads(reference, got, what):
    """The rows of `got` equal the reference's at every step both wrote, at least 100 of them."""
    common = [k for k in got if k in reference]
    check(len(common) >= 100 and all(reference[k] == got[k] for k in common),
          f"{what}: the loads equal the reference's at {len(common)} common steps")


shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
W = lambda name: os.path.join(WORK, name)

for streaming in ["two_array", "in_place"]:
    s = ["--set", f"model.streaming=\"{streaming}\""]
    # Reference with checkpoints every 100 steps (the last two kept); a restart from step 100
    # (and, in place, from an odd step) must end bit-identical.
    ref = W(f"ref_{streaming}")
    run(ref, *s)
    ckpts = sorted(glob.glob(os.path.join(ref, "restart_channel_ckpt_*")))
    check([os.path.basename(c) for c in ckpts] == ["restart_channel_ckpt_00000300", "restart_channel_ckpt_00000400"],
          f"{streaming}: checkpoint_keep = 2 keeps the newest two ({[os.path.basename(c) for c in ckpts]})")
    odd = W(f"odd_{streaming}")
    run(odd, *s, "--set", "run.steps=137", "--set", "run.checkpoint_every=137")
    res = W(f"res_{streaming}")
    shutil.copytree(odd, res)
    p = run(res, *s, "--restart", os.path.join(res, "restart_channel_ckpt_00000137"))
    check("restarted from" in p.stdout, f"{streaming}: the log says where it restarted from")
    same_fields(final(ref, 400), final(res, 400), f"{streaming}: restart from step 137")
    with open(os.path.join(res, "probe_wake.csv")) as f, open(os.path.join(ref, "probe_wake.csv")) as g:
        check(f.read() == g.read(), f"{streaming}: the probe series of the restarted run equals the reference")
    summary = json.load(open(os.path.join(res, "summary.json")))
    check(summary["status"] == "completed" and summary["first_step"] == 137, f"{streaming}: summary records the restart")

    # Restart from the older of the two kept checkpoints: the newer one (same set-up, same
    # state at step 400) is reused, not pruned away, and nothing is lost.
    older = W(f"older_{streaming}")
    shutil.copytree(ref, older)
    p = run(older, *s, "--restart", os.path.join(older, "restart_channel_ckpt_00000300"))
    same_fields(final(ref, 400), final(older, 400), f"{streaming}: restart from the older checkpoint")
    left = sorted(os.path.basename(c) for c in glob.glob(os.path.join(older, "restart_channel_ckpt_*")))
    check(left == ["restart_channel_ckpt_00000300", "restart_channel_ckpt_00000400"], f"{streaming}: both kept ({left})")
    # A fresh run refuses to start over an earlier run's checkpoints (exit 4), removing nothing.
    before = sorted(os.listdir(older))
    p = run(older, *s, expect=4)
    check("--restart latest" in p.stderr, f"{streaming}: a fresh run over checkpoints is refused: {p.stderr.strip()[:120]}")
    check(sorted(os.listdir(older)) == before, f"{streaming}: the refused run wrote and removed nothing")
    check(len(glob.glob(os.path.join(older, "restart_channel_ckpt_*"))) == 2, f"{streaming}: the checkpoints are still there")

    if MPIEXEC:  # written by 2 ranks, continued on 3 and on 1
        for write_ranks, read_ranks in [(2, 3), (2, 1), (1, 4)]:
            a = W(f"mpi_{streaming}_{write_ranks}_{read_ranks}")
            run(a, *s, "--set", "run.steps=137", "--set", "run.checkpoint_every=137", ranks=write_ranks)
            run(a, *s, "--restart", "latest", ranks=read_ranks)
            same_fields(final(ref, 400), final(a, 400),
                        f"{streaming}: checkpoint of {write_ranks} ranks continued on {read_ranks}")

# Boundaries whose state reaches past a cell's own populations: curved walls (the sphere
# interpolated and rotating), an outflow face (its rule reads the layer next to it; in place
# it saves the entering populations before each streaming step) and a characteristic outlet
# (a density a face cell, kept in outlets.h5). A restart continues
# bit-identically, also on another rank count, in both population schemes.
variants = {
    "curved walls": ("curved", ["--set", 'obstacle[0].wall="interpolated"',
                                "--set", "obstacle[0].angular_velocity=[0.0,0.0,0.01]"]),
    "outflow face": ("outflow", ["--set", 'boundary.x_max="outflow"']),
    "characteristic outlet": ("characteristic", ["--set", 'boundary.x_max.pressure_rule="characteristic"']),
}
for what, (tag, sets) in variants.items():
    for streaming in ["two_array", "in_place"]:
        v = [*sets, "--set", f"model.streaming=\"{streaming}\""]
        ref = W(f"ref_{tag}_{streaming}")
        run(ref, *v)
        odd = W(f"odd_{tag}_{streaming}")
        run(odd, *v, "--set", "run.steps=137", "--set", "run.checkpoint_every=137")
        if tag == "characteristic":  # its face densities beside the pieces
            check(os.path.isfile(os.path.join(odd, "restart_channel_ckpt_00000137", "outlets.h5")),
                  f"{what}, {streaming}: the checkpoint holds outlets.h5")
        run(odd, *v, "--restart", "latest")
        same_fields(final(ref, 400), final(odd, 400), f"{what}, {streaming}: restart from step 137")
        if MPIEXEC:
            a = W(f"mpi_{tag}_{streaming}")
            run(a, *v, "--set", "run.steps=137", "--set", "run.checkpoint_every=137", ranks=2)
            run(a, *v, "--restart", "latest", ranks=3)
            same_fields(final(ref, 400), final(a, 400), f"{what}, {streaming}: checkpoint of 2 ranks continued on 3")

# A refined grid (a level-1 band around the sphere): its checkpoint holds every level's
# populations (levels.h5 beside the pieces, which hold each deck cell's average); a restart
# from an odd step continues bit-identically, and a stop by --walltime leaves one that does too.
refine = ["--set", "refinement.levels=2",
          "--set", 'refinement.region=[{ level = 1, type = "band", around = "obstacles", width = 4 }]']
def refined_restarts(label, sets, rank_pairs, loads=None, files=("levels.h5",)):
    """A refined grid with `sets`: a restart from step 137 ends bit-identical to the uninterrupted
    run, and so does a checkpoint of W ranks continued on R for each (W, R) of `rank_pairs` (each
    rank steps its range of every level's leaves), with the same `loads` rows where given; the
    checkpoint of step 137 holds `files` beside its pieces."""
    tag = label.replace(" ", "_")
    ref_l = W(f"ref_refined_{tag}")
    run(ref_l, *sets)
    rows = load_rows(ref_l, loads) if loads else None
    if loads:
        check(len(rows) >= 100, f"refined grid, {label}: {len(rows)} rows of loads")
    odd_l = W(f"odd_refined_{tag}")
    run(odd_l, *sets, "--set", "run.steps=137", "--set", "run.checkpoint_every=137")
    for name in files:
        check(os.path.isfile(os.path.join(odd_l, "restart_channel_ckpt_00000137", name)),
              f"refined grid, {label}: the checkpoint holds {name}")
    run(odd_l, *sets, "--restart", "latest")
    same_fields(final(ref_l, 400), final(odd_l, 400), f"refined grid, {label}: restart from step 137")
    if loads:
        same_loads(rows, load_rows(odd_l, loads), f"refined grid, {label}: restart from step 137")
    if MPIEXEC:
        for write_ranks, read_ranks in rank_pairs:
            a = W(f"mpi_refined_{tag}_{write_ranks}_{read_ranks}")
            run(a, *sets, "--set", "run.steps=137", "--set", "run.checkpoint_every=137", ranks=write_ranks)
            run(a, *sets, "--restart", "latest", ranks=read_ranks)
            same_fields(final(ref_l, 400), final(a, 400),
                        f"refined grid, {label}: checkpoint of {write_ranks} ranks continued on {read_ranks}")
            if loads:
                same_loads(rows, load_rows(a, loads),
                           f"refined grid, {label}, on {write_ranks} then {read_ranks} ranks")
    return ref_l, odd_l


# On several ranks: the same run, and a checkpoint continued on another rank count, bit for bit,
# with the same loads; the log names the cut.
if MPIEXEC:
    p = run(W("mpi_refined_cut"), *refine, "--set", "run.steps=10", ranks=2)
    check("blocks in depth-first order" in p.stdout, "refined grid on 2 ranks: the log names the cut")
# The obstacle's loads: each level's link history, rewritten every coarse step, at the steps both
# runs wrote (the 137-step run wrote every step, the 400-step ones every second).
ref, odd = refined_restarts("halfway sphere", refine, [(2, 3), (3, 1)], "obstacles.csv")
with open(os.path.join(odd, "probe_wake.csv")) as f, open(os.path.join(ref, "probe_wake.csv")) as g:
    check(f.read() == g.read(), "refined grid: the probe series of the restarted run equals the reference")
# The sphere with interpolated walls, turning: its links' rules read the cell behind each link and
# its loads the value each wall returns (rebuilt from the state at every step: not checkpointed).
refined_restarts("curved sphere", refine + ["--set", 'obstacle[0].wall="interpolated"',
                                            "--set", "obstacle[0].angular_velocity=[0.0, 0.0, 0.01]"],
                 [(2, 3)], "obstacles.csv")
# An immersed sphere inside the finest level, downstream of the obstacle: every rank runs the
# bodies' kernels on the whole box around it, so its loads are one rank's.
refined_restarts("body", [*refine[:2], "--set",
                          'refinement.region=[{ level = 1, type = "band", around = "obstacles", width = 4 }, '
                          '{ level = 1, type = "band", around = "ball", width = 4 }]',
                          "--set", 'body=[{ name = "ball", type = "sphere", position = [20.0, 7.0, 5.0], radius = 1.5 }]'],
                 [(2, 3), (3, 1)], "bodies.csv")
# A free sphere (a thousand times the fluid's density: it drifts about a cell in 400 steps) in a level-1 box downstream of the obstacle:
# its motion is part of the checkpoint (in the finest level's cells), so a restart continues it.
refined_restarts("free body", [*refine[:2], "--set",
                               'refinement.region=[{ level = 1, type = "band", around = "obstacles", width = 4 }, '
                               '{ level = 1, min = [16, 0, 0], max = [28, 14, 10] }]',
                               "--set", 'body=[{ name = "ball", type = "sphere", position = [20.0, 7.0, 5.0], radius = 1.0, '
                               'free = true, density = 1000.0 }]'],
                 [(2, 3)], "bodies.csv")
# A level that meets the open faces (a band along the walls too): a parabolic inlet that ramps up
# (each level's steps at their own times) and an outflow face (each level reads the layer next to
# it).
refined_restarts("open faces", [*refine[:2], "--set",
                                'refinement.region=[{ level = 1, type = "band", around = "obstacles", width = 4 }, '
                                '{ level = 1, type = "band", around = "walls", width = 2 }]',
                                "--set", 'boundary.x_min.profile="parabolic"', "--set", "boundary.x_min.ramp_steps=300",
                                "--set", 'boundary.x_max="outflow"'],
                 [(2, 3)])
# A characteristic outlet on both levels (the band along the walls meets it): its state (two
# values, kept once a step of level 0) goes into outlets.h5 beside levels.h5.
refined_restarts("characteristic outlet", [*refine[:2], "--set",
                                           'refinement.region=[{ level = 1, type = "band", around = "obstacles", width = 4 }, '
                                           '{ level = 1, type = "band", around = "walls", width = 2 }]',
                                           "--set", 'boundary.x_max.pressure_rule="characteristic"'],
                 [(2, 3)], files=("levels.h5", "outlets.h5"))
# [geometry] solids on the refined grid (random spheres, level 1 in a band around their surface
# and around the obstacle): the solids are rebuilt from the deck, the populations from levels.h5.
refined_restarts("geometry", [*refine[:2], "--set",
                              'refinement.region=[{ level = 1, type = "band", around = "obstacles", width = 4 }, '
                              '{ level = 1, type = "band", around = "geometry", width = 2 }]',
                              "--set", 'geometry={ type = "random_spheres", diameter = 3, porosity = 0.97, seed = 3 }'],
                 [(2, 3)])
out = W("walltime_refined")
p = run(out, *refine, "--set", "run.steps=100000000", "--set", "run.checkpoint_every=0",
        "--set", "run.output_every=0", "--walltime", "3", expect=6)
summary = json.load(open(os.path.join(out, "summary.json")))
stop = summary["steps"]
check(os.path.isfile(os.path.join(summary.get("checkpoint", ""), "levels.h5")),
      f"refined grid: --walltime stops at step {stop} with a checkpoint of its levels")
end = stop + 30
ref = W("walltime_refined_ref")
run(ref, *refine, "--set", f"run.steps={end}", "--set", "run.checkpoint_every=0", "--set", "run.output_every=0")
run(out, *refine, "--set", f"run.steps={end}", "--set", "run.checkpoint_every=0", "--set", "run.output_every=0",
    "--restart", summary["checkpoint"])
same_fields(final(ref, end), final(out, end), f"refined grid: stopped at {stop}, continued to {end}")

# Signals: stop a long run, check exit 6 + checkpoint, continue to a fixed end and compare.
for sig in [signal.SIGTERM, signal.SIGUSR1]:
    out = W(f"sig_{sig.name}")
    cmd = [KOLIBRI, "run", DECK, "-o", out, "--progress", "lines", "--set", "run.steps=100000000",
           "--set", "run.checkpoint_every=0", "--set", "run.output_every=0"]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV)
    for line in p.stdout:  # wait until it is stepping
        if line.startswith("step "):
            break
    p.send_signal(sig)
    out_text, err_text = p.communicate(timeout=120)
    check(p.returncode == 6, f"{sig.name}: exit 6 (got {p.returncode})")
    summary = json.load(open(os.path.join(out, "summary.json")))
    stop = summary["steps"]
    check(summary["status"] == "stopped" and os.path.isdir(summary.get("checkpoint", "")),
          f"{sig.name}: summary says stopped at step {stop} with a checkpoint")
    check(sig.name in out_text and "--restart" in out_text, f"{sig.name}: the log names the signal and the restart command")
    end = stop + 60
    ref = W(f"sigref_{sig.name}")
    run(ref, "--set", f"run.steps={end}", "--set", "run.checkpoint_every=0", "--set", "run.output_every=0")
    run(out, "--set", f"run.steps={end}", "--set", "run.checkpoint_every=0", "--set", "run.output_every=0",
        "--restart", summary["checkpoint"])
    same_fields(final(ref, end), final(out, end), f"{sig.name}: stopped at {stop}, continued to {end}")

# --walltime: a run far too long for 3 s stops itself in time with a checkpoint.
out = W("walltime")
t0 = time.time()
p = run(out, "--set", "run.steps=100000000", "--set", "run.checkpoint_every=0", "--walltime", "3", expect=6)
check(time.time() - t0 < 20, f"--walltime 3: stopped after {time.time() - t0:.1f} s")
check("wall-time" in p.stdout, "--walltime: the log says why it stopped")

# Damaged checkpoints are refused before anything is written.
base = W("damage")
run(base, "--set", "run.steps=100", "--set", "run.checkpoint_every=100")
ck = os.path.join(base, "restart_channel_ckpt_00000100")


def refused(mutate, needle, what):
    d = W("damaged")
    shutil.rmtree(d, ignore_errors=True)
    shutil.copytree(base, d)
    c = os.path.join(d, "restart_channel_ckpt_00000100")
    extra = mutate(c) or []
    before = sorted(os.listdir(d))
    p = run(d, "--restart", c, *extra, expect=7)
    check(needle in p.stderr, f"{what}: message mentions '{needle}': {p.stderr.strip()[:200]}")
    check(sorted(os.listdir(d)) == before, f"{what}: nothing written or removed")


def data_file(c):
    files = glob.glob(os.path.join(c, "*.h5"))
    return max(files, key=os.path.getsize)


def flip(c):
    f = data_file(c)
    size = os.path.getsize(f)
    with open(f, "r+b") as h:
        h.seek(size - size // 3)
        b = h.read(1)
        h.seek(size - size // 3)
        h.write(bytes([b[0] ^ 0x40]))


def truncate(c):
    f = data_file(c)
    os.truncate(f, os.path.getsize(f) // 2)


refused(flip, "checksum", "a flipped byte")
refused(truncate, os.path.basename(data_file(ck)), "a truncated file")
refused(lambda c: os.remove(os.path.join(c, "manifest.toml")), "manifest", "a missing manifest")
refused(lambda c: ["--set", "physics.reynolds=30"], "tau", "another viscosity")
refused(lambda c: ["--set", 'obstacle[0].wall="interpolated"'], "obstacle0", "another wall rule")

# Issue 22: a checkpoint counts only once it reads back intact; damaged or incomplete ones in the
# way are moved aside (never deleted); the step comes from the data; `latest` falls back past a
# damaged one; one run at a time in an output directory.
REF = W("ref_two_array")  # checkpoints at 300 and 400 of a 400-step run
C300, C400 = "restart_channel_ckpt_00000300", "restart_channel_ckpt_00000400"


def copy_ref(name):
    d = W(name)
    shutil.rmtree(d, ignore_errors=True)
    shutil.copytree(REF, d)
    return d


def usable(d, ck, what):  # a restart from it at its own step is accepted (exit 0)
    p = run(d, "--restart", os.path.join(d, ck))
    check(p.returncode == 0, f"{what}: {ck} restarts (it reads back intact)")


# A damaged checkpoint where the restarted run writes its final one: moved aside, written anew.
d = copy_ref("damaged_final")
truncate(os.path.join(d, C400))
p = run(d, "--restart", os.path.join(d, C300))
check("aside" in p.stdout and os.path.isdir(os.path.join(d, C400 + ".damaged")),
      f"damaged final checkpoint: moved aside with a message ({[l for l in p.stdout.splitlines() if 'aside' in l][:1]})")
summary = json.load(open(os.path.join(d, "summary.json")))
check(summary["checkpoint"].endswith(C400), "damaged final checkpoint: summary names the new one")
usable(d, C400, "damaged final checkpoint")
same_fields(final(REF, 400), final(d, 400), "damaged final checkpoint: the restarted run ends right")

# The same with pruning: the good older checkpoint may go only after the new one verified.
d = copy_ref("damaged_prune")
truncate(os.path.join(d, C400))
run(d, "--restart", os.path.join(d, C300), "--set", "run.steps=500")
left = sorted(os.path.basename(c) for c in glob.glob(os.path.join(d, "restart_channel_ckpt_*")))
check(left == [C400, C400 + ".damaged", "restart_channel_ckpt_00000500"], f"damaged + pruning: what is left ({left})")
usable(d, C400, "damaged + pruning")

# The step comes from the data and must agree with the manifest and the directory name.
def set_manifest_step(c, step):
    mf = os.path.join(c, "manifest.toml")
    text = open(mf).read()
    open(mf, "w").write(text.replace("step = 300", f"step = {step}"))


refused_at = lambda d, c, needle, what, *extra: (lambda p: check(needle in p.stderr, f"{what}: {p.stderr.strip()[:160]}"))(
    run(d, "--restart", c, *extra, expect=7))
d = copy_ref("edited_step")
set_manifest_step(os.path.join(d, C300), 299)
refused_at(d, os.path.join(d, C300), "step", "manifest step edited (name disagrees)")
os.rename(os.path.join(d, C300), os.path.join(d, "restart_channel_ckpt_00000299"))
refused_at(d, os.path.join(d, "restart_channel_ckpt_00000299"), "holds step 300", "manifest step and name edited (data disagrees)")
d = copy_ref("renamed")
os.rename(os.path.join(d, C300), os.path.join(d, "restart_channel_ckpt_00000350"))
refused_at(d, os.path.join(d, "restart_channel_ckpt_00000350"), "name says step 350", "directory renamed")

# An incomplete directory (no manifest) where the run writes must not block it.
d = copy_ref("incomplete")
os.remove(os.path.join(d, C400, "manifest.toml"))
p = run(d, "--restart", os.path.join(d, C300))
check(os.path.isdir(os.path.join(d, C400 + ".damaged")), "incomplete directory: moved aside")
usable(d, C400, "incomplete directory")

# --restart latest falls back past a damaged newest checkpoint (or refuses when told to).
d = copy_ref("latest_damaged")
flip(os.path.join(d, C400))
p = run(d, "--restart", "latest")
check("skipped the damaged checkpoint" in p.stdout and C400 in p.stdout and f"restarted from {os.path.join(d, C300)}" in p.stdout,
      "latest: warns, names the damaged one and continues from the older")
same_fields(final(REF, 400), final(d, 400), "latest after a damaged newest: the run ends right")
d = copy_ref("latest_strict")
flip(os.path.join(d, C400))
refused_at(d, "latest", "checksum", "latest with --no-restart-fallback", "--no-restart-fallback")

# One run at a time in an output directory: the second is refused at once, naming the holder.
d = W("locked")
shutil.rmtree(d, ignore_errors=True)
first = subprocess.Popen([KOLIBRI, "run", DECK, "-o", d, "--progress", "lines", "--set", "run.steps=100000000",
                          "--set", "run.checkpoint_every=0", "--set", "run.output_every=0"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV)
for line in first.stdout:
    if line.startswith("step "):
        break
t0 = time.time()
p = run(d, "--set", "run.checkpoint_every=0", expect=4)
check("in use by another kolibri run" in p.stderr and f"pid {first.pid}" in p.stderr and time.time() - t0 < 10,
      f"a second run in the same directory: refused at once ({p.stderr.strip()[:160]})")
first.send_signal(signal.SIGTERM)
first.communicate(timeout=120)
check(first.returncode == 6, f"the first run went on undisturbed and stopped on SIGTERM (exit {first.returncode})")

# A write that fails (here a file size limit, as a full disk) ends the run with exit 4 and a message
# naming the file and the system's reason, not a kill, a crash or HDF5's raw error stack.
import resource
d = W("file_size_limit")
shutil.rmtree(d, ignore_errors=True)
big = ["--set", "domain.nx=100", "--set", "domain.ny=100", "--set", "domain.nz=60", "--set", "run.steps=2",
       "--set", "run.output_every=1", "--set", "run.checkpoint_every=0"]  # a 24 MB field file; MPI starts under 8 MB
p = subprocess.run([KOLIBRI, "run", DECK, "-o", d, "--progress", "none", *big], capture_output=True, text=True, env=ENV,
                   preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (8 << 20, resource.RLIM_INFINITY)))
check(p.returncode == 4 and "restart_channel_00000000.h5: cannot write (File too large)" in p.stderr
      and "HDF5-DIAG" not in p.stderr and not glob.glob(os.path.join(d, "*.tmp")),
      f"a failed write: exit {p.returncode} (4), file and reason named, nothing half-written: {p.stderr.strip()[-160:]}")

print(f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
