"""What the Python client checks share: a failed check exits non-zero, a passed one prints what it checked."""

import sys


def fail(message):
    print(f"FAIL: {message}", file=sys.stderr)
    sys.exit(1)


def check(condition, message):
    if not condition:
        fail(message)
    print(f"ok: {message}")
