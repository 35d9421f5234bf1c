"""Shamir secret sharing of 32-byte secrets over the prime field of p = 2**521 - 1.

`split(secret, parties, threshold)` draws a random polynomial f of degree
threshold - 1 with f(0) = secret (coefficients from the operating system's
CSPRNG) and returns the shares f(1), ..., f(parties); any `threshold` of them
give the secret back by Lagrange interpolation at 0 (`combine`), and fewer
are jointly uniform, independent of the secret (Shamir 1979).  Secure
aggregation uses it to share each party's self-mask seed (Bonawitz et al.
2017, "Practical secure aggregation for privacy-preserving machine learning").
"""
from __future__ import annotations

import secrets
from collections.abc import Mapping

from privbandit.accounting.errors import invalid
from privbandit.accounting.validation import check_count

PRIME = 2**521 - 1  # a Mersenne prime: every 32-byte secret is a field element
SECRET_BYTES = 32


def split(secret: bytes, parties: int, threshold: int) -> tuple[int, ...]:
    """Shares f(1), ..., f(parties) of a `threshold`-out-of-`parties` sharing of `secret`."""
    if not isinstance(secret, (bytes, bytearray)) or len(secret) != SECRET_BYTES:
        raise invalid("secret", secret, f"{SECRET_BYTES} bytes")
    parties = check_count("parties", parties)
    threshold = check_count("threshold", threshold)
    if threshold > parties:
        raise invalid("threshold", threshold, f"<= parties = {parties}")
    coefficients = [int.from_bytes(secret, "big")] + [
        secrets.randbelow(PRIME) for _ in range(threshold - 1)]
    shares = []
    for x in range(1, parties + 1):
        y = 0
        for c in reversed(coefficients):  # Horner
            y = (y * x + c) % PRIME
        shares.append(y)
    return tuple(shares)


def combine(shares: Mapping[int, int], threshold: int) -> bytes:
    """The secret from at least `threshold` shares {x: f(x)} (x = party index + 1)."""
    threshold = check_count("threshold", threshold)
    points = sorted(shares.items())[:threshold]
    if len(points) < threshold:
        raise invalid("shares", f"{len(points)} shares", f"at least threshold = {threshold}")
    secret = 0
    for i, (xi, yi) in enumerate(points):
        num = den = 1
        for j, (xj, _) in enumerate(points):
            if j != i:
                num = num * -xj % PRIME
                den = den * (xi - xj) % PRIME
        secret = (secret + yi * num * pow(den, -1, PRIME)) % PRIME
    if secret >= 2 ** (8 * SECRET_BYTES):
        raise invalid("shares", "shares of different sharings", "shares of one 32-byte secret")
    return secret.to_bytes(SECRET_BYTES, "big")
