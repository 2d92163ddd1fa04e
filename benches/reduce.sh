#!/usr/bin/env bash
# Throughput of `insights reduce` next to `insights convert`, on a large generated log.
#
#   benches/reduce.sh [MB] [BASE]   # MB default 200; BASE: another insights binary to compare
#
# Builds the release binary, then writes into a scratch directory (under $TMPDIR, /tmp by
# default; removed at the end):
#   raw.jsonl     the Claude captures of testdata/claude*/ repeated to about MB megabytes; each
#                 repetition gets its own session, line, tool and request ids, so every
#                 repetition is a session of its own (the state grows with the log, as a real
#                 log of many sessions does)
#   events.jsonl  raw.jsonl converted (`insights --no-timestamp`)
# and prints MB/s for each command (input bytes / seconds, best of 3 runs, by wall-clock and by
# CPU time), the ratios of reduce to convert measured in the same run, and the peak memory of
# each reduce.
# With BASE (say, a build of an earlier commit), BASE reduces the same files in the same run,
# its states are compared with this build's (the same bytes, but for times taken from the
# clock on raw input, unless faketime(1) is installed to stop the clock), and the speed-ups
# are printed.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

target_mb=${1:-200}
base=${2:-}
if [ -n "$base" ] && [ ! -x "$base" ]; then
  echo "reduce.sh: $base is not an executable" >&2
  exit 2
fi
cargo build --release --quiet
bin=$PWD/target/release/insights

scratch=$(mktemp -d "${TMPDIR:-/tmp}/insights-bench.XXXXXX")
trap 'rm -rf "$scratch"' EXIT

captures=()
for f in testdata/claude*/*.jsonl; do
  case $f in *.events.jsonl) ;; *) captures+=("$f") ;; esac
done
one_rep=$(cat "${captures[@]}" | wc -c)
reps=$(( target_mb * 1000000 / one_rep + 1 ))

# Rewrite the ids each repetition so that every session, line, tool call and permission request
# stays unique.
for ((k = 0; k < reps; k++)); do cat "${captures[@]}"; done |
  awk '
    {
      k = int(n / lines_per_rep)
      gsub(/"uuid":"/, "\"uuid\":\"r" k "-")
      gsub(/"session_id":"/, "\"session_id\":\"r" k "-")
      gsub(/"request_id":"/, "\"request_id\":\"r" k "-")
      gsub(/toolu_/, "toolu_r" k "_")
      print
      n++
    }' lines_per_rep="$(cat "${captures[@]}" | wc -l)" > "$scratch/raw.jsonl"

"$bin" --no-timestamp "$scratch/raw.jsonl" > "$scratch/events.jsonl"

mb() { awk -v b="$(cat "$@" | wc -c)" 'BEGIN { printf "%.1f", b / 1e6 }'; }

# best_of CMD...: the fastest wall-clock time and the least CPU time (user + system) of 3
# runs, in seconds. CPU time hardly depends on what else the machine runs; wall-clock time does.
best_of() {
  local wall= cpu= t
  for _ in 1 2 3; do
    t=$( { TIMEFORMAT='%R %U %S'; time "$@" > /dev/null 2>&1; } 2>&1 )
    wall=$(awk -v t="${t%% *}" -v b="$wall" 'BEGIN { print (b == "" || t < b) ? t : b }')
    cpu=$(echo "$t" | awk -v b="$cpu" '{ c = $2 + $3; print (b == "" || c < b) ? c : b }')
  done
  echo "$wall $cpu"
}

# peak_mb CMD...: the peak resident memory of one run, in MB (needs GNU time).
peak_mb() {
  if [ -x /usr/bin/time ]; then
    /usr/bin/time -f %M "$@" 2>&1 >/dev/null | tail -1 | awk '{ printf "%.0f", $1 / 1024 }'
  else
    echo "?"
  fi
}

report() { # NAME BYTES_MB "WALL CPU"
  awk -v n="$1" -v mb="$2" -v t="$3" 'BEGIN {
    split(t, s, " ")
    printf "%-40s %7.1f MB %6.2f s %7.1f MB/s %6.2f s CPU %7.1f MB/s\n", n, mb, s[1], mb / s[1], s[2], mb / s[2]
  }'
}

# ratio A B: A / B by CPU time and by wall-clock time, for "A is x times B".
ratio() {
  awk -v a="$1" -v b="$2" 'BEGIN { split(a, x, " "); split(b, y, " "); printf "%.2f (wall clock %.2f)", x[2] / y[2], x[1] / y[1] }'
}

raw_mb=$(mb "$scratch/raw.jsonl")
ev_mb=$(mb "$scratch/events.jsonl")
echo "insights $("$bin" --version | cut -d' ' -f2), $(nproc) cores, $reps repetitions of ${#captures[@]} captures"
t_convert=$(best_of "$bin" --no-timestamp "$scratch/raw.jsonl")
report "convert raw.jsonl" "$raw_mb" "$t_convert"
t_passthrough=$(best_of "$bin" --no-timestamp "$scratch/events.jsonl")
report "convert events.jsonl (passthrough)" "$ev_mb" "$t_passthrough"
t_raw=$(best_of "$bin" reduce "$scratch/raw.jsonl")
report "reduce raw.jsonl (convert + reduce)" "$raw_mb" "$t_raw"
t_ev=$(best_of "$bin" reduce "$scratch/events.jsonl")
report "reduce events.jsonl" "$ev_mb" "$t_ev"
t_sum=$(best_of "$bin" reduce --view summary "$scratch/events.jsonl")
report "reduce --view summary events.jsonl" "$ev_mb" "$t_sum"
state_mb=$("$bin" reduce "$scratch/events.jsonl" | wc -c | awk '{ printf "%.1f", $1 / 1e6 }')
echo "state written: $state_mb MB; peak memory: reduce events.jsonl $(peak_mb "$bin" reduce "$scratch/events.jsonl") MB," \
  "reduce --view summary $(peak_mb "$bin" reduce --view summary "$scratch/events.jsonl") MB," \
  "convert $(peak_mb "$bin" --no-timestamp "$scratch/raw.jsonl") MB"
echo "reduce/convert throughput by CPU time: raw $(ratio "$t_convert" "$t_raw")," \
  "normalized $(ratio "$t_passthrough" "$t_ev") (vs passthrough)," \
  "normalized summary $(ratio "$t_passthrough" "$t_sum")"

if [ -n "$base" ]; then
  t_base_raw=$(best_of "$base" reduce "$scratch/raw.jsonl")
  report "BASE reduce raw.jsonl" "$raw_mb" "$t_base_raw"
  t_base_ev=$(best_of "$base" reduce "$scratch/events.jsonl")
  report "BASE reduce events.jsonl" "$ev_mb" "$t_base_ev"
  # Times read from the clock (converted raw lines) differ from run to run; nothing else may.
  # With faketime(1) the clock stands still and the states must be the same bytes.
  untimed() { sed -E 's/"20[0-9-]+T[0-9:.]+Z"/T/; s/"durationMs": [0-9]+/D/'; }
  same=yes
  cmp -s <("$bin" reduce "$scratch/events.jsonl") <("$base" reduce "$scratch/events.jsonl") || same=no
  if command -v faketime > /dev/null; then
    frozen() { faketime -f '2026-01-01 00:00:00' "$@"; }
    cmp -s <(frozen "$bin" reduce "$scratch/raw.jsonl") <(frozen "$base" reduce "$scratch/raw.jsonl") ||
      same=no
  else
    cmp -s <("$bin" reduce "$scratch/raw.jsonl" | untimed) <("$base" reduce "$scratch/raw.jsonl" | untimed) ||
      same=no
  fi
  echo "speed-up over BASE by CPU time: reduce raw $(ratio "$t_base_raw" "$t_raw")," \
    "reduce normalized $(ratio "$t_base_ev" "$t_ev"); same states: $same"
fi
