"""Numerical kernels shared by every bandit algorithm, written once.

- `sherman_morrison` / `sherman_morrison_rows`: rank-one inverse updates
  (A + w x x^T)^-1 in place, for one matrix or a batch of users, returning the
  quadratic form x^T A^-1 x that the log-det update needs.
- `quadratic_forms`, `ucb_widths`, `ucb_scores`: confidence widths of K items
  in one call (no per-item loop).
- `logdet_increment`, `logdet_ratio`, `det_ratio_exceeds`: the matrix
  determinant lemma, log det(A + w x x^T) = log det A + log(1 + w x^T A^-1 x),
  and the det-ratio triggers of asynchronous communication.
- `UserGraph`: connected components of a user graph maintained incrementally
  under edge deletions (CLUB-style cluster detection).
- `cluster_error_rate`: the fraction of users whose detected cluster is not
  exactly their true cluster (seed 001, Experiments).
- `cluster_mixing_rate`: the fraction of users outside the largest true
  cluster of their detected cluster (how much merges mix true clusters).

Shapes are in the docstrings; `...` is any batch shape.  Ties in scores are
broken by the lowest index (`np.argmax`), so two implementations that compute
the same scores make the same decisions.
"""
from __future__ import annotations

import numpy as np

from .errors import ShapeError, config_error


def sherman_morrison(inv: np.ndarray, x: np.ndarray, weight: float = 1.0) -> np.ndarray:
    """Replace `inv` = A^-1 by (A + weight x x^T)^-1 in place; return x^T A^-1 x.

    inv: (..., d, d) float64, symmetric; x: (..., d).  Returns the quadratic
    form before the update, shape (...).  A negative weight is a downdate; it
    must keep A positive definite (1 + weight x^T A^-1 x > 0), otherwise the
    update is refused and `inv` is left unchanged.
    """
    if inv.ndim == 2:  # single matrix: avoid einsum overhead on the hot path
        u = inv @ x
        quad = float(x @ u)
        denom = 1.0 + weight * quad
        if not denom > 0.0:
            raise config_error("weight", weight, "a value keeping A positive definite")
        inv -= np.multiply.outer(u, u * (weight / denom))
        return np.float64(quad)
    u = np.matmul(inv, x[..., :, None])[..., 0]
    quad = np.einsum("...d,...d->...", x, u)
    denom = 1.0 + weight * quad
    if not np.all(denom > 0.0):
        raise config_error("weight", weight, "a value keeping every A positive definite")
    inv -= u[..., :, None] * (u * (weight / denom)[..., None])[..., None, :]
    return quad


def sherman_morrison_rows(
    invs: np.ndarray, users: np.ndarray, x: np.ndarray, weight: float = 1.0
) -> np.ndarray:
    """Rank-one update of the inverses of several distinct users at once.

    invs: (n, d, d), updated in place at rows `users` (B,) with x: (B, d).
    Users must be distinct: two updates of one user are sequential, not
    simultaneous.  Returns the B quadratic forms before the update.
    """
    users = np.asarray(users, dtype=np.intp)
    if users.ndim != 1 or x.shape != (users.size, invs.shape[-1]):
        raise ShapeError(
            f"users and x must have shapes (B,) and (B, {invs.shape[-1]}); "
            f"got {users.shape} and {x.shape}"
        )
    if np.unique(users).size != users.size:
        raise config_error("users", users.tolist(), "distinct user indices")
    block = invs[users]
    quad = sherman_morrison(block, x, weight)
    invs[users] = block
    return quad


def quadratic_forms(inv: np.ndarray, items: np.ndarray) -> np.ndarray:
    """x_k^T inv x_k for every row x_k of items.

    inv: (d, d) or (..., d, d); items: (K, d) or (..., K, d).  Returns (..., K).
    """
    return np.einsum("...kd,...kd->...k", items @ inv, items)


def ucb_widths(inv: np.ndarray, items: np.ndarray) -> np.ndarray:
    """Confidence widths sqrt(x_k^T inv x_k) for K items in one call, shape (..., K).

    Tiny negative quadratic forms from rounding are clipped to 0.
    """
    q = quadratic_forms(inv, items)
    np.maximum(q, 0.0, out=q)
    return np.sqrt(q, out=q)


def ucb_scores(theta: np.ndarray, inv: np.ndarray, items: np.ndarray, beta: float) -> np.ndarray:
    """Upper confidence bounds x_k . theta + beta sqrt(x_k^T inv x_k), shape (..., K).

    theta: (d,) or (..., d); inv: (d, d) or (..., d, d); items: (K, d) or (..., K, d).
    """
    if theta.ndim == 1:
        means = items @ theta
    else:
        means = np.matmul(items, theta[..., :, None])[..., 0]
    scores = ucb_widths(inv, items)
    scores *= beta  # in place: the same numbers as means + beta * widths, no temporaries
    scores += means
    return scores


def logdet_increment(quad: np.ndarray | float, weight: float = 1.0) -> np.ndarray:
    """log det(A + w x x^T) - log det(A) = log(1 + w x^T A^-1 x) (determinant lemma)."""
    return np.log1p(weight * np.asarray(quad, dtype=np.float64))


def logdet_ratio(inv_ref: np.ndarray, increment: np.ndarray) -> np.ndarray:
    """log det(A + D) - log det(A) for any symmetric increment D, given inv_ref = A^-1.

    Uses det(A + D) / det(A) = det(I + A^-1 D).  inv_ref, increment: (..., d, d).
    Returns (...); -inf if A + D is singular, and the caller must treat a
    negative determinant (sign -1) as a broken invariant, so it raises.
    """
    d = inv_ref.shape[-1]
    sign, logabs = np.linalg.slogdet(np.eye(d) + inv_ref @ increment)
    if np.any(sign < 0):
        raise config_error("increment", "matrix", "an increment keeping A + D positive definite")
    return logabs


def det_ratio_exceeds(log_ratio: np.ndarray | float, threshold: float) -> np.ndarray:
    """det(new) / det(reference) > threshold, computed in log space (threshold > 0)."""
    if not threshold > 0:
        raise config_error("threshold", threshold, "a number > 0")
    return np.asarray(log_ratio) > np.log(threshold)


class UserGraph:
    """An undirected user graph whose connected components are kept up to date.

    Deleting edges at one user can only split the component holding that user,
    so only that component is searched again (breadth-first, vectorized per
    level).  A component's label is its smallest member index, so labels do
    not depend on the order of deletions.
    """

    def __init__(self, adjacency: np.ndarray) -> None:
        adj = np.array(adjacency, dtype=bool)
        if adj.ndim != 2 or adj.shape[0] != adj.shape[1] or adj.shape[0] == 0:
            raise ShapeError(f"adjacency must be a non-empty square matrix; got shape {adj.shape}")
        if not np.array_equal(adj, adj.T):
            raise config_error("adjacency", "matrix", "a symmetric boolean matrix")
        np.fill_diagonal(adj, False)
        self._adj = adj
        self._labels = np.arange(adj.shape[0])
        self._relabel(np.arange(adj.shape[0]))

    @classmethod
    def complete(cls, n: int) -> "UserGraph":
        """The complete graph on n users (CLUB's and FCLUB's usual start)."""
        if n < 1:
            raise config_error("n", n, "an integer >= 1")
        return cls(np.ones((n, n), dtype=bool))

    @classmethod
    def random(cls, n: int, p: float, rng: np.random.Generator) -> "UserGraph":
        """An Erdos-Renyi G(n, p) graph (Gentile et al. 2014 suggest p ~ 3 log n / n)."""
        if n < 1:
            raise config_error("n", n, "an integer >= 1")
        if not 0.0 <= p <= 1.0:
            raise config_error("p", p, "a probability in [0, 1]")
        upper = np.triu(rng.random((n, n)) < p, k=1)
        return cls(upper | upper.T)

    @property
    def n(self) -> int:
        return self._adj.shape[0]

    @property
    def adjacency(self) -> np.ndarray:
        """A read-only view of the boolean adjacency matrix, (n, n)."""
        view = self._adj.view()
        view.flags.writeable = False
        return view

    @property
    def labels(self) -> np.ndarray:
        """Component label of each user (its component's smallest index), read-only (n,)."""
        view = self._labels.view()
        view.flags.writeable = False
        return view

    def adopt(self, adjacency: np.ndarray | None = None, labels: np.ndarray | None = None
              ) -> None:
        """Keep the adjacency matrix and/or the labels in these arrays from now on (e.g.
        views of arrays stacked over replicates, `Policy.bind_replicate_state`): they
        must hold the graph's values, in its shapes and dtypes; edits write into them."""
        for name, new, own in (("adjacency", adjacency, self._adj),
                               ("labels", labels, self._labels)):
            if new is not None and (not isinstance(new, np.ndarray) or new.shape != own.shape
                                    or new.dtype != own.dtype):
                raise ShapeError(f"{name} must be an array of shape {own.shape}, dtype "
                                 f"{own.dtype}; got {getattr(new, 'shape', type(new))}")
        if adjacency is not None:
            self._adj = adjacency
        if labels is not None:
            self._labels = labels

    @property
    def n_components(self) -> int:
        return int(np.unique(self._labels).size)

    def neighbors(self, user: int) -> np.ndarray:
        """Indices of the users adjacent to `user`, ascending."""
        return np.flatnonzero(self._adj[user])

    def component(self, user: int) -> np.ndarray:
        """Members of the component holding `user`, ascending."""
        return np.flatnonzero(self._labels == self._labels[user])

    def delete_edges(self, user: int, others: np.ndarray) -> bool:
        """Delete the edges (user, j) for j in `others`; return True if a component split."""
        others = np.asarray(others, dtype=np.intp)
        present = others[self._adj[user, others]]
        if present.size == 0:
            return False
        self._adj[user, present] = False
        self._adj[present, user] = False
        before = self.n_components
        self._relabel(self.component(user))
        return self.n_components != before

    def _relabel(self, members: np.ndarray) -> None:
        """Label the components of the subgraph induced by `members` (one component before).

        Breadth-first search on the dense adjacency: one vectorized step per
        level, so a split check in a dense user graph costs a few row scans.
        """
        left = np.zeros(self.n, dtype=bool)
        left[members] = True
        while left.any():
            start = int(np.argmax(left))  # smallest remaining member labels its component
            seen = np.zeros(self.n, dtype=bool)
            seen[start] = True
            frontier = np.array([start])
            while frontier.size:
                nxt = self._adj[frontier].any(axis=0) & ~seen
                seen |= nxt
                frontier = np.flatnonzero(nxt)
            self._labels[seen] = start
            left &= ~seen


def cluster_error_rate(true_labels: np.ndarray, detected_labels: np.ndarray) -> float:
    """Fraction of users whose detected cluster differs from their true cluster as a set.

    A user is correct when the users sharing its detected label are exactly
    the users sharing its true label (seed 001, Experiments: "users in a
    correctly partitioned cluster are considered correct").
    """
    t = np.asarray(true_labels)
    g = np.asarray(detected_labels)
    if t.shape != g.shape or t.ndim != 1:
        raise ShapeError(f"label arrays must be 1-D of equal length; got {t.shape} and {g.shape}")
    _, t_idx, t_size = np.unique(t, return_inverse=True, return_counts=True)
    _, g_idx, g_size = np.unique(g, return_inverse=True, return_counts=True)
    pair = t_idx.astype(np.int64) * g_size.size + g_idx
    _, p_idx, p_size = np.unique(pair, return_inverse=True, return_counts=True)
    both = p_size[p_idx]
    correct = (both == t_size[t_idx]) & (both == g_size[g_idx])
    return float(1.0 - correct.mean())


def cluster_mixing_rate(true_labels: np.ndarray, detected_labels: np.ndarray) -> float:
    """Fraction of users outside the largest true cluster of their detected cluster.

    One minus the purity of the detected partition: 0 when no detected cluster
    mixes true clusters (however finely true clusters are split, which
    `cluster_error_rate` counts as wrong), 0.5 when two equal true clusters are
    merged into one; one stray user in a cluster of a hundred adds 1/n.  It says
    how much of what clusters pool comes from users of another true cluster.
    """
    t = np.asarray(true_labels)
    g = np.asarray(detected_labels)
    if t.shape != g.shape or t.ndim != 1:
        raise ShapeError(f"label arrays must be 1-D of equal length; got {t.shape} and {g.shape}")
    if t.size == 0:
        return 0.0
    _, t_idx = np.unique(t, return_inverse=True)
    _, g_idx = np.unique(g, return_inverse=True)
    table = np.zeros((int(g_idx.max()) + 1, int(t_idx.max()) + 1), dtype=np.int64)
    np.add.at(table, (g_idx, t_idx), 1)
    return float(1.0 - table.max(axis=1).sum() / t.size)


def oful_beta(
    logdet_ratio: np.ndarray | float,
    lam: float,
    noise_scale: float,
    confidence: float,
    theta_bound: float,
) -> np.ndarray:
    """Self-normalised confidence radius of ridge regression (Abbasi-Yadkori et al. 2011, Thm 2).

    beta = R sqrt(2 ln(1/confidence) + ln(det V / det(lam I))) + sqrt(lam) S, where
    R is the sub-Gaussian noise scale, S bounds ||theta|| and `logdet_ratio`
    is ln(det V / det(lam I)), tracked with `logdet_increment`.
    """
    return noise_scale * np.sqrt(2.0 * np.log(1.0 / confidence) + np.asarray(logdet_ratio)) + (
        np.sqrt(lam) * theta_bound
    )


def club_confidence(counts: np.ndarray | float) -> np.ndarray:
    """F(T) = sqrt((1 + ln(1 + T)) / (1 + T)), the CLUB/SCLUB/FCLUB estimate radius."""
    c = np.asarray(counts, dtype=np.float64)
    return np.sqrt((1.0 + np.log1p(c)) / (1.0 + c))
