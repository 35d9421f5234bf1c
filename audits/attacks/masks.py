"""Attacks on orthogonal masks (O3M, seed 003): what masked traffic gives away.

Party j sends z = Q^j x for each of its contexts x (d_j features, z in R^d,
Q^j a d x d_j block with orthonormal columns).  The active party sees every
z.  Three attacks, each returning what it recovered (`MaskRecovery`):

- `known_plaintext(contexts, masked, method)`: from k known pairs (x_i, z_i),
  least squares (solve X B^T = Z) or orthogonal Procrustes (the matrix with
  orthonormal columns closest to fitting the pairs: U V^T from the SVD of
  Z^T X).  Exact once the known x_i span R^{d_j}, i.e. k >= d_j generic pairs.
- `pca_recovery(masked, known_sample)`: no pairs, only the traffic and an
  unpaired sample of plaintexts from the same population (the "known-sample"
  attack on multiplicative perturbation).  The traffic's covariance is
  Q^j Sigma Q^j^T, so its top d_j eigenvectors are Q^j times those of Sigma,
  which the attacker estimates from the sample; each eigenvector's sign is
  matched through the mean and skewness of the projections.  Works when Sigma
  has distinct eigenvalues and the population is not symmetric; with an
  isotropic population it still recovers span(Q^j) (`subspace_error`).
- `gram_leakage(masked)`: with nothing known, every norm and inner product of
  the party's contexts survives masking exactly (Q^j^T Q^j = I), so the
  contexts are known up to one rotation (`contexts_up_to_rotation`).

`recovery_curve` and `pca_curve` report reconstruction error against the
number of known pairs and of rounds observed for a fresh Haar mask.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from privbandit.accounting.errors import invalid
from privbandit.accounting.validation import check_count
from privbandit.mechanisms.errors import ShapeError
from privbandit.mechanisms.masks import OrthogonalMask

METHODS = ("lstsq", "procrustes")


@dataclass(frozen=True, eq=False)
class MaskRecovery:
    """A recovered block and, when the truth is supplied, how far it is from it.

    block (d, d_j): the estimate of Q^j.  observed: pairs (known-plaintext) or
    rounds of traffic (PCA).  block_error: max |estimate - Q^j| entry;
    subspace_error: sine of the largest principal angle between span(estimate)
    and span(Q^j); context_error: max |x_hat - x| / max |x| on held-out
    contexts decoded as x_hat = estimate^T z.  Errors are NaN without truth.
    """

    method: str
    observed: int
    block: np.ndarray
    block_error: float = float("nan")
    subspace_error: float = float("nan")
    context_error: float = float("nan")

    def scored(self, truth: np.ndarray, contexts: "np.ndarray | None" = None) -> "MaskRecovery":
        """A copy with errors measured against the true block (and held-out contexts)."""
        truth = np.asarray(truth, dtype=float)
        if truth.shape != self.block.shape:
            raise ShapeError(f"truth must have shape {self.block.shape}; got {truth.shape}")
        ctx_err = float("nan")
        if contexts is not None:
            x = _matrix("contexts", contexts, truth.shape[1])
            x_hat = (x @ truth.T) @ self.block
            ctx_err = float(np.max(np.abs(x_hat - x)) / max(np.max(np.abs(x)), 1e-300))
        return MaskRecovery(self.method, self.observed, self.block,
                            float(np.max(np.abs(self.block - truth))),
                            subspace_error(self.block, truth), ctx_err)

    def as_dict(self) -> dict:
        return {"method": self.method, "observed": self.observed,
                "block_error": self.block_error, "subspace_error": self.subspace_error,
                "context_error": self.context_error}


def _matrix(name: str, value: object, width: "int | None" = None) -> np.ndarray:
    a = np.asarray(value, dtype=float)
    if a.ndim != 2 or (width is not None and a.shape[1] != width):
        want = f"(n, {width})" if width is not None else "(n, width)"
        raise ShapeError(f"{name} must be a matrix of shape {want}; got shape {a.shape}")
    if not np.all(np.isfinite(a)):
        raise invalid(name, "an array with NaN/inf entries", "an array of finite numbers")
    return a


def known_plaintext(contexts: object, masked: object, method: str = "procrustes") -> MaskRecovery:
    """Recover Q^j from k known pairs: contexts (k, d_j), masked (k, d) = contexts @ Q^j.T."""
    x = _matrix("contexts", contexts)
    z = _matrix("masked", masked)
    if z.shape[0] != x.shape[0] or z.shape[1] < x.shape[1]:
        raise ShapeError(
            f"masked must have shape ({x.shape[0]}, d) with d >= d_j={x.shape[1]}; got {z.shape}"
        )
    if method == "lstsq":
        block = np.linalg.lstsq(x, z, rcond=None)[0].T
    elif method == "procrustes":
        u, _, vt = np.linalg.svd(z.T @ x, full_matrices=False)
        block = u @ vt
    else:
        raise invalid("method", method, f"one of {METHODS}")
    return MaskRecovery(method, x.shape[0], block)


def _moment_signature(projections: np.ndarray) -> np.ndarray:
    """Per column: (mean, skewness) of the projections; both flip sign with the axis."""
    mean = projections.mean(axis=0)
    centred = projections - mean
    sd = np.sqrt(np.mean(centred**2, axis=0))
    skew = np.mean(centred**3, axis=0) / np.maximum(sd, 1e-300) ** 3
    return np.stack([mean / np.maximum(sd, 1e-300), skew])


def pca_recovery(masked: object, known_sample: object) -> MaskRecovery:
    """Recover Q^j from traffic (T, d) and an unpaired plaintext sample (m, d_j)."""
    z = _matrix("masked", masked)
    x = _matrix("known_sample", known_sample)
    dj = x.shape[1]
    if z.shape[1] < dj or z.shape[0] < 2 or x.shape[0] < 2:
        raise ShapeError(
            f"need >= 2 rows of traffic (T, d >= {dj}) and of sample; got {z.shape}, {x.shape}"
        )
    vz = np.linalg.eigh(np.cov(z, rowvar=False))[1][:, ::-1][:, :dj]
    ux = np.linalg.eigh(np.atleast_2d(np.cov(x, rowvar=False)))[1][:, ::-1]
    agree = np.sum(_moment_signature(z @ vz) * _moment_signature(x @ ux), axis=0)
    signs = np.where(agree < 0, -1.0, 1.0)
    return MaskRecovery("pca", z.shape[0], (vz * signs) @ ux.T)


def subspace_error(estimate: np.ndarray, truth: np.ndarray) -> float:
    """Sine of the largest principal angle between the column spans (0: same span)."""
    qa = np.linalg.qr(np.asarray(estimate, dtype=float))[0]
    qb = np.linalg.qr(np.asarray(truth, dtype=float))[0]
    # the part of span(estimate) outside span(truth); its norm is the sine, accurately
    return float(np.linalg.norm(qa - qb @ (qb.T @ qa), ord=2))


@dataclass(frozen=True, eq=False)
class GramLeakage:
    """What masked traffic alone reveals: norms (n,) and inner products (n, n)."""

    norms: np.ndarray
    gram: np.ndarray

    def error(self, contexts: object) -> float:
        """Max |gram - X X^T| against the true contexts (machine precision: an exact leak)."""
        x = _matrix("contexts", contexts)
        if x.shape[0] != self.gram.shape[0]:
            raise ShapeError(f"contexts must have {self.gram.shape[0]} rows; got {x.shape[0]}")
        return float(np.max(np.abs(self.gram - x @ x.T)))

    def contexts_up_to_rotation(self, width: int) -> np.ndarray:
        """Contexts (n, width) equal to the true ones times an unknown orthogonal matrix."""
        width = check_count("width", width)
        vals, vecs = np.linalg.eigh(self.gram)
        top = np.argsort(vals)[::-1][:width]
        return vecs[:, top] * np.sqrt(np.clip(vals[top], 0.0, None))


def gram_leakage(masked: object) -> GramLeakage:
    """Norms and inner products of a party's contexts, read off its masked traffic."""
    z = _matrix("masked", masked)
    gram = z @ z.T
    return GramLeakage(np.sqrt(np.clip(np.diag(gram), 0.0, None)), gram)


def skewed_contexts(n: int, width: int, rng: np.random.Generator) -> np.ndarray:
    """Non-negative, skewed features with distinct variances (counts, ages, spend...)."""
    scales = np.linspace(1.0, 2.0, check_count("width", width))
    return rng.exponential(1.0, (check_count("n", n), width)) * scales


def recovery_curve(width: int, dim: int, pairs: "list[int]", rng: np.random.Generator,
                   method: str = "procrustes", held_out: int = 100) -> list[MaskRecovery]:
    """Known-plaintext error against the number of known pairs, for a fresh Haar mask.

    A party of `width` features inside a mask of dimension `dim`; Gaussian contexts.
    """
    mask, truth = _fresh_block(width, dim, rng)
    x = rng.standard_normal((max(pairs), width))
    test = rng.standard_normal((check_count("held_out", held_out), width))
    return [known_plaintext(x[:k], mask.mask(0, x[:k]), method).scored(truth, test)
            for k in pairs]


def pca_curve(width: int, dim: int, rounds: "list[int]", rng: np.random.Generator,
              sample: int = 20000, held_out: int = 100) -> list[MaskRecovery]:
    """PCA (known-sample) error against rounds of traffic observed, skewed contexts."""
    mask, truth = _fresh_block(width, dim, rng)
    traffic = mask.mask(0, skewed_contexts(max(rounds), width, rng))
    known = skewed_contexts(sample, width, rng)
    test = skewed_contexts(held_out, width, rng)
    return [pca_recovery(traffic[:t], known).scored(truth, test) for t in rounds]


def _fresh_block(width: int, dim: int, rng: np.random.Generator):
    width, dim = check_count("width", width), check_count("dim", dim)
    if dim < width:
        raise invalid("dim", dim, f"an integer >= width={width}")
    widths = (width,) if dim == width else (width, dim - width)
    mask = OrthogonalMask.generate(widths, rng)
    return mask, mask.block(0)
