"""A secure vector sum with distributed discrete Gaussian noise: the aggregator learns the sum.

    SecureSum(parties, shape, *, min_survivors=None, collusion=0, sigma=None, epsilon=None,
              delta=None, l2_sensitivity=1.0, clip_norm=None, on_excess="clip", scale=None,
              modulus_bits=64, masks=None, max_wrap_probability=2**-40, accountant="zcdp")
    out = mech.release(values (parties, *shape), rng, dropped=())  # a SecureSumRelease
    out.value            # the noisy sum over the survivors (shape), decoded
    out.shares, out.survivors, out.noise_variance

One release, per party i (vectorized over the parties here; one process
plays them all): clip x_i to clip_norm, encode it on the grid of multiples of
`scale` by stochastic rounding (`integer_grid`), add a discrete Gaussian share
(`distributed_noise`) and the masks of the round (`pairwise_masks`), reduce
modulo m = 2**modulus_bits and send.  The aggregator sums the survivors'
shares modulo m, subtracts what the survivors reveal to unmask
(`MaskRound.unmask`), reads the centred representative in [-m/2, m/2) and
decodes it.  `SecureAggregation` is that protocol on already encoded integers;
the continual-release streams over secure sums (`secure_stream`) run it too.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from privbandit.accounting import calibration as calib
from privbandit.accounting.accountants import make_accountant
from privbandit.accounting.accountants.secure_sum import secure_sum_tau
from privbandit.accounting.errors import invalid
from privbandit.accounting.events import SecureSumEvent
from privbandit.accounting.validation import check_count, check_delta, check_positive

from . import distributed_noise as noise
from ._checks import check_choice, check_rng, check_shape, clip_rows, real_array
from .errors import TooFewSurvivorsError
from .integer_grid import IntegerGrid
from .pairwise_masks import SimulatedMasks
from .streaming import gamma
from .tape import constructed, tap

DEFAULT_MAX_WRAP = 2.0**-40
_GRID_TOLERANCE = 1e-4  # the rounding adds at most this to the sensitivity (scale=None)


@dataclass(frozen=True)
class SecureRound:
    """One run of the protocol: the decoded integer sum (entries,) int64, what the aggregator
    received (the survivors' masked shares, (survivors, entries) uint64, each reduced
    modulo m), who survived ((parties,) bool) and which shares the masks hide ((parties,)
    bool, `pairwise_masks.MaskRound.hidden`)."""

    total: np.ndarray
    shares: np.ndarray
    survivors: np.ndarray
    hidden: np.ndarray

    def view(self) -> SecureView:
        """What the aggregator receives besides the sum (kept on an audit's tape)."""
        return SecureView(self.shares, self.survivors, self.hidden)


@dataclass(frozen=True)
class SecureView:
    """The aggregator's view of one secure release besides its sum: the survivors' masked
    shares ((survivors, entries) uint64), who survived and which shares the masks hide."""

    shares: np.ndarray
    survivors: np.ndarray
    hidden: np.ndarray


@dataclass(frozen=True)
class SecureSumRelease:
    """A secure sum as released: `value` (the decoded noisy sum over the survivors),
    `shares` and `survivors` (the aggregator's view), `noise_variance` (per entry of value,
    exact for this membership)."""

    value: np.ndarray
    shares: np.ndarray
    survivors: np.ndarray
    noise_variance: float


def survivors_of(dropped: object, parties: int) -> np.ndarray:
    """The (parties,) boolean mask of the parties not in `dropped` (distinct indices)."""
    if isinstance(dropped, (tuple, list)) and not dropped:
        return np.ones(parties, dtype=bool)
    allowed = f"distinct party indices in [0, {parties})"
    if isinstance(dropped, (str, bytes)) or not hasattr(dropped, "__iter__"):
        raise invalid("dropped", dropped, allowed)
    gone = list(dropped)
    if any(isinstance(i, (bool, np.bool_)) or not isinstance(i, (int, np.integer))
           or not 0 <= i < parties for i in gone) or len(set(gone)) != len(gone):
        raise invalid("dropped", dropped, allowed)
    alive = np.ones(parties, dtype=bool)
    alive[[int(i) for i in gone]] = False
    return alive


class SecureAggregation:
    """The secure-sum protocol for a fixed group of parties on encoded integers.

    shares of N_Z(0, share_sigma**2) (grid steps), sums modulo 2**modulus_bits, masks
    from `masks` (a `SimulatedMasks` or an `agreed_masks.AgreedMasks`), at least
    `min_survivors` parties per release (else `TooFewSurvivorsError` before anything is
    drawn).  `run(encoded, rng, survivors)` -> SecureRound.  Counts its releases (the
    masks of each are fresh).  No guarantee of its own: it knows neither the values'
    bounds nor the encoding; `SecureSum` and the streams state the guarantee and the
    event of what they run through it.
    """

    def __init__(self, parties: int, *, min_survivors: int, share_sigma: float,
                 modulus_bits: int, masks) -> None:
        self.parties = check_count("parties", parties)
        self.min_survivors = check_count("min_survivors", min_survivors)
        if self.min_survivors > self.parties:
            raise invalid("min_survivors", min_survivors, f"<= parties = {parties}")
        self.share_sigma = noise.check_share_sigma(share_sigma, self.parties)
        self.modulus_bits = check_count("modulus_bits", modulus_bits, minimum=2)
        if self.modulus_bits > noise.MAX_BITS:
            raise invalid("modulus_bits", modulus_bits, f"an integer in [2, {noise.MAX_BITS}]")
        if not callable(getattr(masks, "round", None)):
            raise invalid("masks", masks, "SimulatedMasks() or agreed_masks.AgreedMasks")
        self.masks = masks
        self.releases = 0
        self._share_variance = noise.share_variance(self.share_sigma, self.parties)

    def check_survivors(self, survivors: np.ndarray) -> None:
        if int(survivors.sum()) < self.min_survivors:
            raise TooFewSurvivorsError(
                f"{int(survivors.sum())} of {self.parties} parties survived, fewer than "
                f"min_survivors = {self.min_survivors}: nothing is released (the survivors "
                "reveal nothing, so the masked shares stay uniform)")

    def run(self, encoded: np.ndarray, rng: np.random.Generator,
            survivors: np.ndarray) -> SecureRound:
        self.check_survivors(survivors)
        entries = encoded.shape[1]
        shares = noise._draw_shares(self.share_sigma, self.parties, entries, rng)
        masked = (encoded + shares).view(np.uint64)  # two's complement: exact modulo 2**64
        mask_round = self.masks.round(self.releases, self.parties, entries, self.min_survivors,
                                      rng)
        masked = (masked + mask_round.party_masks) & self._mask
        sent = masked[survivors]
        total = (sent.sum(axis=0, dtype=np.uint64) - mask_round.unmask(survivors)) & self._mask
        self.releases += 1
        return SecureRound(self._centred(total), sent, survivors.copy(),
                           mask_round.hidden.copy())

    @property
    def _mask(self) -> np.uint64:
        return np.uint64((1 << self.modulus_bits) - 1)

    def _centred(self, total: np.ndarray) -> np.ndarray:
        if self.modulus_bits == 64:
            return total.view(np.int64)
        half = 1 << (self.modulus_bits - 1)
        return total.astype(np.int64) - np.where(total >= half, 2 * half, 0)

    def noise_variance(self, survivors: int) -> float:
        """Per-entry variance (grid steps) of the summed noise of `survivors` parties."""
        return survivors * self._share_variance


class GroupView:
    """The read-only settings of a secure sum or stream (`_protocol`, `_config` set)."""

    @property
    def sigma(self) -> float:
        """Std (value units) of one release's noise that min_survivors - collusion shares
        carry together: a central release's sigma."""
        shares = self._config.min_survivors - self._config.collusion
        return self._protocol.share_sigma * self.scale * math.sqrt(shares)

    @property
    def share_sigma(self) -> float:
        """Each party's discrete Gaussian share, in grid steps."""
        return self._protocol.share_sigma

    @property
    def grid(self) -> IntegerGrid:
        return self._config.grid

    @property
    def scale(self) -> float:
        return self._config.grid.scale

    @property
    def modulus_bits(self) -> int:
        return self._protocol.modulus_bits

    @property
    def parties(self) -> int:
        return self._protocol.parties

    @property
    def min_survivors(self) -> int:
        return self._config.min_survivors

    @property
    def collusion(self) -> int:
        return self._config.collusion

    @property
    def l2_sensitivity(self) -> float:
        return self._config.l2_sensitivity

    @property
    def clip_norm(self) -> float:
        return self._config.clip_norm

    @property
    def releases(self) -> int:
        """Releases made so far (refused ones not counted)."""
        return self._protocol.releases

    @property
    def trust_model(self) -> str:
        """The trust model in words, this group's numbers and masks included."""
        c = self._config
        return (f"{self._protocol.masks.description}; honest-but-curious aggregator sees the "
                f"survivors' masked shares (uniform modulo m), the membership and the noisy "
                f"sum; the noise of at least {c.min_survivors - c.collusion} unknown shares "
                f"protects each party against the aggregator with up to {c.collusion} "
                f"colluding parties; fewer than {c.min_survivors} survivors: no release")


class SecureSum(GroupView):
    """A vector sum over parties with distributed discrete Gaussian noise and masks.

    Parameters
    ----------
    parties : the group's size n; `release` takes one row per party.
    shape : the shape of each party's vector.
    min_survivors : n_min (default n): a release needs at least that many
        parties; fewer raise TooFewSurvivorsError and release nothing.
    collusion : t (default 0): parties that may pool their noise shares with
        the aggregator; the shares are calibrated so that n_min - t of them
        carry the whole noise.
    sigma : the whole noise's standard deviation in value units, carried by
        n_min - t shares (what a central Gaussian release would add); or give
        `epsilon` and `delta` and it is calibrated (`accountant`, "zcdp" or
        "rdp", `accounting.calibrate_secure_sum_sigma`).
    l2_sensitivity, clip_norm, on_excess : as for `gaussian.GaussianVector` and
        the streams: each party's vector is clipped to clip_norm (default
        l2_sensitivity; "reject" refuses instead); neighbours differ in one
        party's vector by at most l2_sensitivity in L2.
    scale : the grid step, a power of two <= 1 (default: the coarsest whose
        rounding adds at most 1e-4 to the sensitivity, relatively).
    modulus_bits : m = 2**modulus_bits (2 ... 64, default 64).  Refused when
        the chance of wrap-around in a release exceeds max_wrap_probability.
    masks : None (`SimulatedMasks()`: a simulation, drawn from the release's
        generator) or `agreed_masks.AgreedMasks.from_keys(keys, session)`.

    Privacy guarantee
    -----------------
    Neighbouring relation: one party's vector differs (replace-one by default:
    any difference of norm <= l2_sensitivity; with clip_norm = l2_sensitivity
    this covers adding or removing one party's vector).  Observer: the
    aggregator, honest but curious, plus any coalition of at most `collusion`
    parties (their own shares and masks known to it).  Mechanism: the encoded
    sum plus at least n_min - t unknown discrete Gaussian shares.  Sensitivity
    in grid steps: l2_sensitivity (x 1 + gamma_(entries+4), the clipping's
    float error) / scale + sqrt(entries) (stochastic rounding on a coupling:
    `integer_grid`).  Event: SecureSumEvent(share sigma, n_min - t, that
    sensitivity, entries, sqrt(entries), wrap probability): rho-zCDP by
    Kairouz, Liu & Steinke 2021, Theorem 1 (`accountants.secure_sum`); read
    by the "zcdp" and "rdp" accountants, refused by the others.  Survivors
    beyond n_min only add noise.  The modular reduction is post-processing;
    the event states its failure probability (accuracy, not privacy).  The
    sampler is the grid sampler's exact discrete Gaussian, float-safe.

    Trust model: the aggregator sees the survivors' masked shares (each
    uniform modulo m: the self mask alone makes it so), who dropped, the
    unmasking material (per release: the pairwise masks between survivors and
    dropped parties, the survivors' self masks) and the noisy sum; nothing
    else.  A share of a dropped party that arrives late stays uniform (its
    self mask is never revealed: double masking, Bonawitz et al. 2017).
    Parties are honest but curious: each adds its share of noise and its
    masks as told (a party that adds less noise weakens everyone's guarantee,
    undetected); dropouts are public and do not depend on the data.  With
    `SimulatedMasks` the masking is simulated (`trust_model` says so).

    Sources: Kairouz, Liu & Steinke (ICML 2021), the distributed discrete
    Gaussian, Theorem 1 and Proposition 14; Canonne, Kamath & Steinke (2020),
    the discrete Gaussian and its sampler; Bonawitz et al. (CCS 2017), secure
    aggregation with double masking; Agarwal, Kairouz & Liu (2021), Skellam,
    the alternative (`distributed_noise`).
    """

    def __init__(self, parties: int, shape: object, *, min_survivors: int | None = None,
                 collusion: int = 0, sigma: float | None = None, epsilon: float | None = None,
                 delta: float | None = None, l2_sensitivity: float = 1.0,
                 clip_norm: float | None = None, on_excess: str = "clip",
                 scale: float | None = None, modulus_bits: int = 64, masks=None,
                 max_wrap_probability: float = DEFAULT_MAX_WRAP,
                 accountant: str = "zcdp") -> None:
        parties = check_count("parties", parties)
        self._shape = check_shape("shape", shape)
        self._entries = max(math.prod(self._shape), 1)
        self._config = GroupConfig.build(
            parties, min_survivors, collusion, l2_sensitivity, clip_norm, on_excess, scale,
            entries=self._entries)
        cfg = self._config
        self._sens = cfg.l2_sensitivity * (1.0 + gamma(self._entries + 4))
        share = cfg.share_sigma(sigma, epsilon, delta, self._sens, self._entries, 1, accountant)
        bound = parties * (math.ldexp(cfg.clip_norm, -cfg.grid.exponent) + 1.0)
        self._wrap = cfg.check_modulus(modulus_bits, bound, share, self._entries,
                                       max_wrap_probability)
        self._protocol = SecureAggregation(parties, min_survivors=cfg.min_survivors,
                                           share_sigma=share, modulus_bits=modulus_bits,
                                           masks=SimulatedMasks() if masks is None else masks)
        self._event = calib.secure_sum_event(
            share, self._sens, min_survivors=cfg.min_survivors, scale=cfg.grid.scale,
            dimension=self._entries, collusion=cfg.collusion, wrap_probability=self._wrap)
        constructed(self)

    def release(self, values: object, rng: np.random.Generator, *,
                dropped: object = ()) -> SecureSumRelease:
        """Every party's vector (rows of `values`, shape (parties, *shape)) summed securely.

        Rows of dropped parties are ignored.  Raises TooFewSurvivorsError (fewer than
        min_survivors), ShapeError, InvalidParameterError (NaN/inf, bad `dropped`),
        OutOfBoundsError ("reject" mode); a refused call changes nothing.
        """
        n = self._protocol.parties
        x = real_array("values", values, (n, *self._shape)).reshape(n, -1)
        survivors = survivors_of(dropped, n)
        self._protocol.check_survivors(survivors)
        rng = check_rng(rng)
        x, _ = clip_rows(x, self._config.clip_norm, self._config.on_excess, "values")
        encoded = self._config.grid._encode(x, rng)
        result = self._protocol.run(encoded, rng, survivors)
        value = self._config.grid.decode(result.total).reshape(self._shape)
        variance = self._protocol.noise_variance(int(survivors.sum())) * self.scale**2
        value = tap(self, taped_values(encoded, result), value, result.view())
        return SecureSumRelease(value, result.shares, survivors, variance)

    def pair_loss(self, first: list[np.ndarray], second: list[np.ndarray]) -> tuple[float, float]:
        """(mu**2, 0) of two runs' views of the releases (`tape.pair_loss`; module
        `secure_view_loss`)."""
        return secure_view_loss(first, second, self._event), 0.0

    # -- read-only view -----------------------------------------------------------------
    @property
    def event(self) -> SecureSumEvent:
        """One release (charge it before releasing)."""
        return self._event

    @property
    def wrap_probability(self) -> float:
        """Bound on the chance that one release decodes wrongly (wrap-around)."""
        return self._wrap

    @property
    def shape(self) -> tuple[int, ...]:
        return self._shape

    def __repr__(self) -> str:
        return (f"SecureSum(parties={self.parties}, shape={self._shape}, "
                f"min_survivors={self.min_survivors}, sigma={self.sigma:.6g}, "
                f"scale=2**{self.grid.exponent}, modulus_bits={self.modulus_bits})")


@dataclass(frozen=True)
class GroupConfig:
    """The validated settings a secure sum and a secure stream share."""

    parties: int
    min_survivors: int
    collusion: int
    l2_sensitivity: float
    clip_norm: float
    on_excess: str
    grid: IntegerGrid

    @classmethod
    def build(cls, parties: int, min_survivors, collusion, l2_sensitivity, clip_norm,
              on_excess, scale, *, entries: int,
              grid_sensitivity: float | None = None) -> GroupConfig:
        """Validated settings; the default grid (scale None) is chosen for a release of
        `entries` entries and sensitivity `grid_sensitivity` (default l2_sensitivity)."""
        n_min = parties if min_survivors is None else check_count("min_survivors",
                                                                  min_survivors)
        if n_min > parties:
            raise invalid("min_survivors", min_survivors, f"an integer in [1, {parties}]")
        t = check_count("collusion", collusion, minimum=0)
        if t >= n_min:
            raise invalid("collusion", collusion, f"an integer in [0, min_survivors = {n_min})")
        sens = check_positive("l2_sensitivity", l2_sensitivity)
        clip = sens if clip_norm is None else check_positive("clip_norm", clip_norm)
        if clip > sens:
            raise invalid("clip_norm", clip_norm, f"<= l2_sensitivity = {sens:g}")
        mode = check_choice("on_excess", on_excess, ("clip", "reject"))
        grid = grid_for(scale, sens if grid_sensitivity is None else grid_sensitivity, entries)
        return cls(parties, n_min, t, sens, clip, mode, grid)

    def share_sigma(self, sigma, epsilon, delta, sensitivity: float, dimension: int,
                    nodes: int, accountant: str) -> float:
        """The share std in grid steps: from `sigma` (value units, n_min - t shares) or
        calibrated from (epsilon, delta) for `nodes` releases per record."""
        shares = self.min_survivors - self.collusion
        if sigma is not None:
            if epsilon is not None or delta is not None:
                raise invalid("sigma", sigma, "None when epsilon and delta are given (not both)")
            share = math.ldexp(check_positive("sigma", sigma), -self.grid.exponent) / math.sqrt(
                shares)
            if share < 0.5:
                raise invalid("sigma", sigma, f">= {0.5 * self.grid.scale * math.sqrt(shares):g} "
                              "(half a grid step per share) on this grid")
            return share
        if epsilon is None or delta is None:
            raise invalid("(sigma, epsilon, delta)", (sigma, epsilon, delta),
                          "either sigma, or both epsilon and delta")
        check_choice("accountant", accountant, ("zcdp", "rdp"))
        return calib.calibrate_secure_sum_sigma(
            check_positive("epsilon", epsilon), check_delta("delta", delta), sensitivity,
            min_survivors=self.min_survivors, scale=self.grid.scale, dimension=dimension,
            collusion=self.collusion, nodes_per_record=nodes,
            accountant=make_accountant(accountant))

    def check_modulus(self, bits: int, bound: float, share: float, entries: int,
                      limit: float, releases: int = 1) -> float:
        """The wrap-around bound of one release; refuse a modulus for which `releases`
        releases exceed `limit` together."""
        bits = check_count("modulus_bits", bits, minimum=2)
        if bits > noise.MAX_BITS:
            raise invalid("modulus_bits", bits, f"an integer in [2, {noise.MAX_BITS}]")
        limit = check_positive("max_wrap_probability", limit)
        one = noise.wrap_probability(bound, share, self.parties, entries, bits)
        p = min(1.0, releases * one)
        if p > limit:
            need = noise.bits_needed(bound, share, self.parties, entries, limit / releases)
            raise invalid("modulus_bits", bits,
                          f">= {need} for this grid and noise (wrap-around probability "
                          f"{p:.3g} > max_wrap_probability = {limit:.3g})"
                          + (" -- beyond 64 bits: use a coarser scale" if need > 64 else ""))
        return one


def grid_for(scale: object, l2_sensitivity: float, entries: int) -> IntegerGrid:
    """The grid of `scale` (a power of two <= 1), or the default one for the sensitivity."""
    if scale is None:
        return IntegerGrid.for_sensitivity(l2_sensitivity, entries, _GRID_TOLERANCE)
    value = check_positive("scale", scale)
    mantissa, exponent = math.frexp(value)
    if mantissa != 0.5 or value > 1.0:
        raise invalid("scale", scale, "a power of two <= 1 (2**-k: encoding is then exact)")
    return IntegerGrid(exponent - 1)


def taped_values(encoded: np.ndarray, result: SecureRound) -> np.ndarray:
    """What a secure release puts on an audit's tape as its pre-noise value: (parties,
    entries + 1), each party's encoded value (0 for a dropped party: it is in no sum) and,
    last, 1 when the masks hide its share, else 0 (`secure_view_loss` reads both)."""
    out = np.zeros((encoded.shape[0], encoded.shape[1] + 1))
    alive = result.survivors
    out[alive, :-1] = encoded[alive]
    out[:, -1] = result.hidden | ~alive
    return out


def secure_view_loss(first: list[np.ndarray], second: list[np.ndarray],
                     event: SecureSumEvent) -> float:
    """mu**2 of a secure sum's releases from two tapes (`taped_values`): the log density ratio
    of all the randomness that reproduces the aggregator's whole view -- the sum and every
    masked share -- when one run's values replace the other's.

    The masks are uniform modulo m and shared pairwise, so the parties whose shares they
    hide may trade their values' differences among their noise shares and masks at no
    cost: only their summed difference costs, against the noise of the event's shares
    (n_min - t, less the parties shown).  A party whose share the masks do not hide shows
    its noised value, so its own difference costs against its own share alone.  Per
    differing release: ||pooled||**2 / (shares sigma**2) + sum ||shown||**2 / sigma**2 + 2
    tau d (twice Kairouz, Liu & Steinke's rho: the Gaussian-DP reading of the zCDP bound,
    exact as sigma grows and the summed noise tends to a Gaussian on the grid)."""
    tau = secure_sum_tau(event.sigma, event.shares)
    total = 0.0
    for a, b in zip(first, second, strict=True):
        a, b = np.asarray(a, float), np.asarray(b, float)
        gap = a[:, :-1] - b[:, :-1]
        if not gap.any():
            continue
        hidden = (a[:, -1] > 0) & (b[:, -1] > 0)
        pooled, shown = gap[hidden].sum(axis=0), gap[~hidden]
        shares = max(event.shares - int((~hidden).sum()), 1)
        total += (float(pooled @ pooled) / (shares * event.sigma**2)
                  + float(np.sum(shown**2)) / event.sigma**2 + 2 * tau * event.dimension)
    return total
