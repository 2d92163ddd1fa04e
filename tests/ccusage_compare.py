#!/usr/bin/env python3
"""`insights usage` against ccusage on the same session files: per day and model, input,
output and cache tokens equal, cost within 1% where both price the model.

    python3 tests/ccusage_compare.py INSIGHTS_BINARY [HOME_DIR ...]

With no HOME_DIR it builds one home from every recorded session file under
testdata/session-files/ (Claude Code, Codex, Gemini CLI and Qwen Code, written by the real
CLIs), and one home per recorded OpenCode database (each recording has its own
~/.local/share/opencode/opencode.db, which cannot be merged into one home). ccusage
20.0.24 is installed from npm into a cache folder when npm is there; without npm, or when
the install fails (no network), it prints why and exits 0 with "skipped".

Both tools run with the same TZ and neither is told a zone, so that days are compared as each
counts them by default (the local zone): UTC, America/Los_Angeles and Pacific/Kiritimati (where
the recorded sessions, written around 13:00 UTC, fall on the next day). In that last zone the
first day is compared again with --since and --until, given to both as YYYYMMDD and as
YYYY-MM-DD.

Differences by design (README, "Coming from ccusage"), allowed here:
- insights' `outputTokens` counts reasoning for every agent; ccusage's Gemini and OpenCode
  output does not (Gemini's thoughts are only in its total; OpenCode writes reasoning apart):
  insights' output minus reasoning is compared there.
- insights' `inputTokens` is uncached input for every agent; ccusage's Qwen input counts the
  cached tokens too (Qwen's `promptTokenCount`), and its cache reads again: insights' input plus
  cache reads is compared there.
- ccusage does not read Qwen Code's subagent files (`~/.qwen/projects/*/subagents/`), whose
  requests insights counts: the home built here leaves them out (docs/usage.md).
- a model one of the two cannot price is compared on tokens only.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile

VERSION = "20.0.24"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CACHE = os.path.join(
    os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "insights-ccusage", VERSION
)
AGENTS = ["claude", "codex", "gemini", "qwen", "opencode"]
ZONES = ["UTC", "America/Los_Angeles", "Pacific/Kiritimati"]


def ccusage():
    exe = os.path.join(CACHE, "node_modules", ".bin", "ccusage")
    if os.path.exists(exe):
        return exe
    if not shutil.which("npm"):
        return None
    os.makedirs(CACHE, exist_ok=True)
    r = subprocess.run(
        ["npm", "install", "--no-audit", "--no-fund", "--prefix", CACHE, f"ccusage@{VERSION}"],
        capture_output=True,
        text=True,
    )
    if r.returncode != 0 or not os.path.exists(exe):
        print(f"npm install ccusage@{VERSION} failed: {r.stderr.strip()[-300:]}")
        return None
    return exe


def build_home(dest):
    """Every recorded session file, in one home, as the CLIs laid them out (Qwen's subagent
    files left out: ccusage does not read them); and the OpenCode recordings, one home each.
    Returns the homes."""
    base = os.path.join(ROOT, "testdata", "session-files")
    homes = [dest]
    no_subagents = shutil.ignore_patterns("subagents")
    for provider in sorted(os.listdir(base)):
        for scenario in sorted(os.listdir(os.path.join(base, provider))):
            src = os.path.join(base, provider, scenario)
            for d in (".claude", ".codex", ".gemini", ".qwen"):
                if os.path.isdir(os.path.join(src, d)):
                    shutil.copytree(os.path.join(src, d), os.path.join(dest, d), dirs_exist_ok=True,
                                    ignore=no_subagents if d == ".qwen" else None)
            if os.path.isdir(os.path.join(src, ".local")):
                home = f"{dest}-{provider}-{scenario}"
                shutil.copytree(os.path.join(src, ".local"), os.path.join(home, ".local"))
                homes.append(home)
    return homes


def day_args(days, form):
    """--since and --until for (first, last) days written as YYYY-MM-DD, in `form`."""
    if days is None:
        return []
    first, last = (d.replace("-", "") if form == "YYYYMMDD" else d for d in days)
    return ["--since", first, "--until", last]


def ccusage_rows(exe, home, agent, tz, days=None, form=None):
    env = dict(os.environ, HOME=home, TZ=tz, NO_COLOR="1")
    for var in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_DATA_DIR", "XDG_CONFIG_HOME", "XDG_DATA_HOME"):
        env.pop(var, None)
    out = subprocess.run(
        [exe, agent, "daily", "--json", "--offline"] + day_args(days, form),
        env=env, capture_output=True, text=True, check=True,
    ).stdout
    rows = {}
    for day in json.loads(out).get("daily", []):
        date = day.get("date") or day.get("period")
        models = day.get("models")
        if isinstance(models, dict):  # codex, gemini: tokens per model, cost per day
            items = [dict(v, modelName=k) for k, v in models.items()]
            day_cost = day.get("costUSD")
            if len(items) == 1:
                items[0]["cost"] = day_cost
        else:  # claude: modelBreakdowns with their cost
            items = day.get("modelBreakdowns", [])
        for m in items:
            rows[(date, m["modelName"])] = {
                "input": m.get("inputTokens", 0),
                "output": m.get("outputTokens", 0),
                "cacheRead": m.get("cacheReadTokens", 0),
                "cacheCreation": m.get("cacheCreationTokens", 0),
                "cost": m.get("cost"),
            }
    return rows


def insights_rows(binary, home, agent, tz, days=None, form=None):
    # --allow-empty: an agent without files in this home is no error here, as for ccusage.
    out = subprocess.run(
        [binary, "usage", "--root", home, "--agent", agent, "--by", "day,model", "--json",
         "--allow-empty"] + day_args(days, form),
        env=dict(os.environ, TZ=tz), capture_output=True, text=True, check=True,
    ).stdout
    rows = {}
    for r in json.loads(out)["rows"]:
        output = r["outputTokens"] - (r["reasoningTokens"] if agent in ("gemini", "opencode") else 0)
        cached = r["cacheReadTokens"] if agent == "qwen" else 0
        rows[(r["day"], r["model"])] = {
            "input": r["inputTokens"] + cached,
            "output": output,
            "cacheRead": r["cacheReadTokens"],
            "cacheCreation": r["cacheCreationTokens"],
            "cost": r["costUsd"],
        }
    return rows


def compare_rows(what, ours, theirs, failures):
    """Compares day-model rows; returns how many were compared."""
    checked = 0
    for key in sorted(set(theirs) | set(ours)):
        a, b = ours.get(key), theirs.get(key)
        if a is None or b is None:
            failures.append(f"{what} {key}: insights {a}, ccusage {b}")
            continue
        checked += 1
        for k in ("input", "output", "cacheRead", "cacheCreation"):
            if a[k] != b[k]:
                failures.append(f"{what} {key} {k}: insights {a[k]}, ccusage {b[k]}")
        ca, cb = a["cost"], b["cost"]
        if ca is not None and cb:
            if abs(ca - cb) > 0.01 * cb:
                failures.append(f"{what} {key} cost: insights {ca}, ccusage {cb}")
    return checked


def compare(binary, home, exe):
    failures, checked = [], 0
    for tz in ZONES:
        for agent in AGENTS:
            what = f"TZ={tz} {agent}"
            theirs = ccusage_rows(exe, home, agent, tz)
            ours = insights_rows(binary, home, agent, tz)
            checked += compare_rows(what, ours, theirs, failures)
            print(f"{what}: {len(ours)} day-model rows from insights, {len(theirs)} from ccusage")
            # The day forms in the zone that moves the day (each ccusage run takes a second).
            if not ours or tz != "Pacific/Kiritimati":
                continue
            first = min(day for day, _ in ours)
            for form in ("YYYYMMDD", "YYYY-MM-DD"):
                days = (first, first)
                theirs_f = ccusage_rows(exe, home, agent, tz, days, form)
                ours_f = insights_rows(binary, home, agent, tz, days, form)
                if not ours_f:
                    failures.append(f"{what} --since/--until {form} {first}: no rows")
                expected = {k: v for k, v in ours.items() if k[0] == first}
                if ours_f != expected:
                    failures.append(f"{what} --since/--until {form} {first}: not that day's rows")
                checked += compare_rows(f"{what} {form}", ours_f, theirs_f, failures)
    return failures, checked


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    binary = os.path.abspath(sys.argv[1])
    exe = ccusage()
    if exe is None:
        print("skipped: ccusage is not installed and cannot be (no npm or no network)")
        return
    homes = sys.argv[2:]
    tmp = None
    if not homes:
        tmp = tempfile.mkdtemp(prefix="insights-ccusage-")
        homes = build_home(tmp)
    try:
        failed = []
        for home in homes:
            failures, checked = compare(binary, home, exe)
            print(f"{home}: {checked} rows compared, {len(failures)} differences")
            failed += failures
        for f in failed:
            print("DIFFERENT", f)
        if failed:
            sys.exit(1)
        print("same numbers as ccusage", VERSION)
    finally:
        if tmp:
            for home in homes:
                shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main()
