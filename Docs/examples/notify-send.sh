#!/bin/sh
# pricealert exec sink: a desktop notification through notify-send (libnotify).
#
#   "desktop": { "type": "exec", "command": ["/path/to/notify-send.sh"], "timeout": "5s" }
#
# pricealert runs this with the alert JSON on stdin (unused here) and PRICEALERT_* variables.
# notify-send needs the desktop session's DBUS_SESSION_BUS_ADDRESS, so run pricealert in that
# session (e.g. a systemd --user service). Exit status: notify-send's (non-zero is retried;
# 127, "notify-send not installed", is permanent).
set -u
command -v notify-send >/dev/null 2>&1 || { echo "notify-send: not found (install libnotify-bin)" >&2; exit 127; }
exec notify-send --app-name=pricealert --urgency=normal \
  "pricealert: $PRICEALERT_RULE $PRICEALERT_SYMBOL" \
  "$PRICEALERT_MESSAGE
price $PRICEALERT_PRICE at $PRICEALERT_TIME"
