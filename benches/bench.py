#!/usr/bin/env python3
"""Benchmark of insights: throughput, memory and live latency, with a jq baseline.

    python3 benches/bench.py                 # ~200 MB per input, all figures
    python3 benches/bench.py --mb 50 --quick # smaller inputs, fewer latency samples
    python3 benches/bench.py --repeat 1      # one run per figure (default: best of 3)

It builds the release binary, generates large inputs from the recorded captures in
testdata/ (seeded, so the same bytes every run; each repetition of the captures gets its own
session, call and request ids, so it reads as a log of many sessions),
and prints, per provider and command (`convert` on one thread, `validate`, `reduce` as it runs
by default, on every core for a file this large, through the pipe and into a file, and on one
thread): MB/s, events/s, peak RSS,
the ratio to a jq mapping of the same Claude file when jq is installed, and the ratio to
serde_json alone reading the same lines into a `Value` and writing them back (benches/baseline,
the yardstick issue #8 set its targets against: about 160 MB/s on Claude output on the
machine it was written on). Then it measures live latency: the
time from writing one line into a pipe to reading its first event from the other pipe, and
the same round trip through `cat`, the floor the harness and the scheduler set.

Figures depend on the machine: compare ratios from one run, not absolute numbers across runs.
"""

import argparse
import filecmp
import os
import random
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "target", "release", "insights")
# serde_json alone on the same lines (benches/baseline): the machine's yardstick. Issue #8
# set its targets against serde_json parsing Claude output at about 530 MB/s without a tree
# and about 160 MB/s building a `serde_json::Value` and writing it back.
BASELINE = os.path.join(ROOT, "target", "release", "insights-baseline")

# Inputs: which capture directories make up each generated file.
INPUTS = {
    "claude": ["claude", "claude-sdk"],
    "codex": ["codex-exec", "codex-app-server"],
    "acp": ["acp-claude", "acp-gemini"],
    "gemini": ["gemini"],
}

# A jq program a user might write to map Claude stream-json to events (the baseline the
# performance issue quotes): one object per content block, tool results, turn ends.
JQ_CLAUDE = r'''
if .type == "assistant" then
  .message.content[]? as $b
  | if $b.type == "text" then {event:"text", sessionId:.session_id, text:$b.text, kind:"text"}
    elif $b.type == "thinking" then {event:"text", sessionId:.session_id, text:$b.thinking, kind:"thinking"}
    elif $b.type == "tool_use" then {event:"tool_invocation", sessionId:.session_id, callId:$b.id, toolName:$b.name, input:$b.input}
    else empty end
elif .type == "user" then
  (.message.content | if type == "array" then .[] else empty end) as $b
  | if $b.type == "tool_result" then {event:"tool_completion", sessionId:.session_id, callId:$b.tool_use_id, status:(if $b.is_error then "failed" else "completed" end), output:$b.content} else empty end
elif .type == "result" then {event:"turn_complete", sessionId:.session_id, costUsd:.total_cost_usd, usage:.usage}
elif .type == "stream_event" then {event:"stream_delta", sessionId:.session_id, kind:.event.type, textDelta:(.event.delta.text // .event.delta.thinking)}
elif .type == "system" and .subtype == "init" then {event:"session_init", sessionId:.session_id, model:.model, cwd:.cwd}
else {event:"raw", raw:.} end
'''


def captures(dirs):
    """The lines of each capture file (one session each) in `dirs`."""
    files = []
    for d in dirs:
        full = os.path.join(ROOT, "testdata", d)
        for name in sorted(os.listdir(full)):
            if name.endswith(".jsonl") and ".events." not in name:
                with open(os.path.join(full, name), encoding="utf-8") as f:
                    files.append([l for l in f.read().splitlines() if l.strip()])
    return files


# The members that name a session, turn, item, call or request: each repetition of the
# captures gets its own values, so a generated file reads as many sessions one after another
# (as a long log does), not as the same calls made again and again, which `validate` would
# report by the thousand.
ID_STRING = re.compile(
    r'"(uuid|session_id|sessionId|id|callId|call_id|tool_id|toolCallId|tool_use_id|toolUseId'
    r'|itemId|item_id|threadId|thread_id|turnId|turn_id|requestId|request_id'
    r'|parent_tool_use_id|parentToolUseId)":"'
)
# JSON-RPC request ids (numbers): moved by a million per repetition.
ID_NUMBER = re.compile(r'"id":(\d+)')


def generate(path, dirs, mb, seed):
    """Repeats the captures until the file holds `mb` megabytes; every copy of a capture gets
    its own session, call and request ids (a tag spliced into them), so no two lines are
    identical and no id is used twice."""
    rnd = random.Random(seed)
    files = captures(dirs)
    target = mb * 1_000_000
    size = 0
    copy = 0
    with open(path, "w", encoding="utf-8") as out:
        while size < target:
            for lines in files:
                copy += 1
                tag = f"{rnd.getrandbits(32):08x}{copy}-"
                shift = copy * 1_000_000
                for l in lines:
                    l = ID_STRING.sub(lambda m: m.group(0) + tag, l)
                    l = ID_NUMBER.sub(lambda m: f'"id":{int(m.group(1)) + shift}', l)
                    out.write(l)
                    out.write("\n")
                    size += len(l) + 1
    return size


REPEAT = 3


def run(cmd, stdin_path):
    """The best of REPEAT runs of `run_once` (machines here are noisy: one run of the same
    binary can take a quarter longer than the next); returns (seconds, output lines, peak
    RSS KiB)."""
    return min(run_once(cmd, stdin_path) for _ in range(REPEAT))


def run_once(cmd, stdin_path):
    """Runs cmd with stdin from a file (or /dev/null) and stdout counted; returns (seconds,
    output lines, peak RSS KiB)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    with open(stdin_path or os.devnull, "rb") as f:
        t0 = time.perf_counter()
        p = subprocess.Popen(cmd, stdin=f, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        lines = 0
        for chunk in iter(lambda: p.stdout.read(1 << 20), b""):
            lines += chunk.count(b"\n")
        p.wait()
        secs = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return secs, lines, max(after, before)


# The largest anonymous part of the resident memory seen by the last `peak_rss`, in KiB.
LAST_ANON = 0


def peak_rss(cmd, stdin_path):
    """Peak RSS of the command, in KiB: its VmHWM, read from /proc every few milliseconds
    while it runs. (getrusage's ru_maxrss is no good here: a child forked from Python starts
    with Python's high-water mark.) Most of a converter's RSS is the binary's own code, mapped
    from the page cache, and how much of it depends on how the file sits there (a fresh copy
    of the same binary can show 1.5 MB more): the largest anonymous part seen (RssAnon,
    sampled) is kept in LAST_ANON."""
    global LAST_ANON
    with open(stdin_path or os.devnull, "rb") as f:
        p = subprocess.Popen(cmd, stdin=f, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        peak = anon = 0
        status = f"/proc/{p.pid}/status"
        while p.poll() is None:
            try:
                with open(status) as st:
                    for line in st:
                        if line.startswith("VmHWM:"):
                            peak = max(peak, int(line.split()[1]))
                        elif line.startswith("RssAnon:"):
                            anon = max(anon, int(line.split()[1]))
            except (OSError, ValueError):
                pass
            time.sleep(0.003)
        LAST_ANON = anon
        return peak


def to_file(cmd, out_path, stdin_path=None):
    """Wall seconds of cmd (with stdin from a file, or /dev/null) with its output written to a
    file, as a batch conversion writes it."""
    with open(out_path, "wb") as out, open(stdin_path or os.devnull, "rb") as f:
        t0 = time.perf_counter()
        subprocess.run(cmd, stdin=f, stdout=out, stderr=subprocess.DEVNULL, check=True)
        return time.perf_counter() - t0


def same_output(cmd_a, cmd_b):
    """Whether two commands write the same bytes (not timed)."""
    a = subprocess.run(cmd_a, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL).stdout
    b = subprocess.run(cmd_b, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL).stdout
    return a == b


def startup(cmd, samples):
    """Median wall time of running `cmd` from Python, in ms."""
    times = []
    for _ in range(samples):
        t0 = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL)
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def latency(samples, cmd=None):
    """Time from a line entering insights' stdin to its first event leaving stdout (or, with
    `cmd`, that command's: `cat` gives the floor of this round trip, two pipes and two wake-ups)."""
    line = None
    with open(os.path.join(ROOT, "testdata", "claude", "thinking-tool.jsonl"), encoding="utf-8") as f:
        line = [l for l in f.read().splitlines() if '"text_delta"' in l][0]
    p = subprocess.Popen(cmd or [BIN, "--no-timestamp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
    times = []
    for _ in range(samples):
        t0 = time.perf_counter()
        p.stdin.write(line.encode() + b"\n")
        p.stdin.flush()
        p.stdout.readline()
        times.append((time.perf_counter() - t0) * 1000)
    p.stdin.close()
    p.wait()
    times.sort()
    return statistics.median(times), times[int(len(times) * 0.99) - 1], max(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mb", type=int, default=200, help="size of each generated input in MB (default 200)")
    ap.add_argument("--quick", action="store_true", help="fewer latency samples")
    ap.add_argument("--keep", help="directory for the generated inputs (default: a temporary one)")
    ap.add_argument("--repeat", type=int, default=3, help="runs per figure, the best kept (default 3)")
    args = ap.parse_args()
    global REPEAT
    REPEAT = max(1, args.repeat)

    subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=ROOT, check=True)
    subprocess.run(["cargo", "build", "--release", "--quiet", "--locked", "--manifest-path",
                    os.path.join(ROOT, "benches", "baseline", "Cargo.toml")],
                   cwd=ROOT, check=True, env=dict(os.environ, CARGO_TARGET_DIR=os.path.join(ROOT, "target")))
    tmp = args.keep or tempfile.mkdtemp(prefix="insights-bench-")
    os.makedirs(tmp, exist_ok=True)
    have_jq = shutil.which("jq")
    help_text = subprocess.run([BIN, "--help"], capture_output=True, text=True).stdout
    # One thread: standard input redirected from a file is converted on every core by default.
    commands = [("convert", [BIN, "--no-timestamp", "--jobs", "1"])]
    if "validate" in help_text:
        commands.append(("validate", [BIN, "validate"]))
    if "reduce" in help_text:
        # As users run it: standard input from a file this large is reduced on every core
        # (workers convert, the calling thread folds); then on one thread.
        commands.append(("reduce", [BIN, "reduce"]))
        commands.append(("reduce -j1", [BIN, "reduce", "--jobs", "1"]))

    print(f"insights benchmark: {args.mb} MB per input, {os.cpu_count()} cores, best of {REPEAT} runs, inputs in {tmp}")
    print(f"{'input':<8} {'command':<10} {'MB/s':>8} {'events/s':>12} {'peak RSS':>10} {'vs jq':>7}")
    jq_mbs = None
    for name, dirs in INPUTS.items():
        path = os.path.join(tmp, f"{name}.jsonl")
        size = os.path.getsize(path) if os.path.exists(path) else generate(path, dirs, args.mb, seed=len(name))
        mb = size / 1_000_000
        if name == "claude" and have_jq:
            secs, lines, _ = run(["jq", "-c", JQ_CLAUDE], path)
            jq_mbs = mb / secs
            print(f"{name:<8} {'jq':<10} {jq_mbs:8.1f} {lines / secs:12.0f} {peak_rss(['jq', '-c', JQ_CLAUDE], path) / 1024:8.1f}MB {'1.0x':>7}")
        # serde_json alone: parsed without a tree, and parsed into a Value and written back.
        serde = {}
        for mode in ("skip", "value"):
            secs, lines, _ = run([BASELINE, mode], path)
            serde[mode] = mb / secs
            print(f"{name:<8} {'serde ' + mode:<10} {mb / secs:8.1f} {lines / secs:12.0f} {peak_rss([BASELINE, mode], path) / 1024:8.1f}MB {'':>7}")
        one_core = None
        for cmd_name, cmd in commands:
            secs, lines, _ = run(cmd, path)
            mbs = mb / secs
            one_core = one_core or mbs
            rss = peak_rss(cmd, path) / 1024
            ratio = f"{mbs / jq_mbs:.1f}x" if (jq_mbs and name == "claude") else ""
            print(f"{name:<8} {cmd_name:<10} {mbs:8.1f} {lines / secs:12.0f} {rss:8.1f}MB {ratio:>7}"
                  f"  {mbs / serde['value']:.2f}x serde Value, anonymous memory {LAST_ANON / 1024:.1f}MB")
            if cmd_name == "reduce":
                # The state into a file, as `insights reduce log > state.json` writes it:
                # through the pipe above, the benchmark's reader shares the cores with the
                # threads that write a large state.
                out = os.path.join(tmp, "state.json")
                t = min(to_file(cmd, out, path) for _ in range(REPEAT))
                os.remove(out)
                print(f"{name:<8} {'  to a file':<10} {mb / t:8.1f} {'':>12} {'':>10} {'':>7}"
                      f"  {mb / t / serde['value']:.2f}x serde Value")
        # --jobs: the file as an argument, one thread per core, against one thread.
        cores = os.cpu_count() or 1
        if cores > 1:
            cmd = [BIN, "--no-timestamp", "--jobs", str(cores), path]
            secs, lines, _ = run(cmd, None)
            mbs = mb / secs
            rss = peak_rss(cmd, None) / 1024
            ratio = f"{mbs / jq_mbs:.1f}x" if (jq_mbs and name == "claude") else ""
            same = same_output([BIN, "--no-timestamp", "--jobs", "1", path], cmd)
            print(f"{name:<8} {'convert -j' + str(cores):<10} {mbs:8.1f} {lines / secs:12.0f} {rss:8.1f}MB {ratio:>7}"
                  f"  {mbs / one_core:.2f}x one thread, output {'identical' if same else 'DIFFERENT'}")
            # The same into a file: through the pipe above, the benchmark's own reader takes
            # a share of the two cores. Best of REPEAT runs each, alternating.
            one_out, n_out = os.path.join(tmp, "out-j1.jsonl"), os.path.join(tmp, f"out-j{cores}.jsonl")
            t1 = tn = float("inf")
            for _ in range(REPEAT):
                t1 = min(t1, to_file([BIN, "--no-timestamp", "--jobs", "1", path], one_out))
                tn = min(tn, to_file(cmd, n_out))
            same = filecmp.cmp(one_out, n_out, shallow=False)
            os.remove(one_out)
            os.remove(n_out)
            print(f"{name:<8} {'  to a file':<10} {mb / tn:8.1f} {'':>12} {'':>10} {'':>7}"
                  f"  {t1 / tn:.2f}x one thread into a file ({mb / t1:.1f} MB/s), output {'identical' if same else 'DIFFERENT'}")

    k = 50 if args.quick else 200
    true = shutil.which("true") or "/bin/true"
    print(f"start-up, insights --version: median {startup([BIN, '--version'], k):.2f} ms"
          f" (spawning `true` the same way: {startup([true], k):.2f} ms)")
    n = 300 if args.quick else 2000
    med, p99, worst = latency(n)
    print(f"live latency over a pipe, {n} lines: median {med:.3f} ms, p99 {p99:.3f} ms, max {worst:.3f} ms")
    cat = shutil.which("cat")
    if cat:
        med, p99, worst = latency(n, [cat])
        print(f"  the same through cat (the floor):  median {med:.3f} ms, p99 {p99:.3f} ms, max {worst:.3f} ms")


if __name__ == "__main__":
    main()
