# Sourced by Benchmarks/run-check.sh, Benchmarks/run-daemon-memory.sh and Benchmarks/run-five-exchanges.sh.
#   release_binary
# Sets $repo and $bin: the release binary as README.md installs it, built now ($PRICEALERT_BIN
# names another build instead).
release_binary() {
    repo=$(cd "$(dirname "$0")/.." && pwd)
    if [ -n "$PRICEALERT_BIN" ]; then
        bin=$(cd "$(dirname "$PRICEALERT_BIN")" && pwd)/$(basename "$PRICEALERT_BIN")
    else
        swift build -c release --static-swift-stdlib --product pricealert --package-path "$repo" >&2
        bin="$repo/.build/release/pricealert"
    fi
}

#   prepare RULES SNAPSHOTS
# Builds the release binary as README.md installs it ($bin; $PRICEALERT_BIN names another build), makes a
# temporary folder ($dir, removed on exit unless the caller sets its own trap) and works in it: generates the rules and prices (generate.py; the
# caller's environment passes through), then fills the state folder st/ with one `check` over
# the day of minute prices, so every symbol has its full 24 h history (not timed).
prepare() {
    release_binary
    dir=$(mktemp -d)
    trap 'cd /; rm -rf "$dir"' EXIT
    python3 "$repo/Benchmarks/Check/generate.py" "$dir" "$1" "$2"
    cd "$dir"
    "$bin" check --rules rules.json --ticks day.jsonl --markets "$repo/Samples/btse-markets.json" --state st >/dev/null
}
