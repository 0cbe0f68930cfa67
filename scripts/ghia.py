"""Ghia, Ghia & Shin (1982): the lid-driven cavity's centreline velocities (scripts/data), as
arrays by column. Shared by plot_cavity.py and cavity_levels.py."""
import csv
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def ghia():
    rows = [r for r in open(os.path.join(HERE, "data", "ghia1982_centrelines.csv")) if not r.startswith("#")]
    data = list(csv.DictReader(rows))
    return {k: np.array([float(r[k]) for r in data]) for k in data[0]}
