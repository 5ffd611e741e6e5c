#!/bin/sh
# pricealert exec sink: one e-mail per alert through the local sendmail (postfix, exim,
# msmtp-mta and nullmailer all provide /usr/sbin/sendmail).
#
#   "mail": { "type": "exec", "command": ["/path/to/mail.sh", "oncall@example.com"], "timeout": "20s" }
#
# The recipient is the first argument. The message is PRICEALERT_MESSAGE; the alert's JSON
# (read from stdin) is appended so filters and people can see every field. Exit status:
# sendmail's (non-zero is retried); 127 when sendmail is not installed (permanent).
set -u
to="${1:?usage: mail.sh RECIPIENT}"
sendmail=$(command -v sendmail || echo /usr/sbin/sendmail)
[ -x "$sendmail" ] || { echo "sendmail: not found (install an MTA such as msmtp-mta)" >&2; exit 127; }
event=$(cat)
{
  printf 'To: %s\n' "$to"
  printf 'Subject: [pricealert] %s %s\n' "$PRICEALERT_RULE" "$PRICEALERT_SYMBOL"
  printf 'Message-ID: <%s@pricealert>\n' "$(printf '%s' "$PRICEALERT_ID" | tr -c 'A-Za-z0-9.-' '_')"
  printf 'Content-Type: text/plain; charset=utf-8\n\n'
  printf '%s\n\nprice %s, %s, at %s\n\n%s\n' "$PRICEALERT_MESSAGE" "$PRICEALERT_PRICE" \
    "$PRICEALERT_CONDITION" "$PRICEALERT_TIME" "$event"
} | "$sendmail" -t -i
