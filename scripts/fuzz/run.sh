#!/bin/sh
# Fuzz campaign (make fuzz): builds the libFuzzer binaries, runs every target (or FUZZ_TARGETS)
# one at a time for FUZZ_SECONDS (default 60) or FUZZ_RUNS executions, merges new inputs into
# Fuzz/corpus/<target> (-merge=1, so it stays minimal; FUZZ_MERGE=0 to leave it), and prints one
# line per target. Findings (crash/leak/oom/timeout inputs) go to $FUZZ_FINDINGS
# (default $FUZZ_SCRATCH/fuzz-findings, outside the repo); exit 1 if there is any, or if a
# target did not run (libFuzzer failed without saving an input, or executed nothing).
#   FUZZ_SECONDS=600 scripts/fuzz/run.sh
#   FUZZ_RUNS=10000000 FUZZ_TARGETS="message json" scripts/fuzz/run.sh
set -eu
cd "$(dirname "$0")/../.."
SCRATCH=${FUZZ_SCRATCH:-/tmp/scratch-fuzz}
FINDINGS=${FUZZ_FINDINGS:-$SCRATCH/fuzz-findings}
SECONDS_EACH=${FUZZ_SECONDS:-60}
RUNS=${FUZZ_RUNS:-}
MERGE=${FUZZ_MERGE:-1}
RSS=${FUZZ_RSS_MB:-2048}
MALLOC=${FUZZ_MALLOC_MB:-256}

if [ -z "${FUZZ_SKIP_BUILD:-}" ]; then
    BINS=$(scripts/fuzz/build.sh)
else
    BINS="$SCRATCH/build/release/carkey-fuzz
$SCRATCH/agent/carkey-agent-fuzz"
fi
LIB_BIN=$(echo "$BINS" | sed -n 1p)
AGENT_BIN=$(echo "$BINS" | sed -n 2p)
TARGETS=${FUZZ_TARGETS:-"$(ls Fuzz/corpus)"}

mkdir -p "$FINDINGS" "$SCRATCH/logs"
# Only this run's findings count; earlier ones stay in $FINDINGS for reference.
marker="$SCRATCH/logs/run-started"; touch "$marker"
total_findings=0
not_run=0
printf '%-22s %12s %9s %7s %7s %7s %9s\n' target execs exec/s cov ft corpus findings
for target in $TARGETS; do
    case "$target" in agent-*) bin=$AGENT_BIN ;; *) bin=$LIB_BIN ;; esac
    case "$target" in
        json|board-file|agent-config|mqtt-inbound|signed-config|revocation-list) maxlen=9000 ;;
        *) maxlen=2048 ;;
    esac
    work="$SCRATCH/work/$target"; log="$SCRATCH/logs/$target.log"
    rm -rf "$work"; mkdir -p "$work" "$FINDINGS/$target"
    limit="-max_total_time=$SECONDS_EACH"
    [ -n "$RUNS" ] && limit="-runs=$RUNS"
    # libFuzzer exits non-zero on a finding; the line below still reports it.
    # SWIFT_BACKTRACE off: Swift's crash backtracer trips ASan ("wild pointer") after an abort.
    status=0
    SWIFT_BACKTRACE=enable=no CARKEY_FUZZ_TARGET=$target "$bin" $limit -max_len=$maxlen -timeout=10 \
        -rss_limit_mb="$RSS" -malloc_limit_mb="$MALLOC" -print_final_stats=1 \
        -artifact_prefix="$FINDINGS/$target/" "$work" "Fuzz/corpus/$target" >"$log" 2>&1 || status=$?
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
    ft=$(grep -o 'ft: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
    if [ "$MERGE" = 1 ]; then
        merged="$SCRATCH/merged/$target"; rm -rf "$merged"; mkdir -p "$merged"
        if SWIFT_BACKTRACE=enable=no CARKEY_FUZZ_TARGET=$target "$bin" -merge=1 -max_len=$maxlen "$merged" "Fuzz/corpus/$target" "$work" \
               >"$SCRATCH/logs/$target.merge.log" 2>&1 && [ -n "$(ls "$merged")" ]; then
            # The merge keeps what adds coverage; seeds kept for a finding (regression-*) stay
            # whatever the merge thinks of them, so make test's smoke keeps replaying them.
            find "Fuzz/corpus/$target" -maxdepth 1 -type f ! -name 'regression-*' -delete
            cp "$merged"/* "Fuzz/corpus/$target/"
        fi
    fi
    corpus=$(ls "Fuzz/corpus/$target" | wc -l)
    new=$(find "$FINDINGS/$target" -maxdepth 1 -newer "$marker" \( -name 'crash-*' -o -name 'leak-*' -o -name 'oom-*' -o -name 'timeout-*' \))
    found=$(echo "$new" | grep -c . || true)
    total_findings=$((total_findings + found))
    printf '%-22s %12s %9s %7s %7s %7s %9s\n' "$target" "${execs:-?}" "${speed:-?}" "${cov:-?}" "${ft:-?}" "$corpus" "$found"
    [ "$found" = 0 ] || echo "$new" | sed 's#^#    #'
    # A target that cannot start (missing binary, unknown name, a crash before the first input,
    # an unreadable corpus) leaves no input behind: without this it would pass with "?" columns.
    if [ "$found" = 0 ] && { [ "$status" != 0 ] || [ "${execs:-0}" = 0 ]; }; then
        not_run=$((not_run + 1))
        echo "    did not run: exit status $status, ${execs:-no} executions; end of $log:"
        tail -5 "$log" | sed 's#^#      #'
    fi
done
[ "$total_findings" = 0 ] || echo "fuzz: $total_findings finding(s) under $FINDINGS (logs in $SCRATCH/logs)"
[ "$not_run" = 0 ] || echo "fuzz: $not_run target(s) did not run (logs in $SCRATCH/logs)"
[ "$total_findings" = 0 ] && [ "$not_run" = 0 ] || exit 1
