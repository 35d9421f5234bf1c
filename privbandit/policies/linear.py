"""LinUCB and LinTS, one model per user or one model shared by all users.

Both accept any batch of items (K, d) at every round, with an explicit `rng`,
so federated variants (e.g. vertical LinUCB on masked contexts) can be
compared with them round for round.  Ties go to the lowest item index.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from privbandit.accounting.validation import check_nonnegative

from ..errors import config_error
from ..kernels import ucb_scores
from ..validation import check_user
from .base import CheckedItemsPolicy
from .radius import ConfidenceRadius
from .ridge import RidgeModels


class _LinearPolicy(CheckedItemsPolicy):
    """Ridge models indexed by user (or one shared model) plus input checks."""

    def __init__(
        self,
        dim: int,
        n_users: int,
        *,
        shared: bool,
        lam: float,
        item_bound: float | None,
    ) -> None:
        super().__init__(dim, n_users, item_bound)
        if not isinstance(shared, bool):
            raise config_error("shared", shared, "True or False")
        self.shared = shared
        self.models = RidgeModels(1 if shared else self.n_users, self.dim, lam, track_gram=False)

    def _model(self, user: object) -> int:
        u = check_user(user, self.n_users)
        return 0 if self.shared else u

    def update(self, items: np.ndarray, user: int, action: Any, feedback: Any, t: int) -> None:
        """Add (items[action], feedback) to the user's (or the shared) model.

        items: (K, d); action: int in [0, K); feedback: the finite real reward.
        """
        m = self._model(user)
        self.models.add(m, *self._observation(items, action, feedback))

    def replicate_state(self) -> dict[str, np.ndarray]:
        """The models' arrays, "models.inv", "models.b", ... (`Policy.replicate_state`)."""
        return self.models.arrays("models.")

    def _bind_views(self, views: dict[str, np.ndarray]) -> None:
        self.models.adopt(views, "models.")

    def _base_params(self) -> dict[str, Any]:
        return {
            "dim": self.dim,
            "n_users": self.n_users,
            "shared": self.shared,
            "lam": self.models.lam,
            "item_bound": self.item_bound,
        }


class LinUCB(_LinearPolicy):
    """Linear UCB (OFUL): pick argmax_k x_k . theta_hat + beta ||x_k||_{V^-1}.

    With `beta="oful"` the radius is R sqrt(2 ln(1/confidence) + ln det(V)/det(lam I))
    + sqrt(lam) S (Abbasi-Yadkori, Pal, Szepesvari 2011, Thm 2), with R =
    `noise_scale`, S = `theta_bound`, tracked per model with the determinant
    lemma; `beta_scale` multiplies it (practice tunes it).  A number gives a
    constant radius (Li et al. 2010's alpha).  `shared=True` learns one model
    for all users (seed 000's "Homo" baseline); otherwise one per user.

    Shapes: items (K, d) with ||x_k|| <= item_bound; select returns an int.
    Cost per round O(K d^2 + d^2), no matrix inversion.

    Privacy guarantee: none (a non-private baseline); it reads raw rewards.
    """

    name = "linucb"

    def __init__(
        self,
        dim: int,
        n_users: int = 1,
        *,
        shared: bool = False,
        beta: float | str = "oful",
        beta_scale: float = 1.0,
        lam: float = 1.0,
        noise_scale: float = 0.5,
        confidence: float = 0.1,
        theta_bound: float = 1.0,
        item_bound: float | None = 1.0,
    ) -> None:
        super().__init__(dim, n_users, shared=shared, lam=lam, item_bound=item_bound)
        self.radius = ConfidenceRadius(beta, beta_scale, noise_scale, confidence, theta_bound)

    def scores(self, items: np.ndarray, user: int) -> np.ndarray:
        """Upper confidence bounds of the K items for `user`, (K,)."""
        m = self._model(user)
        items = self._check_round_items(items)
        beta = self.radius(float(self.models.logdet[m]), self.models.lam)
        return ucb_scores(self.models.theta[m], self.models.inv[m], items, beta)

    def select(self, items: np.ndarray, user: int, t: int, rng: np.random.Generator) -> int:
        """Index of the item with the highest upper confidence bound (lowest index on ties)."""
        return int(self.scores(items, user).argmax())

    def params(self) -> dict[str, Any]:
        return {**self._base_params(), **self.radius.params()}


class LinTS(_LinearPolicy):
    """Linear Thompson sampling (Agrawal & Goyal 2013): argmax_k x_k . theta_tilde.

    theta_tilde ~ N(theta_hat, v^2 V^-1) is drawn as theta_hat + v L z with L the
    lower Cholesky factor of V^-1 and z = rng.standard_normal(d): exactly one
    draw of d standard normals per `select`, so a run is reproducible and an
    equivalent implementation can consume the same stream.  `v` is the
    posterior scale (the seeds' experiments use a constant, e.g. 0.01 in seed 003).

    Shapes: items (K, d); select returns an int.  Cost per round O(K d + d^3).

    Privacy guarantee: none (a non-private baseline); it reads raw rewards.
    """

    name = "lints"

    def __init__(
        self,
        dim: int,
        n_users: int = 1,
        *,
        shared: bool = False,
        v: float = 0.1,
        lam: float = 1.0,
        item_bound: float | None = 1.0,
    ) -> None:
        super().__init__(dim, n_users, shared=shared, lam=lam, item_bound=item_bound)
        self.v = check_nonnegative("v", v)

    def sample_theta(self, user: int, rng: np.random.Generator) -> np.ndarray:
        """One posterior draw theta_hat + v L z for `user`'s model, (d,)."""
        m = self._model(user)
        z = rng.standard_normal(self.dim)
        factor = np.linalg.cholesky(self.models.inv[m])
        return self.models.theta[m] + self.v * (factor @ z)

    def select(self, items: np.ndarray, user: int, t: int, rng: np.random.Generator) -> int:
        """Index of the item with the highest sampled mean (lowest index on ties)."""
        items = self._check_round_items(items)
        return int(np.argmax(items @ self.sample_theta(user, rng)))

    def params(self) -> dict[str, Any]:
        return {**self._base_params(), "v": self.v}
