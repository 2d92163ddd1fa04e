#!/usr/bin/env bash
# Throughput of `insights validate` next to `insights convert`, on a large generated log.
#
#   benches/validate.sh [MB]      # default 200
#
# Builds the release binary, then writes into a scratch directory (under $TMPDIR, /tmp by
# default; removed at the end):
#   raw.jsonl     the Claude captures of testdata/claude*/ repeated to about MB megabytes; each
#                 repetition gets its own session, line, tool and request ids, so the log is
#                 valid (no duplicate ids or calls) and has no findings
#   events.jsonl  raw.jsonl converted (`insights --no-timestamp`)
#   raw-parts/    the same repetitions spread over 8 files (raw.jsonl is their concatenation)
#   parts/        each of raw-parts/ converted, for the parallel case
# and prints MB/s for each command (input bytes / wall-clock seconds, best of 3 runs).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

target_mb=${1:-200}
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

# Repetition k goes to raw-parts/(k mod 8).jsonl, with its ids rewritten so that every session,
# line, tool call and permission request stays unique (SDK control lines keep their empty
# session id).
mkdir "$scratch/raw-parts" "$scratch/parts"
for ((k = 0; k < reps; k++)); do cat "${captures[@]}"; done |
  awk -v lines_per_rep="$(cat "${captures[@]}" | wc -l)" -v dir="$scratch/raw-parts" '
    {
      k = int(n / lines_per_rep)
      n++
      gsub(/"session_id":""/, "\001")
      gsub(/"session_id":"/, "\"session_id\":\"r" k "-")
      gsub(/\001/, "\"session_id\":\"\"")
      gsub(/"uuid":"/, "\"uuid\":\"r" k "-")
      gsub(/"request_id":"/, "\"request_id\":\"r" k "-")
      gsub(/toolu_/, "toolu_r" k "_")
      print > (dir "/" (k % 8) ".jsonl")
    }'
cat "$scratch"/raw-parts/*.jsonl > "$scratch/raw.jsonl"
"$bin" --no-timestamp "$scratch/raw.jsonl" > "$scratch/events.jsonl"
for f in "$scratch"/raw-parts/*.jsonl; do
  "$bin" --no-timestamp "$f" > "$scratch/parts/$(basename "$f")"
done

mb() { awk -v b="$(cat "$@" | wc -c)" 'BEGIN { printf "%.1f", b / 1e6 }'; }

# best_of CMD...: "WALL CPU" in seconds for the run with the least wall-clock time of 3; CPU is
# user + system time, which a busy machine disturbs less than wall-clock time.
best_of() {
  local best= bcpu= t wall u s
  for _ in 1 2 3; do
    t=$({ TIMEFORMAT='%R %U %S'; time "$@" > /dev/null 2>&1 || true; } 2>&1)
    read -r wall u s <<< "$t"
    if [ -z "$best" ] || awk -v t="$wall" -v b="$best" 'BEGIN { exit !(t < b) }'; then
      best=$wall
      bcpu=$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%.3f", u + s }')
    fi
  done
  echo "$best $bcpu"
}

report() { # NAME MB "WALL CPU"
  local wall cpu
  read -r wall cpu <<< "$3"
  awk -v n="$1" -v mb="$2" -v w="$wall" -v c="$cpu" 'BEGIN {
    printf "%-42s %7.1f MB %6.2f s %7.1f MB/s   cpu %6.2f s %7.1f MB/s\n", n, mb, w, mb / w, c, mb / c
  }'
}

raw_mb=$(mb "$scratch/raw.jsonl")
ev_mb=$(mb "$scratch/events.jsonl")
echo "insights $("$bin" --version | cut -d' ' -f2), $(nproc) cores"
t_convert=$(best_of "$bin" --no-timestamp "$scratch/raw.jsonl")
report "convert raw.jsonl" "$raw_mb" "$t_convert"
t_passthrough=$(best_of "$bin" --no-timestamp "$scratch/events.jsonl")
report "convert events.jsonl (passthrough)" "$ev_mb" "$t_passthrough"
t_raw=$(best_of "$bin" validate "$scratch/raw.jsonl")
report "validate raw.jsonl (convert + check)" "$raw_mb" "$t_raw"
t_ev=$(best_of "$bin" validate "$scratch/events.jsonl")
report "validate events.jsonl" "$ev_mb" "$t_ev"
t_parts=$(best_of "$bin" validate "$scratch/parts")
report "validate parts/ (8 files, in parallel)" "$(mb "$scratch"/parts/*.jsonl)" "$t_parts"
echo "findings: $("$bin" validate "$scratch/raw.jsonl" | tail -1) (raw.jsonl)"
echo "findings: $("$bin" validate "$scratch/parts" | tail -1) (parts/)"
wall() { echo "${1%% *}"; }
awk -v c="$(wall "$t_convert")" -v v="$(wall "$t_raw")" -v p="$(wall "$t_passthrough")" \
    -v e="$(wall "$t_ev")" -v q="$(wall "$t_parts")" 'BEGIN {
  printf "validate/convert throughput (wall clock): raw %.2f, normalized %.2f (vs passthrough), normalized in parallel %.2f\n", c / v, p / e, p / q
}'
