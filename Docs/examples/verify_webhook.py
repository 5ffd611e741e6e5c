#!/usr/bin/env python3
"""Verify a signed pricealert webhook (Standard Webhooks, https://www.standardwebhooks.com).

Use verify() in your receiver, or run it by hand:

    WEBHOOK_SECRET=... python3 verify_webhook.py WEBHOOK_ID WEBHOOK_TIMESTAMP WEBHOOK_SIGNATURE < body

Exit status 0 when the signature is valid and fresh, 1 otherwise.
"""
import base64
import hashlib
import hmac
import os
import sys
import time

TOLERANCE_SECONDS = 5 * 60


def key_bytes(secret: str) -> bytes:
    """`whsec_<base64>` is the Standard Webhooks form; anything else is the raw UTF-8 secret."""
    if secret.startswith("whsec_"):
        return base64.b64decode(secret[len("whsec_"):])
    return secret.encode("utf-8")


def verify(secret: str, webhook_id: str, timestamp: str, signature_header: str, body: bytes,
           now=None) -> bool:
    """True when one of the `v1,` signatures matches and the timestamp is within 5 minutes.

    Sign over the body exactly as received (bytes), before any JSON parsing.
    """
    now = time.time() if now is None else now
    try:
        if abs(now - int(timestamp)) > TOLERANCE_SECONDS:
            return False  # replayed or badly delayed
    except ValueError:
        return False
    signed = webhook_id.encode() + b"." + timestamp.encode() + b"." + body
    expected = base64.b64encode(hmac.new(key_bytes(secret), signed, hashlib.sha256).digest()).decode()
    for candidate in signature_header.split(" "):
        version, _, value = candidate.partition(",")
        if version == "v1" and hmac.compare_digest(value, expected):
            return True
    return False


if __name__ == "__main__":
    if len(sys.argv) != 4 or "WEBHOOK_SECRET" not in os.environ:
        sys.exit(__doc__)
    ok = verify(os.environ["WEBHOOK_SECRET"], sys.argv[1], sys.argv[2], sys.argv[3], sys.stdin.buffer.read())
    print("valid" if ok else "INVALID")
    sys.exit(0 if ok else 1)
