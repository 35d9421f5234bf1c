"""Orthogonal masks (O3M): hide each party's features behind a random rotation.

A mask generator draws a Haar-random orthogonal d x d matrix Q and splits its
columns by the parties' feature widths d_1 + ... + d_M = d.  Party j receives
only its column block Q^j (d x d_j) and sends Q^j x^j instead of its features
x^j; the active party adds the parts into Q x.  Because Q is orthogonal,
inner products and norms of full vectors are unchanged, so a linear bandit run
on masked contexts takes exactly the same decisions as one run on the plain
contexts (seed 003, Section 4.2 "O3M", Algorithm 1 VFUCB steps 2 and 5).
Blocks travel to the parties sealed with `privbandit.mechanisms.sealing`.

Shapes: contexts of party j are (..., K, d_j) (any leading batch axes); masked
parts and their sum are (..., K, d).
"""
from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field

import numpy as np

from privbandit.accounting.events import NotDifferentiallyPrivate
from privbandit.accounting.validation import as_array

from ._checks import check_rng
from .errors import MaskError, ShapeError

# Largest allowed entry of |Q^T Q - I| (the validation tolerance).
ORTHOGONALITY_TOLERANCE = 1e-10

MASK_EVENT = NotDifferentiallyPrivate(
    "orthogonal mask (O3M, seed 003): hides feature coordinates from semi-honest, "
    "non-colluding parties; norms and inner products survive; not differential privacy"
)


def _orthonormality_error(columns: np.ndarray) -> float:
    gram = columns.T @ columns
    return float(np.max(np.abs(gram - np.eye(gram.shape[0])), initial=0.0))


def _check_orthonormal(name: str, matrix: np.ndarray, claim: str, symbol: str) -> None:
    """Refuse a matrix with non-finite or non-real entries, or whose columns are not
    orthonormal to ORTHOGONALITY_TOLERANCE (the message says `name` must `claim`)."""
    if matrix.dtype.kind not in "iuf" or not np.all(np.isfinite(matrix)):
        raise MaskError(f"{name} must hold finite real numbers; got NaN, infinite or non-real")
    err = _orthonormality_error(matrix.astype(np.float64))
    if err > ORTHOGONALITY_TOLERANCE:
        raise MaskError(
            f"{name} must {claim} to {ORTHOGONALITY_TOLERANCE:g}; "
            f"got max |{symbol}^T {symbol} - I| = {err:.3g}"
        )


def _readonly(a: np.ndarray) -> np.ndarray:
    a = np.array(a, dtype=np.float64, copy=True, order="C")
    a.setflags(write=False)
    return a


def _check_widths(widths: object, dim: int | None = None) -> tuple[int, ...]:
    try:
        items = tuple(widths)  # type: ignore[arg-type]
    except TypeError:
        raise MaskError(
            f"widths must be a sequence of positive integers; got {widths!r}"
        ) from None
    ok = len(items) > 0 and all(
        isinstance(w, numbers.Integral) and not isinstance(w, bool) and w >= 1 for w in items
    )
    if not ok:
        raise MaskError(f"widths must be a non-empty sequence of integers >= 1; got {widths!r}")
    items = tuple(int(w) for w in items)
    if dim is not None and sum(items) != dim:
        raise MaskError(
            f"widths must sum to the mask dimension d={dim}; got {items!r} (sum {sum(items)})"
        )
    return items


def _check_contexts(contexts: object, width: int, party: str) -> np.ndarray:
    x = as_array(f"contexts of {party}", contexts)
    if x.dtype.kind not in "iuf":
        raise ShapeError(f"contexts of {party} must be real numbers; got dtype {x.dtype}")
    if x.ndim < 1 or x.shape[-1] != width:
        raise ShapeError(
            f"contexts of {party} must have shape (..., {width}) (its width d_j={width}); "
            f"got shape {x.shape}"
        )
    x = x.astype(np.float64, copy=False)
    if not np.isfinite(x).all():
        raise MaskError(f"contexts of {party} must be finite; got NaN or infinite entries")
    return x


@dataclass(frozen=True, eq=False)
class PartyMask:
    """What party j holds: its d x d_j column block of Q, and nothing else.

    Privacy guarantee
    -----------------
    Not differential privacy (`event` is `NotDifferentiallyPrivate`).  Relation:
    semi-honest, non-colluding parties; the adversary is the active party (or an
    eavesdropper) who sees Q^j x^j but not Q.  What is hidden: the coordinates
    of x^j, up to an unknown rotation.  What is not: ||Q^j x^j|| = ||x^j|| and
    every inner product <x^j, y^j> between two of the party's contexts; d_j
    linearly independent known (plaintext, masked) pairs recover Q^j exactly.
    Source: seed 003, Section 4.2 (O3M), Algorithm 1 step 5.
    """

    block: np.ndarray
    party: int = 0

    def __post_init__(self) -> None:
        b = as_array("block", self.block)
        if b.ndim != 2 or b.shape[1] < 1 or b.shape[0] < b.shape[1]:
            raise ShapeError(
                f"block must be a d x d_j matrix with d >= d_j >= 1; got shape {b.shape}"
            )
        _check_orthonormal("block", b, "have orthonormal columns", "B")
        object.__setattr__(self, "block", _readonly(b))
        # contiguous Q^j^T: x.dot of small batches is cheaper than x @ of a transposed view
        object.__setattr__(self, "_block_t", _readonly(np.ascontiguousarray(b.T)))

    @property
    def dim(self) -> int:
        """d, the width of masked vectors."""
        return self.block.shape[0]

    @property
    def width(self) -> int:
        """d_j, this party's number of features."""
        return self.block.shape[1]

    @property
    def event(self) -> NotDifferentiallyPrivate:
        return MASK_EVENT

    def mask(self, contexts: object, out: np.ndarray | None = None) -> np.ndarray:
        """Q^j x^j for every row: (..., K, d_j) -> (..., K, d).

        `out`: a C-contiguous float64 array of the result's shape to write into
        (e.g. a message buffer), else a new array.  Contexts that are not finite
        real numbers of width d_j are refused (`MaskError`, `ShapeError`); `out`
        may have been written before the refusal.
        """
        x = contexts
        if type(x) is np.ndarray and x.dtype == np.float64 and x.ndim >= 1 and (
                x.shape[-1] == self.width):
            # the usual input: masked first, checked through the result.  Every column of
            # Q^j is a unit vector, so a NaN or inf in x makes its rows of Q^j x non-finite,
            # and then the sum (one pass over a contiguous array); only then look closer
            y = self._product(x, out)
            if math.isfinite(y.sum()):
                return y
        x = _check_contexts(contexts, self.width, f"party {self.party}")
        return self._product(x, out)

    def _product(self, x: np.ndarray, out: np.ndarray | None) -> np.ndarray:
        """x Q^j^T for float64 contexts x (..., K, d_j), into `out` if given."""
        if out is None:
            return x.dot(self._block_t)
        if out.shape != x.shape[:-1] + (self.dim,) or out.dtype != np.float64 or not (
                out.flags.c_contiguous):
            raise ShapeError(f"out must be a C-contiguous float64 array of shape "
                             f"{x.shape[:-1] + (self.dim,)}; got {out.dtype} {out.shape}")
        return np.dot(x, self._block_t, out=out)


@dataclass(frozen=True, eq=False)
class OrthogonalMask:
    """A d x d orthogonal matrix Q split into column blocks, one per party.

    Build it with `OrthogonalMask.generate(widths, rng)`; the constructor
    validates a given Q (square, finite, Q^T Q = I to 1e-10) and the widths
    (positive integers summing to d).

    Privacy guarantee
    -----------------
    Not differential privacy: `event` is `NotDifferentiallyPrivate`, which every
    DP accountant refuses (record it with `Ledger.note`).  Relation and threat
    model: semi-honest, non-colluding parties; the generator is trusted and
    talks to each party over a sealed channel (`privbandit.mechanisms.sealing`).  Masking
    is lossless: sum_j Q^j x^j = Q x and Q^T (Q x) = x.  It preserves norms and
    inner products, so the active party learns ||x|| and <x, y> for every pair
    of contexts; d known plaintext/masked pairs recover Q (see the known-
    plaintext attack in `audits/`).  Source: seed 003 (Cao et al., Vertical
    Federated Linear Contextual Bandits), Section 4.2 (O3M), Algorithm 1.
    """

    q: np.ndarray
    widths: tuple
    # Contiguous per-party copies: matmul with a strided column slice of q skips BLAS.
    _parties: tuple = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        q = as_array("q", self.q)
        if q.ndim != 2 or q.shape[0] != q.shape[1] or q.shape[0] < 1:
            raise ShapeError(f"q must be a square d x d matrix; got shape {q.shape}")
        _check_orthonormal("q", q, "be orthogonal", "Q")
        object.__setattr__(self, "widths", _check_widths(self.widths, q.shape[0]))
        object.__setattr__(self, "q", _readonly(q))
        cuts = np.cumsum(self.widths)[:-1]
        object.__setattr__(self, "_parties", tuple(
            PartyMask(b, party=j) for j, b in enumerate(np.split(self.q, cuts, axis=1))
        ))

    @classmethod
    def generate(cls, widths: object, rng: np.random.Generator) -> "OrthogonalMask":
        """A Haar-random Q of dimension sum(widths), drawn from `rng`.

        QR of a standard Gaussian matrix, with each column's sign fixed by the
        sign of R's diagonal so the law is exactly Haar (Mezzadri 2007).
        """
        widths = _check_widths(widths)
        rng = check_rng(rng)
        d = sum(widths)
        q, r = np.linalg.qr(rng.standard_normal((d, d)))
        signs = np.where(np.diag(r) < 0, -1.0, 1.0)
        return cls(q * signs, widths)

    @property
    def dim(self) -> int:
        return self.q.shape[0]

    @property
    def parties(self) -> int:
        return len(self.widths)

    @property
    def offsets(self) -> tuple[int, ...]:
        """Column where each party's block starts, plus d at the end."""
        return tuple(int(o) for o in np.concatenate([[0], np.cumsum(self.widths)]))

    @property
    def event(self) -> NotDifferentiallyPrivate:
        return MASK_EVENT

    def _party(self, j: object) -> int:
        if isinstance(j, bool) or not isinstance(j, numbers.Integral) or not 0 <= j < self.parties:
            raise MaskError(f"party j must be an integer in [0, {self.parties}); got {j!r}")
        return int(j)

    def block(self, j: int) -> np.ndarray:
        """Q^j, the d x d_j columns of Q that belong to party j (read-only, contiguous)."""
        return self._parties[self._party(j)].block

    def party(self, j: int) -> PartyMask:
        """Party j's view: its block only, ready to mask its own contexts."""
        return self._parties[self._party(j)]

    def mask(self, j: int, contexts: object) -> np.ndarray:
        """Party j's masked part Q^j x^j: (..., K, d_j) -> (..., K, d)."""
        return self._parties[self._party(j)].mask(contexts)

    def mask_all(self, contexts: "list | tuple") -> np.ndarray:
        """sum_j Q^j x^j for the parties' contexts, in party order: equals Q x."""
        if not isinstance(contexts, (list, tuple)) or len(contexts) != self.parties:
            got = len(contexts) if isinstance(contexts, (list, tuple)) else contexts
            raise ShapeError(
                f"contexts must be a list of {self.parties} arrays, one per party; got {got!r}"
            )
        xs = [_check_contexts(x, w, f"party {j}") for j, (x, w) in
              enumerate(zip(contexts, self.widths, strict=True))]
        lead = {x.shape[:-1] for x in xs}
        if len(lead) != 1:
            raise ShapeError(
                f"contexts must share their leading shape (..., K); got {sorted(lead)}"
            )
        # the parties' own product (`PartyMask.mask`), so the sums match theirs bit for bit
        out = xs[0].dot(self._parties[0]._block_t)
        for x, party in zip(xs[1:], self._parties[1:], strict=True):
            out += x.dot(party._block_t)
        return out

    def unmask(self, masked: object) -> np.ndarray:
        """Q^T (Q x) = x: only the generator, who holds all of Q, can do this."""
        y = _check_contexts(masked, self.dim, "the masked batch")
        return y @ self.q


def sum_masked(parts: "list | tuple") -> np.ndarray:
    """The active party's step: add the parties' masked parts into Q x."""
    if not isinstance(parts, (list, tuple)) or not parts:
        raise ShapeError(f"parts must be a non-empty list of masked arrays; got {parts!r}")
    arrays = [as_array(f"parts[{j}]", p) for j, p in enumerate(parts)]
    kinds = {a.dtype for a in arrays if a.dtype.kind not in "iuf"}
    if kinds:
        raise ShapeError(f"parts must hold real numbers; got dtype {sorted(map(str, kinds))}")
    arrays = [a.astype(np.float64, copy=False) for a in arrays]
    shapes = {a.shape for a in arrays}
    if len(shapes) != 1:
        raise ShapeError(
            f"parts must all have the same shape (..., K, d); got shapes {sorted(shapes)}"
        )
    total = arrays[0].copy()
    for a in arrays[1:]:
        total += a
    if not np.all(np.isfinite(total)):
        raise MaskError("parts must be finite; got NaN or infinite entries")
    return total
