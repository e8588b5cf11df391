#!/bin/sh
# Builds each libFuzzer target tests/fuzz/fuzz_NAME.c with clang (plus the
# library sources it lists on a "deso-fuzz-sources:" line), runs it for
# $FUZZ_SECONDS (default 60) from its seed corpus tests/fuzz/corpus/NAME,
# and reports the inputs executed.  New inputs go to a scratch folder, never
# into the repository.  A crash fails the run and leaves its input in
# $BUILD/fuzz/NAME/ to be turned into a regression test.
set -u
build=${1:-build}
seconds=${FUZZ_SECONDS:-60}
CLANG=${CLANG:-clang}
flags="-std=c11 -D_POSIX_C_SOURCE=200809L -g -O1 -I. -Iplacement -Wall -Wextra -Werror
       -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined"
passed=0
failed=0
for src in tests/fuzz/fuzz_*.c; do
    name=$(basename "$src" .c | sed 's/^fuzz_//')
    out=$build/fuzz/$name
    mkdir -p "$out/new"
    srcs=$(sed -n "s/.*deso-fuzz-sources:\([^*]*\).*/\1/p" "$src" | head -1)
    # shellcheck disable=SC2086
    if ! $CLANG $flags -o "$out/fuzz" "$src" $srcs; then
        echo "fuzz $name: build failed"; failed=$((failed + 1)); continue
    fi
    echo "== fuzz $name for ${seconds}s"
    if "$out/fuzz" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
           -artifact_prefix="$out/" -print_final_stats=1 \
           "$out/new" "tests/fuzz/corpus/$name" >"$out/log" 2>&1; then
        runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$out/log")
        echo "fuzz $name: ${runs:-?} inputs executed, no crash"
        passed=$((passed + 1))
    else
        tail -30 "$out/log"
        echo "fuzz $name: CRASH, input saved under $out/"
        failed=$((failed + 1))
    fi
done
echo "fuzz: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
