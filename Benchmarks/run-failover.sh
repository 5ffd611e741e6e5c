#!/bin/sh
# Failover time of two `pricealert run` instances on one PostgreSQL store (release build): the
# leader is killed with SIGKILL KILLS times (default 20) at seeded random moments while the
# Binance look-alike streams; prints, per kill and as median and maximum, the time from the kill
# to the standby's line saying it leads the source, and to the first webhook delivery after the
# kill. Needs Debian's postgresql (the server programs; no service is used). See
# Docs/performance.md#failover.
#   Benchmarks/run-failover.sh [KILLS] [SEED]      ($PRICEALERT_BIN: another build)
set -e
. "$(dirname "$0")/Check/prepare.sh"
release_binary
echo "# run-failover: $("$bin" --version 2>/dev/null | head -1); $(nproc) cores; $(uptime | sed 's/.*load/load/')"
exec python3 "$repo/Benchmarks/Failover/failover.py" "$bin" "${1:-20}" "${2:-1}"
