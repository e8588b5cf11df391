# Sourced by the test scripts that run named steps: step NAME COMMAND...
# runs the command with its output in $tmp/log, prints "ok: NAME" or
# "FAILED: NAME" with the log's tail, and counts into $passed and $failed
# (the caller sets tmp, passed and failed).
step() {
    name=$1; shift
    if "$@" >"$tmp/log" 2>&1; then
        passed=$((passed + 1))
        echo "ok: $name"
    else
        failed=$((failed + 1))
        echo "FAILED: $name"
        tail -n 20 "$tmp/log" | sed 's/^/    /'
    fi
}
