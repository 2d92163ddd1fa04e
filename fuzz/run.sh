#!/usr/bin/env bash
# Runs every cargo-fuzz target for SECONDS (default 60) each, JOBS (default 2) at a time, seeded
# with testdata/ (fuzz/corpus/TARGET/) and the dictionary fuzz/insights.dict. Crashes go to
# fuzz/artifacts/TARGET/; each target's log to fuzz/logs/TARGET.log; the exec counts are printed.
#
#   fuzz/run.sh [SECONDS] [TARGET]...
#
# Needs cargo-fuzz (`cargo install cargo-fuzz`). Built without a sanitizer (`-s none`): the code
# is safe Rust, debug assertions stay on, and this builds on the stable toolchain (ASan needs
# nightly: `RUSTC_BOOTSTRAP=1 cargo fuzz run TARGET`).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
secs=${1:-60}
shift || true
jobs=${JOBS:-2}
cargo fuzz build -O -s none
cargo run -q --release --no-default-features --features stdfuzz --bin stdfuzz -- --write-corpus
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    # stdfuzz is the std-only driver (a [[bin]] of this crate), not a cargo-fuzz target.
    mapfile -t targets < <(cargo fuzz list | grep -vx stdfuzz)
fi
mkdir -p logs
bin=target/x86_64-unknown-linux-gnu/release
printf '%s\n' "${targets[@]}" | xargs -P "$jobs" -I{} sh -c "
    mkdir -p artifacts/{}
    $bin/{} corpus/{} -max_len=2048 -timeout=10 -rss_limit_mb=4096 -close_fd_mask=2 \
        -dict=insights.dict -max_total_time=$secs -print_final_stats=1 \
        -artifact_prefix=artifacts/{}/ > logs/{}.log 2>&1 || echo '{}: FAILED, see fuzz/logs/{}.log'
"
status=0
for t in "${targets[@]}"; do
    n=$(grep -o 'stat::number_of_executed_units: [0-9]*' "logs/$t.log" | grep -o '[0-9]*$' || echo '?')
    c=$(find "artifacts/$t" -type f | wc -l)
    echo "$t: $n executions, $c artifacts"
    [ "$c" -eq 0 ] || status=1
done
exit $status
