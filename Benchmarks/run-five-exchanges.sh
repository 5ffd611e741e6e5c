#!/bin/sh
# One daemon following five exchanges with about 3 000 spot markets: `pricealert exchange
# --markets N` serves look-alikes of Binance, Coinbase, Kraken, Bybit and OKX with N spot markets
# each (default 600: 3 000 in all) on loopback, and `pricealert run` (release build) follows all
# five with one market-wide 24-hour `change` rule (a `match` rule over every market of every
# source, its history filled from candles beside the feeds). Reports the time from the
# daemon's start until the last of its five feeds has subscribed its markets (each feed's
# `connected to …: N markets subscribed` line), and the daemon's peak RSS over SECONDS
# (default 60). See Docs/performance.md.
#   Benchmarks/run-five-exchanges.sh [N] [SECONDS]      ($PRICEALERT_BIN: another build)
set -e
per=${1:-600}
seconds=${2:-60}
. "$(dirname "$0")/Check/prepare.sh"
release_binary
dir=$(mktemp -d)
cleanup() {
    set +e
    [ -n "$daemon" ] && kill "$daemon" 2>/dev/null
    [ -n "$exchange" ] && kill "$exchange" 2>/dev/null && wait "$exchange"
    cd /; rm -rf "$dir"
}
trap cleanup EXIT
cd "$dir"
"$bin" exchange --port 0 --markets "$per" 2> exchange.log &
exchange=$!
while ! grep -q "listening on" exchange.log; do sleep 0.1; done
port=$(sed -n 's/.*listening on http:\/\/127.0.0.1:\([0-9]*\).*/\1/p' exchange.log | head -1)
cat > rules.json <<JSON
{
  "version": 3,
  "sources": {
    "binance":  { "type": "binance",  "endpoint": "http://127.0.0.1:$port/binance" },
    "coinbase": { "type": "coinbase", "endpoint": "http://127.0.0.1:$port/coinbase" },
    "kraken":   { "type": "kraken",   "endpoint": "http://127.0.0.1:$port/kraken" },
    "bybit":    { "type": "bybit",    "endpoint": "http://127.0.0.1:$port/bybit" },
    "okx":      { "type": "okx",      "endpoint": "http://127.0.0.1:$port/okx" }
  },
  "rules": [
    { "id": "any-coin-24h-move", "match": { "active": true },
      "when": { "change": { "window": "24h", "above": 8 } }, "cooldown": "1h" }
  ]
}
JSON
"$bin" validate rules.json >/dev/null
start=$(date +%s%N)
/usr/bin/time -f "peak RSS %M KiB, wall %e s, user %U s, sys %S s" -o time.txt \
    "$bin" run --rules rules.json --state st --duration "${seconds}s" 2> run.log > alerts.jsonl &
daemon=$!
subscribed_sources() {
    grep 'markets subscribed' run.log | grep -oE '(binance|coinbase|kraken|bybit|okx): connected' | sort -u | wc -l
}
until [ "$(subscribed_sources)" -ge 5 ]; do
    if ! kill -0 "$daemon" 2>/dev/null; then cat run.log; exit 1; fi
    sleep 0.01
done
subscribed=$(date +%s%N)
wait "$daemon" || true
daemon=
grep 'markets subscribed' run.log
# Anything the daemon warned about (reconnects, failed candle requests), at most 10 lines.
grep -E ' (notice|warning|error) ' run.log | head -10
grep -E '^run:|run: ' run.log | tail -1
echo "markets per exchange=$per, in all $((per * 5)); alerts $(wc -l < alerts.jsonl)"
echo "start to every market subscribed: $(( (subscribed - start) / 1000000 )) ms"
cat time.txt
kill "$exchange" && wait "$exchange" || true
exchange=
tail -1 exchange.log      # the REST requests include the candle requests of the backfill
