"""Building blocks of private bandits: one release plan, per-unit streams, noisy models.

- `plan.ReleasePlan`: the one release plan of every private family (budget,
  mechanism, schedule, sampler -> streams, Laplace releases, ledgers,
  statements); `plan.GuardPlan` extends it for a guarded federation;
- `schedule.ReleaseSchedule`: data-independent release times;
- `streams`: per-unit continual releases, one ledger per party
  (`UnitStreams`): `PartyStreams` (full statistics, record-level) and
  `RewardStreams` (reward-only, public Gram; interactive);
- `billboard.Billboard`: the billboard rule enforced -- public-coin tracks,
  only records whose action the billboard chose from released data enter a
  stream;
- `sums.TrustedSums`: the one seam a cluster's sums are released through;
- `membership.ClusterReleases`: one noise per cluster while the clusters
  change, with the proof that the whole sequence of releases stays private;
- `routing.RoutedSums`: each record to exactly one stream at the full
  budget (its user's, or its settled cluster's secure sum, `routing.ClusterSums`);
- `estimates`: ridge models and confidence radii from noisy statistics
  (`NoisyRidge`: every entry noised; `RewardNoiseRidge`: exact Gram, noisy
  moments), and the noise bounds they use;
- `reports.GuardedReports`: what a guarded federation reports.

Cluster detection on released statistics is `privbandit.clustering`.
"""
from .billboard import Billboard, BillboardError
from .estimates import (
    ExactGramModel,
    NoisyRidge,
    RewardNoiseRidge,
    RidgeModel,
    applied_noise_bound,
    exact_gram_scores,
    matrix_noise_bound,
    pooled_bias,
    sum_noise_bound,
)
from .membership import ClusterReleases
from .plan import LAPLACE, MECHANISMS, GuardPlan, ReleasePlan
from .reports import GuardedReports
from .routing import ClusterSums, RoutedSums
from .schedule import GROWTH, SCHEDULES, ReleaseSchedule, release_schedule
from .streams import PartyStreams, RewardStreams, UnitStreams
from .sums import TrustedSums

__all__ = ["GROWTH", "LAPLACE", "MECHANISMS", "SCHEDULES", "Billboard", "BillboardError",
           "ClusterReleases", "ClusterSums", "ExactGramModel", "GuardPlan", "GuardedReports",
           "NoisyRidge", "PartyStreams", "ReleasePlan", "ReleaseSchedule", "RewardNoiseRidge",
           "RewardStreams", "RidgeModel", "RoutedSums", "TrustedSums", "UnitStreams",
           "applied_noise_bound", "exact_gram_scores", "matrix_noise_bound", "pooled_bias",
           "release_schedule", "sum_noise_bound"]
