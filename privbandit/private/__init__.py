"""Building blocks of private federated bandits that never do worse than going alone.

- `schedule.ReleaseSchedule`: data-independent release times;
- `streams.PartyStreams`: per-unit continual release of statistics, one
  ledger per party;
- `estimates.NoisyRidge`: ridge estimates and confidence radii from statistics
  that carry privacy noise of known variance;
- `clustering.NoiseAwareClustering`: cluster detection whose tests count the
  noise, so that noise keeps units apart instead of pooling them.
"""
from .clustering import NoiseAwareClustering, clique_labels
from .estimates import NoisyRidge, applied_noise_bound, matrix_noise_bound
from .schedule import SCHEDULES, ReleaseSchedule
from .streams import PartyStreams

__all__ = ["SCHEDULES", "NoiseAwareClustering", "NoisyRidge", "PartyStreams", "ReleaseSchedule",
           "applied_noise_bound", "clique_labels", "matrix_noise_bound"]
