#!/usr/bin/env python3
"""`insights usage` against ccusage on a large home of session files, in one run.

    python3 benches/usage.py INSIGHTS_BINARY                 # 2,360 files, ~400 MB
    python3 benches/usage.py INSIGHTS_BINARY --copies 10     # smaller, for a quick look
    python3 benches/usage.py INSIGHTS_BINARY --compare       # also check the numbers agree

The home is built once (kept in --dir) from the session files that the real CLIs wrote
(testdata/session-files/): every file is copied many times, each copy with fresh session ids,
message ids, request ids and dates, and each copy repeats its source's lines a few times (a long
session), each repetition with fresh message ids too, so nothing is a duplicate of anything.
It holds every agent `usage` reads: the other agents' samples (tests/usage-samples/: Amp's
threads, pi's, Kimi's, Droid's, OpenClaw's, GitHub Copilot CLI's and Codebuff's files, copied
--copies x 25 times under fresh thread and session names; Kilo's, Goose's and Hermes' databases, their rows copied as many times
under fresh ids) and a recorded OpenCode database.

It times `insights usage --by day --json` and `ccusage daily --json --offline` (ccusage 20.0.24,
installed as tests/ccusage_compare.py does), alternating, best of --repeat, and prints the ratio
(ccusage's time / insights' time: above 1 is faster than ccusage) and each one's peak memory.
Beside them, the floor: benches/read_floor.rs (built with `rustc -O` when there is one) walks
the same home and reads every file whole on as many threads as there are cores, doing nothing
with the bytes; each tool's time is also given over it.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import time
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests"))
import ccusage_compare  # noqa: E402

UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
IDS = re.compile(r"\b(msg|req|toolu|call)_[A-Za-z0-9]+")
HEX32 = re.compile(r'"id":"[0-9a-f]{32}"')
AGENT = re.compile(r"\b(agent-|\"agentId\":\")([0-9a-f]{17})\b")
# The days the recorded sessions were written on; a copy moves them all to one day.
DAY = re.compile(r"2026-11-26|2026-12-05")


def sources():
    base = os.path.join(ROOT, "testdata", "session-files")
    out = []
    for dirpath, _, names in os.walk(base):
        for n in names:
            if n.endswith(".jsonl") and "/." in dirpath:
                out.append(os.path.join(dirpath, n))
    return sorted(out)


def fresh(text, n):
    """The text with every id made new for copy n, and its day moved n days back."""
    ids = {}

    def new_uuid(m):
        k = m.group(0)
        if k not in ids:
            ids[k] = str(uuid.uuid5(uuid.NAMESPACE_OID, f"{k}/{n}"))
        return ids[k]

    text = UUID.sub(new_uuid, text)
    text = IDS.sub(lambda m: f"{m.group(0)}x{n}", text)
    text = HEX32.sub(lambda m: m.group(0)[:-1] + f"x{n}\"", text)
    text = AGENT.sub(lambda m: m.group(1) + f"{m.group(2)}x{n}", text)
    day = time.strftime("%Y-%m-%d", time.gmtime(time.mktime((2026, 11, 26, 12, 0, 0, 0, 0, 0)) - n * 86400))
    return DAY.sub(day, text)


def build(dest, copies, repeat):
    if os.path.exists(os.path.join(dest, ".complete")):
        return
    shutil.rmtree(dest, ignore_errors=True)
    srcs = sources()
    for c in range(copies):
        for src in srcs:
            rel = src.split("/session-files/", 1)[1].split("/", 2)[2]  # .claude/…, .codex/…
            with open(src, encoding="utf-8", errors="replace") as f:
                text = f.read()
            body = "".join(fresh(text, c * repeat + r) for r in range(repeat))
            path = fresh(os.path.join(dest, rel), c * repeat)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                f.write(body)
        # Gemini CLI reads the project's folder from .project_root beside chats/.
    for dirpath, dirs, _ in os.walk(os.path.join(dest, ".gemini", "tmp")):
        if "chats" in dirs:
            with open(os.path.join(dirpath, ".project_root"), "w") as f:
                f.write("/home/dev/work\n")
    others(dest, copies * 25)
    open(os.path.join(dest, ".complete"), "w").close()


def others(dest, n):
    """The agents read from samples, n times each, and one recorded OpenCode database."""
    import sqlite3
    samples = os.path.join(ROOT, "tests", "usage-samples")
    for c in range(n):
        for d, _, names in os.walk(samples):
            for name in names:
                src = os.path.join(d, name)
                rel = os.path.relpath(src, samples).split("/", 1)[1]
                if name.endswith(".sql") or (name == "config.json" and c > 0):
                    continue
                text = open(src, encoding="utf-8").read()
                if "/amp/threads/" in src:  # thread id and file name
                    text = text.replace('"T-thread-', f'"T-c{c}-thread-')
                    rel = rel.replace("T-thread-", f"T-c{c}-thread-")
                elif "/.pi/" in src:  # <time>_<session>.jsonl
                    rel = rel.replace("agent_session-", f"agent_session-c{c}-")
                elif "/.kimi/sessions/" in src:  # the session's folder
                    rel = re.sub(r"/session-(\w)/", rf"/session-\1-c{c}/", rel)
                elif "/.factory/" in src or "/.openclaw/" in src:  # the session is the file name
                    head, tail = os.path.split(rel)
                    stem, dot, ext = tail.partition(".")
                    rel = os.path.join(head, f"{stem}-c{c}{dot}{ext}")
                elif "/.copilot/otel/" in src:  # the conversation and trace ids, and the file
                    text = re.sub(r'"(conv|trace)-', rf'"\1-c{c}-', text)
                    rel = rel.replace(".jsonl", f"-c{c}.jsonl")
                elif "/.config/manicode" in src:  # <channel>/<project>/<chat>: the project
                    rel = re.sub(r"/projects/([^/]+)/", rf"/projects/\1-c{c}/", rel)
                out = os.path.join(dest, rel)
                os.makedirs(os.path.dirname(out), exist_ok=True)
                with open(out, "w", encoding="utf-8") as f:
                    f.write(text)
    # The databases (Kilo, Goose, Hermes): each row n times, its ids made new.
    for d, _, names in os.walk(samples):
        for name in names:
            if not name.endswith(".sql"):
                continue
            src = os.path.join(d, name)
            rel = os.path.relpath(src, samples).split("/", 1)[1][:-4] + ".db"
            os.makedirs(os.path.dirname(os.path.join(dest, rel)), exist_ok=True)
            db = sqlite3.connect(os.path.join(dest, rel))
            db.executescript(open(src, encoding="utf-8").read())
            for (table,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall():
                cols = [r[1] for r in db.execute(f"PRAGMA table_info({table})")]
                rows = db.execute(f"SELECT {', '.join(cols)} FROM {table}").fetchall()
                new = []
                for c in range(1, n):
                    for row in rows:
                        new.append(tuple(
                            f"{v}-c{c}" if col in ("id", "session_id") and isinstance(v, str)
                            else re.sub(r'"id":"([^"]+)"', rf'"id":"\1-c{c}"', v) if col == "data" and v
                            else v
                            for col, v in zip(cols, row)))
                marks = ", ".join("?" for _ in cols)
                db.executemany(f"INSERT INTO {table} ({', '.join(cols)}) VALUES ({marks})", new)
            db.commit()
            db.close()
    oc = os.path.join(ROOT, "testdata", "session-files", "opencode", "edit-and-shell", ".local")
    shutil.copytree(oc, os.path.join(dest, ".local"), dirs_exist_ok=True)


def measure(cmd, env):
    """Seconds and peak resident memory (KiB) of one run."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(p.pid, 0)
    dt = time.perf_counter() - t0
    if status != 0:
        sys.exit(f"{cmd[0]} failed ({status})")
    return dt, usage.ru_maxrss


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("insights")
    ap.add_argument("--dir", default="/tmp/insights-usage-bench")
    ap.add_argument("--copies", type=int, default=40)
    ap.add_argument("--repeat-lines", type=int, default=11, help="repetitions of a source per file")
    ap.add_argument("--repeat", type=int, default=3, help="runs of each command (best is kept)")
    ap.add_argument("--compare", action="store_true", help="also compare the numbers")
    a = ap.parse_args()
    exe = ccusage_compare.ccusage()
    home = os.path.join(a.dir, f"home-v5-{a.copies}x{a.repeat_lines}")
    build(home, a.copies, a.repeat_lines)
    files = sum(len([n for n in ns if n.endswith((".jsonl", ".json", ".db"))]) for _, _, ns in os.walk(home))
    size = sum(os.path.getsize(os.path.join(d, n)) for d, _, ns in os.walk(home) for n in ns)
    print(f"home: {home}: {files} files, {size / 1e6:.0f} MB")
    env = dict(os.environ, HOME=home, TZ="UTC", NO_COLOR="1")
    for var in ccusage_compare.AGENT_VARS:
        env.pop(var, None)
    # Warm the page cache for both alike.
    for d, _, ns in os.walk(home):
        for n in ns:
            with open(os.path.join(d, n), "rb") as f:
                while f.read(1 << 20):
                    pass
    cmds = {"insights": [os.path.abspath(a.insights), "usage", "--by", "day", "--json"]}
    if exe:
        cmds["ccusage"] = [exe, "daily", "--json", "--offline"]
    else:
        print("ccusage: not installed and cannot be (no npm or no network): insights alone")
    # The floor: the same walk and reads with nothing done with the bytes (read_floor.rs),
    # on as many reading threads as insights uses.
    floor = os.path.join(a.dir, "read_floor")
    built = shutil.which("rustc") and subprocess.run(
        ["rustc", "-O", "--edition", "2021", os.path.join(HERE, "read_floor.rs"), "-o", floor],
        capture_output=True).returncode == 0
    if built:
        cmds["floor"] = [floor, str(os.cpu_count() or 1), home]
    else:
        print("floor: rustc cannot build benches/read_floor.rs: left out")
    best = {k: (float("inf"), 0) for k in cmds}
    for _ in range(a.repeat):
        for k, cmd in cmds.items():
            dt, rss = measure(cmd, env)
            best[k] = (min(best[k][0], dt), max(best[k][1], rss))
    for k, (dt, rss) in best.items():
        print(f"{k:9} {dt:7.3f} s  {size / 1e6 / dt:7.0f} MB/s  peak {rss / 1024:6.1f} MiB")
    if exe:
        print(f"ratio (ccusage time / insights time): {best['ccusage'][0] / best['insights'][0]:.2f}")
    if "floor" in best:
        print(f"insights over the floor (walking and reading the files, nothing else): "
              f"{best['insights'][0] / best['floor'][0]:.2f}")
        if exe:
            print(f"ccusage over the floor: {best['ccusage'][0] / best['floor'][0]:.2f}")
    if a.compare and exe:
        failures, checked = ccusage_compare.compare(
            os.path.abspath(a.insights), home, exe, ccusage_compare.AGENTS + ccusage_compare.SAMPLED)
        print(f"compared {checked} day-model rows: {len(failures)} differences")
        for f in failures[:20]:
            print("DIFFERENT", f)


if __name__ == "__main__":
    main()
