#!/usr/bin/env bash
# The cost of `--redact`: convert throughput with and without it, on a large generated log.
#
#   benches/redact.sh [MB]      # default 200
#
# Builds the release binary, then writes into a scratch directory (under $TMPDIR, /tmp by
# default; removed at the end) every provider capture of testdata/ repeated to about MB
# megabytes (plain.jsonl), and the same with a fake secret of each kind in one line of 20
# (secrets.jsonl), and prints MB/s for `insights --no-timestamp` without and with --redact
# (input bytes / CPU seconds, best of 3 runs), and the ratio of the CPU times.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

target_mb=${1:-200}
cargo build --release --quiet
bin=$PWD/target/release/insights

scratch=$(mktemp -d "${TMPDIR:-/tmp}/insights-bench.XXXXXX")
trap 'rm -rf "$scratch"' EXIT

captures=()
for f in testdata/{claude,claude-sdk,codex-exec,codex-app-server,gemini,acp-claude,acp-gemini,qwen,opencode,amp,cursor,aceclaw}/*.jsonl; do
  case $f in *.events.jsonl) ;; *) [ -f "$f" ] && captures+=("$f") ;; esac
done
one_rep=$(cat "${captures[@]}" | wc -c)
reps=$(( target_mb * 1000000 / one_rep + 1 ))
for ((k = 0; k < reps; k++)); do cat "${captures[@]}"; done > "$scratch/plain.jsonl"

# One line in 20 gets a user prompt full of fake secrets (none of them valid anywhere).
awk 'NR % 20 == 0 {
  print "{\"type\":\"user\",\"session_id\":\"s\",\"message\":{\"role\":\"user\",\"content\":\"key sk-ant-api03-Zq1vN8bT2mK9pL4wR7yZ1cF6hJ0dG5sA8eU3iO2nB7vM4xQ9tY6rW1kP0jH5g and sk-proj-Tq9fR2tY7uI1oP3aS6dF1gH8jK5lZ0xC4vB9nM2qW7eR3tY6 AIzaSyB1cD2eF3gH4iJ5kL6mN7oP8qR9sT0uV1w ghp_R4nd0mL00k1ngT0k3nV4lu3F0rT3st1ng00 AKIAZ7EXAMPLEKEY0001 xoxb-111122223333-444455556666-AbCdEfGh Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.abc password=hunter2 postgres://u:pw@db/x\"}}"
} { print }' "$scratch/plain.jsonl" > "$scratch/secrets.jsonl"

best() { # best CPU seconds (user + system) of 3 runs of: insights ARGS FILE > /dev/null
  # CPU time, not wall-clock time, so that other load on the machine matters less.
  local file=$1; shift
  local best=
  for _ in 1 2 3; do
    local s
    s=$( { TIMEFORMAT='%3U + %3S'; time "$bin" --no-timestamp "$@" "$file" > /dev/null; } 2>&1 | bc -l)
    if [ -z "$best" ] || (( $(echo "$s < $best" | bc -l) )); then best=$s; fi
  done
  echo "$best"
}

for input in plain secrets; do
  f=$scratch/$input.jsonl
  mb=$(echo "$(wc -c < "$f") / 1000000" | bc -l)
  a=$(best "$f")
  b=$(best "$f" --redact)
  printf '%-8s %6.0f MB  convert %6.1f MB/s  --redact %6.1f MB/s  ratio %.3f\n' \
    "$input" "$mb" "$(echo "$mb / $a" | bc -l)" "$(echo "$mb / $b" | bc -l)" "$(echo "$b / $a" | bc -l)"
done
