#!/usr/bin/env python3
"""Two builds of insights on the same inputs, run in alternation: the guard that a change keeps
the speed it found.

    python3 benches/compare.py OLD_BINARY NEW_BINARY            # 50 MB per input, best of 5
    python3 benches/compare.py OLD NEW --mb 20 --repeat 3

Inputs are generated as benches/bench.py makes them (the captures in testdata/, repeated with
fresh ids), once, and both binaries read the same bytes. For each provider and command
(`convert` on one thread, `convert --jobs 2`, `validate`, `reduce`) it prints the best time of
each binary and NEW / OLD: above 1.00 is slower. Runs alternate OLD, NEW, OLD, NEW, … so that a
noisy machine weighs on both alike.

For `convert`, it also prints the output's size, NEW / OLD, and the time per output byte, NEW /
OLD: when a change makes the events say more, the second tells whether the converter got slower
at its work or only has more of it to write.

    python3 benches/compare.py OLD NEW --instructions --mb 5

counts the instructions each binary runs instead (valgrind's callgrind; `--jobs 1` commands
only), which does not depend on how busy the machine is: the figure to compare on a shared or
noisy machine, where times of a few percent apart say nothing.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402  (the generator and the provider inputs)

COMMANDS = {
    "convert -j1": ["--no-timestamp", "--jobs", "1"],
    "convert -j2": ["--no-timestamp", "--jobs", "2"],
    "validate": ["validate", "--format", "json"],
    "reduce": ["reduce"],
}


def once(binary, args, path):
    """Seconds for one run, output to /dev/null."""
    t0 = time.perf_counter()
    subprocess.run([binary, *args, path], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t0


def instructions(binary, args, path):
    """Instructions one run executes (callgrind), output to /dev/null."""
    out = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", binary, *args, path],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    ).stderr
    for line in out.splitlines():
        if "Collected :" in line:
            return int(line.split(":")[-1])
    sys.exit(f"no instruction count from valgrind for {binary}")


def output_bytes(binary, args, path):
    """The size of one run's standard output."""
    out = subprocess.run([binary, *args, path], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    return len(out.stdout)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--mb", type=int, default=50, help="size of each input in MB (default 50)")
    ap.add_argument("--repeat", type=int, default=5, help="runs of each binary (default 5)")
    ap.add_argument("--only", help="a provider of bench.INPUTS to run alone")
    ap.add_argument("--instructions", action="store_true",
                    help="count instructions (valgrind) instead of timing; one-thread commands")
    a = ap.parse_args()
    commands = COMMANDS
    if a.instructions:
        commands = {
            "convert -j1": COMMANDS["convert -j1"],
            "validate": COMMANDS["validate"],
            "reduce -j1": ["reduce", "--jobs", "1"],
        }
    with tempfile.TemporaryDirectory() as tmp:
        unit = "Minstr" if a.instructions else "s"
        print(
            f"{'input':8} {'command':12} {'old ' + unit:>8} {'new ' + unit:>8} {'new/old':>8}"
            f" {'bytes n/o':>10} {unit + '/byte n/o':>11}"
        )
        worst = 0.0
        for name, dirs in bench.INPUTS.items():
            if a.only and name != a.only:
                continue
            path = os.path.join(tmp, f"{name}.jsonl")
            bench.generate(path, dirs, a.mb, seed=7)
            for label, args in commands.items():
                old, new = [], []
                if a.instructions:
                    old.append(instructions(a.old, args, path) / 1e6)
                    new.append(instructions(a.new, args, path) / 1e6)
                for _ in range(0 if a.instructions else a.repeat):
                    old.append(once(a.old, args, path))
                    new.append(once(a.new, args, path))
                ratio = min(new) / min(old)
                worst = max(worst, ratio)
                extra = ""
                if label.startswith("convert"):
                    size = output_bytes(a.new, args, path) / max(output_bytes(a.old, args, path), 1)
                    extra = f" {size:10.2f} {ratio / size:11.2f}"
                print(
                    f"{name:8} {label:12} {min(old):8.3f} {min(new):8.3f} {ratio:8.2f}{extra}",
                    flush=True,
                )
            os.remove(path)
        print(f"worst new/old: {worst:.2f}")


if __name__ == "__main__":
    main()
