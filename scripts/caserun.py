"""What the case scripts (dfg.py, wake.py, oscillating.py) share: write a deck and its parameters
into the output directory and run kolibri on it; read a finished run's parameters and CSV files."""
import csv
import json
import os
import subprocess
import sys


def rows(path):
    """The rows of a CSV file with a header, as dictionaries."""
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def run_case(out, text, meta, kolibri, sets=(), extra=()):
    """Write `text` to OUT/deck.toml and `meta` to OUT/run.json, run kolibri on the deck with the
    `--set` overrides `sets` (and `extra` arguments); returns its exit status."""
    os.makedirs(out, exist_ok=True)
    deck = os.path.join(out, "deck.toml")
    with open(deck, "w") as f:
        f.write(text)
    with open(os.path.join(out, "run.json"), "w") as f:
        json.dump(dict(meta, sets=list(sets)), f)
    cmd = [kolibri, "run", deck, "--output-dir", out, *extra]
    for s in sets:
        cmd += ["--set", s]
    return subprocess.call(cmd)


def finished_run(out, script, statuses=("completed",)):
    """The parameters (run.json) and summary of the run in `out` that ended with one of
    `statuses`; exits naming `script` otherwise."""
    with open(os.path.join(out, "run.json")) as f:
        meta = json.load(f)
    with open(os.path.join(out, "summary.json")) as f:
        summary = json.load(f)
    if summary.get("status") not in statuses:
        sys.exit(f"{script}: the run in {out} did not complete: nothing to analyse")
    return meta, summary
