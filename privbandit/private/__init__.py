"""Building blocks of private federated bandits that stay close to going alone.

- `plan.ReleasePlan`: the one release plan of every private family (budget,
  mechanism, schedule, sampler -> streams, Laplace releases, ledgers,
  statements); `plan.GuardPlan` extends it for a guarded federation;
- `billboard.Billboard`: the billboard rule enforced -- public-coin tracks,
  only records whose action the billboard chose from released data enter a
  stream;
- `schedule.ReleaseSchedule`: data-independent release times;
- `streams.PartyStreams`: per-unit continual release of statistics, one
  ledger per party;
- `sums.TrustedSums`: the one seam a cluster's sums are released through;
- `membership.ClusterReleases`: one noise per cluster while the clusters
  change, with the proof that the whole sequence of releases stays private;
- `estimates.NoisyRidge`: ridge estimates and confidence radii from statistics
  that carry privacy noise of known variance;
- `clustering.NoiseAwareClustering`: cluster detection whose tests count the
  noise, so that noise keeps units apart instead of pooling them.
"""
from .billboard import Billboard, BillboardError
from .clustering import NoiseAwareClustering, clique_labels
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
from .schedule import GROWTH, SCHEDULES, ReleaseSchedule, release_schedule
from .streams import PartyStreams, RewardStreams
from .sums import TrustedSums

__all__ = ["GROWTH", "LAPLACE", "MECHANISMS", "SCHEDULES", "Billboard", "BillboardError",
           "ClusterReleases", "ExactGramModel", "GuardPlan", "GuardedReports",
           "NoiseAwareClustering", "NoisyRidge",
           "PartyStreams", "ReleasePlan", "ReleaseSchedule", "RewardNoiseRidge", "RewardStreams",
           "RidgeModel", "TrustedSums", "applied_noise_bound", "clique_labels", "exact_gram_scores",
           "matrix_noise_bound", "pooled_bias", "release_schedule", "sum_noise_bound"]
