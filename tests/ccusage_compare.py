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

Billing blocks: `insights usage --by block --agent claude --json` against `ccusage blocks
--json` (Claude's), block by block: id, times, gap and active flags, responses, models, tokens,
cost; and, on a copy of the largest Claude session moved to the last 40 minutes, the active
block's burn rate and projection (the two tools read the clock a moment apart: rates within 1%,
the projection within 2%, the minutes left within 2).

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
- ccusage names pi's and OpenClaw's models `[pi] <model>`, `[openclaw] <model>`; insights
  keeps the model's own name. ccusage's Kilo,
  Goose, Droid and Hermes output does not count reasoning (Kilo writes it apart, as OpenCode does; Goose's is
  the part of its total beyond input and output).

- Codebuff: a usage in OpenAI's words (`prompt_tokens` with
  `prompt_tokens_details.cached_tokens`, the sample's `openai/gpt-5`) counts its cached tokens
  in the prompt; ccusage counts them in its input and again as cache reads, insights only as
  cache reads: insights' input plus cache reads is compared there. ccusage prices a
  provider-prefixed name (`openai/gpt-5`) from another provider's entry of its table ($2.50/M
  input, $2/M output); insights from the model's maker's list price: tokens only there.

The agents read from samples (Amp, pi, Kimi, Kilo, Goose, Droid, OpenClaw, Hermes, GitHub
Copilot CLI, Codebuff:
tests/usage-samples/, from ccusage's own
tests, named in testdata/SOURCES.md) are compared in one home holding them all, by day in the
three zones, and by month and by session (each with its models) in UTC.
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
# Agents whose samples are under tests/usage-samples/<agent>/ (a home each; see
# testdata/SOURCES.md), compared by day, month and session.
SAMPLED = ["amp", "pi", "kimi", "kilo", "goose", "droid", "openclaw", "hermes", "copilot", "codebuff"]
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


def build_samples(dest):
    """One home holding every agent's sample of tests/usage-samples/ (their places do not
    overlap); a `kilo.sql` becomes the `kilo.db` beside it."""
    import sqlite3
    base = os.path.join(ROOT, "tests", "usage-samples")
    for agent in sorted(os.listdir(base)):
        shutil.copytree(os.path.join(base, agent), dest, dirs_exist_ok=True)
    for d, _, names in os.walk(dest):
        for n in names:
            if n.endswith(".sql"):
                db = sqlite3.connect(os.path.join(d, n[:-4] + ".db"))
                db.executescript(open(os.path.join(d, n), encoding="utf-8").read())
                db.commit()
                db.close()
    return dest


def day_args(days, form):
    """--since and --until for (first, last) days written as YYYY-MM-DD, in `form`."""
    if days is None:
        return []
    first, last = (d.replace("-", "") if form == "YYYYMMDD" else d for d in days)
    return ["--since", first, "--until", last]


# ccusage's report, the key of its rows' period, and insights' --by for the same rows.
REPORTS = {"daily": ("daily", "date", "day"), "monthly": ("monthly", "month", "month"),
           "session": ("sessions", "sessionId", "session")}
AGENT_VARS = ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_DATA_DIR", "XDG_CONFIG_HOME", "XDG_DATA_HOME",
              "AMP_DATA_DIR", "PI_AGENT_DIR", "KIMI_DATA_DIR", "KILO_DATA_DIR", "GOOSE_PATH_ROOT",
              "DROID_SESSIONS_DIR", "OPENCLAW_DIR", "HERMES_HOME", "COPILOT_OTEL_FILE_EXPORTER_PATH",
              "CODEBUFF_DATA_DIR")


def ccusage_rows(exe, home, agent, tz, days=None, form=None, report="daily"):
    env = dict(os.environ, HOME=home, TZ=tz, NO_COLOR="1")
    for var in AGENT_VARS:
        env.pop(var, None)
    out = subprocess.run(
        [exe, agent, report, "--json", "--offline"] + day_args(days, form),
        env=env, capture_output=True, text=True, check=True,
    ).stdout
    rows = {}
    field, period, _ = REPORTS[report]
    for day in json.loads(out).get(field, []):
        date = day.get(period) or day.get("date") or day.get("period")
        models = day.get("models")
        if isinstance(models, dict):  # codex, gemini: tokens per model, cost per day
            items = [dict(v, modelName=k) for k, v in models.items()]
            day_cost = day.get("costUSD")
            if len(items) == 1:
                items[0]["cost"] = day_cost
        else:  # claude: modelBreakdowns with their cost
            items = day.get("modelBreakdowns", [])
        for m in items:
            # ccusage names pi's and OpenClaw's models `[pi] <model>`; insights keeps their names.
            model = m["modelName"].removeprefix(f"[{agent}] ")
            rows[(date, model)] = {
                "input": m.get("inputTokens", 0),
                "output": m.get("outputTokens", 0),
                "cacheRead": m.get("cacheReadTokens", 0),
                "cacheCreation": m.get("cacheCreationTokens", 0),
                "cost": m.get("cost"),
            }
    return rows


def insights_rows(binary, home, agent, tz, days=None, form=None, report="daily"):
    # --allow-empty: an agent without files in this home is no error here, as for ccusage.
    key = REPORTS[report][2]
    out = subprocess.run(
        [binary, "usage", "--root", home, "--agent", agent, "--by", f"{key},model", "--json",
         "--allow-empty"] + day_args(days, form),
        env=dict(os.environ, TZ=tz), capture_output=True, text=True, check=True,
    ).stdout
    rows = {}
    for r in json.loads(out)["rows"]:
        apart = ("gemini", "opencode", "kilo", "goose", "droid", "hermes")
        output = r["outputTokens"] - (r["reasoningTokens"] if agent in apart else 0)
        # Qwen's prompt, and Codebuff's usage in OpenAI's words (the sample's `openai/…`
        # model), count the cached tokens: ccusage's input is the prompt.
        openai_words = agent == "codebuff" and r["model"].startswith("openai/")
        cached = r["cacheReadTokens"] if agent == "qwen" or openai_words else 0
        # ccusage prices Codebuff's `openai/gpt-5` from another provider's entry of its table.
        cost = None if agent == "codebuff" and "/" in r["model"] else r["costUsd"]
        rows[(r[key], r["model"])] = {
            "input": r["inputTokens"] + cached,
            "output": output,
            "cacheRead": r["cacheReadTokens"],
            "cacheCreation": r["cacheCreationTokens"],
            "cost": cost,
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
            # (insights writes costs to a millionth of a dollar.)
            if abs(ca - cb) > max(0.01 * cb, 1e-6):
                failures.append(f"{what} {key} cost: insights {ca}, ccusage {cb}")
    return checked


def compare(binary, home, exe, agents=AGENTS):
    failures, checked = [], 0
    for tz in ZONES:
        for agent in agents:
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


def compare_reports(binary, home, exe):
    """The sampled agents by month and by session (and model), in UTC."""
    failures, checked = [], 0
    for agent in SAMPLED:
        for report in ("monthly", "session"):
            what = f"{agent} {report}"
            theirs = ccusage_rows(exe, home, agent, "UTC", report=report)
            ours = insights_rows(binary, home, agent, "UTC", report=report)
            if not theirs:
                failures.append(f"{what}: no rows from ccusage")
            checked += compare_rows(what, ours, theirs, failures)
            print(f"{what}: {len(ours)} rows from insights, {len(theirs)} from ccusage")
    return failures, checked


def ccusage_blocks(exe, home):
    env = dict(os.environ, HOME=home, TZ="UTC", NO_COLOR="1")
    for var in ("CLAUDE_CONFIG_DIR", "XDG_CONFIG_HOME"):
        env.pop(var, None)
    out = subprocess.run([exe, "blocks", "--json", "--offline"], env=env,
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out)["blocks"]


def insights_blocks(binary, home):
    out = subprocess.run(
        [binary, "usage", "--root", home, "--agent", "claude", "--by", "block", "--json",
         "--allow-empty"],
        env=dict(os.environ, TZ="UTC"), capture_output=True, text=True, check=True,
    ).stdout
    return json.loads(out)["blocks"]


def near(a, b, rel):
    if a is None or b is None:
        return a == b
    return abs(a - b) <= rel * max(abs(a), abs(b)) + 1e-9


def compare_blocks(binary, home, exe, failures):
    """Block by block; returns how many were compared."""
    theirs, ours = ccusage_blocks(exe, home), insights_blocks(binary, home)
    if len(theirs) != len(ours):
        failures.append(f"blocks {home}: insights {len(ours)}, ccusage {len(theirs)}")
        return 0
    for a, b in zip(ours, theirs):
        what = f"block {b['id']}"
        tc = b["tokenCounts"]
        pairs = [
            ("id", a["id"], b["id"]), ("startTime", a["startTime"], b["startTime"]),
            ("endTime", a["endTime"], b["endTime"]),
            ("actualEndTime", a["actualEndTime"], b["actualEndTime"]),
            ("isGap", a["isGap"], b["isGap"]), ("isActive", a["isActive"], b["isActive"]),
            ("entries", a["entries"], b["entries"]), ("models", a["models"], b["models"]),
            ("inputTokens", a["inputTokens"], tc["inputTokens"]),
            ("outputTokens", a["outputTokens"], tc["outputTokens"]),
            ("cacheReadTokens", a["cacheReadTokens"], tc["cacheReadInputTokens"]),
            ("cacheCreationTokens", a["cacheCreationTokens"], tc["cacheCreationInputTokens"]),
            ("totalTokens", a["totalTokens"], b["totalTokens"]),
        ]
        for k, x, y in pairs:
            if x != y:
                failures.append(f"{what} {k}: insights {x}, ccusage {y}")
        if b["costUSD"] and not near(a["costUsd"], b["costUSD"], 0.01):
            failures.append(f"{what} cost: insights {a['costUsd']}, ccusage {b['costUSD']}")
        ra, rb = a["burnRate"], b["burnRate"]
        if (ra is None) != (rb is None):
            failures.append(f"{what} burnRate: insights {ra}, ccusage {rb}")
        elif ra:
            for k in ("tokensPerMinute", "tokensPerMinuteForIndicator", "costPerHour"):
                if not near(ra[k], rb[k], 0.01):
                    failures.append(f"{what} burnRate.{k}: insights {ra[k]}, ccusage {rb[k]}")
        pa, pb = a["projection"], b["projection"]
        if (pa is None) != (pb is None):
            failures.append(f"{what} projection: insights {pa}, ccusage {pb}")
        elif pa:
            if not near(pa["totalTokens"], pb["totalTokens"], 0.02):
                failures.append(f"{what} projection tokens: insights {pa}, ccusage {pb}")
            if not near(pa["totalCost"], pb["totalCost"], 0.02):
                failures.append(f"{what} projection cost: insights {pa}, ccusage {pb}")
            if abs(pa["remainingMinutes"] - pb["remainingMinutes"]) > 2:
                failures.append(f"{what} projection minutes: insights {pa}, ccusage {pb}")
    print(f"blocks {home}: {len(ours)} from insights, {len(theirs)} from ccusage")
    return len(ours)


def statusline_parts(line):
    """Session, today and block dollars, minutes left, dollars an hour, context tokens."""
    import re
    # (ccusage writes a sum of nothing as -0.00.)
    money = re.search(r"\$(-?[\d.]+) session / \$(-?[\d.]+) today / \$(-?[\d.]+) block \((?:(\d+)h )?(\d+)m left\)", line)
    burn = re.search(r"\$([\d.]+)/hr", line)
    ctx = re.search(r"🧠 ([\d,]+)", line)
    if not (money and burn and ctx):
        return None
    s, t, b, h, m = money.groups()
    return (abs(float(s)), abs(float(t)), abs(float(b)), int(h or 0) * 60 + int(m), float(burn.group(1)),
            int(ctx.group(1).replace(",", "")))


def compare_statusline(binary, home, exe, failures):
    """`insights statusline` against `ccusage statusline` on the same status JSON."""
    files = []
    for d, _, names in os.walk(os.path.join(home, ".claude", "projects")):
        files += [os.path.join(d, n) for n in names if n.endswith(".jsonl")]
    status = json.dumps({
        "hook_event_name": "Status", "session_id": os.path.basename(files[0])[:-6],
        "transcript_path": files[0], "cwd": "/home/dev/work",
        "model": {"id": "claude-opus-4-8", "display_name": "Opus 4.8"},
        "workspace": {"current_dir": "/home/dev/work", "project_dir": "/home/dev/work"},
    })
    env = dict(os.environ, HOME=home, TZ="UTC", NO_COLOR="1")
    theirs = subprocess.run([exe, "statusline", "--offline", "--no-cache"], input=status, env=env,
                            capture_output=True, text=True).stdout.strip()
    ours = subprocess.run([binary, "statusline"], input=status, env=env,
                          capture_output=True, text=True).stdout.strip()
    a, b = statusline_parts(ours), statusline_parts(theirs)
    print(f"statusline: insights {ours!r}; ccusage {theirs!r}")
    if a is None or b is None:
        failures.append(f"statusline: insights {ours!r}, ccusage {theirs!r}")
        return
    # Dollars to the cent shown, minutes a moment apart; the context here counts the last
    # response's output too (what the next request reads), ccusage's not: within 1%.
    if a[:3] != b[:3] or abs(a[3] - b[3]) > 2 or abs(a[4] - b[4]) > 0.011 or not near(a[5], b[5], 0.01):
        failures.append(f"statusline: insights {ours!r}, ccusage {theirs!r}")


def active_home(src_home, dest):
    """The largest Claude session of `src_home`, its times moved to the last 40 minutes (so
    that its block is the active one), in a home of its own."""
    import datetime
    files = []
    for d, _, names in os.walk(os.path.join(src_home, ".claude", "projects")):
        files += [os.path.join(d, n) for n in names if n.endswith(".jsonl")]
    if not files:
        return False
    src = max(files, key=os.path.getsize)
    lines = [json.loads(l) for l in open(src, encoding="utf-8") if l.strip()]
    parse = lambda t: datetime.datetime.fromisoformat(t.replace("Z", "+00:00"))
    times = [parse(l["timestamp"]) for l in lines if "timestamp" in l]
    first, span = min(times), (max(times) - min(times)).total_seconds() or 1.0
    start = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(minutes=40)
    for l in lines:
        if "timestamp" in l:
            f = (parse(l["timestamp"]) - first).total_seconds() / span
            t = start + datetime.timedelta(seconds=f * 35 * 60)
            l["timestamp"] = t.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (t.microsecond // 1000)
    out = os.path.join(dest, ".claude", "projects", "-home-dev-work")
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, os.path.basename(src)), "w", encoding="utf-8") as f:
        for l in lines:
            f.write(json.dumps(l, separators=(",", ":"), ensure_ascii=False) + "\n")
    return True


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
    samples = build_samples(tempfile.mkdtemp(prefix="insights-ccusage-samples-"))
    try:
        failed = []
        failures, checked = compare(binary, samples, exe, SAMPLED)
        f2, c2 = compare_reports(binary, samples, exe)
        print(f"{samples}: {checked + c2} rows compared, {len(failures) + len(f2)} differences")
        failed += failures + f2
        for home in homes:
            failures, checked = compare(binary, home, exe)
            checked += compare_blocks(binary, home, exe, failures)
            print(f"{home}: {checked} rows compared, {len(failures)} differences")
            failed += failures
        active = tempfile.mkdtemp(prefix="insights-ccusage-active-")
        try:
            if active_home(homes[0], active):
                failures = []
                compare_blocks(binary, active, exe, failures)
                if not any(b["isActive"] for b in insights_blocks(binary, active)):
                    failures.append("active home: no active block")
                compare_statusline(binary, active, exe, failures)
                failed += failures
        finally:
            shutil.rmtree(active, ignore_errors=True)
        for f in failed:
            print("DIFFERENT", f)
        if failed:
            sys.exit(1)
        print("same numbers as ccusage", VERSION)
    finally:
        shutil.rmtree(samples, ignore_errors=True)
        if tmp:
            for home in homes:
                shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main()
