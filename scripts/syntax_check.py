#!/usr/bin/env python3
"""Run each C++ compile command of a compile_commands.json with -fsyntax-only instead of writing an
object file, in parallel, and report every failing file (not just the first).

    python3 scripts/syntax_check.py build-clang/compile_commands.json [--jobs N]

Exit status 0 when every file passes, 1 otherwise; the last line reads 'N passed, N failed'.
"""
import argparse
import json
import shlex
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor


def syntax_only(argv):
    """The compile command without its output file and without -c, checking only."""
    out, skip = [], False
    for a in argv:
        if skip:
            skip = False
        elif a == "-o":
            skip = True
        elif a != "-c":
            out.append(a)
    return out + ["-fsyntax-only"]


def check(entry):
    argv = entry["arguments"] if "arguments" in entry else shlex.split(entry["command"])
    start = time.monotonic()
    r = subprocess.run(syntax_only(argv), cwd=entry["directory"], capture_output=True, text=True)
    return entry["file"], r.returncode, r.stdout + r.stderr, time.monotonic() - start


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("database", help="compile_commands.json")
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    with open(args.database) as f:
        entries = [e for e in json.load(f) if e["file"].endswith((".cpp", ".cc", ".cxx"))]
    if not entries:
        print(f"syntax_check: {args.database} lists no C++ file", file=sys.stderr)
        return 1
    failed = 0
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for name, rc, text, seconds in pool.map(check, entries):
            status = "ok" if rc == 0 else "FAILED"
            print(f"{status:6} {seconds:6.1f} s  {name}", flush=True)
            if rc != 0:
                failed += 1
                print(text, flush=True)
    print(f"{len(entries) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
