"""Cluster detection for clustered bandits: every rule the families detect clusters with.

- `splitmerge.SplitMergeClustering`: split/merge over sets of units from each
  unit's Gram matrix G_u, moments b_u and the moments' noise variance v_u
  (`Partition`: what one call found); no merge rides on one link, and with a
  resolution none without the power to have seen a difference;
  `splitmerge.SetClusters`: the set federations' shared interface (clusters
  started together or alone, detected again at phases, `phase_end`);
- `noise_aware.NoiseAwareClustering`: links that count the privacy noise
  (consistency and power tests) joined as cliques, and the converse test
  `differs`; it reads the caller's ridge arithmetic through `RidgeSpread`;
- `phases`: seed 000's phase-based detection (local edge deletion, global
  merge) and the partition as a set of sets;
- `labels`: canonical labels (`by_first_appearance`, `by_smallest_member`) and
  `clique_labels`.

Every rule reads statistics only: fed released statistics, the partition is
post-processing of the releases.
"""
from .labels import by_first_appearance, by_smallest_member, clique_labels, true_clusters
from .noise_aware import NoiseAwareClustering, RidgeSpread
from .phases import delete_far, merge_global, partition_of, prune_local, ridge_estimates
from .splitmerge import Partition, SetClusters, SplitMergeClustering, phase_end

__all__ = ["NoiseAwareClustering", "Partition", "RidgeSpread", "SetClusters",
           "SplitMergeClustering", "by_first_appearance", "by_smallest_member", "clique_labels",
           "delete_far", "merge_global", "partition_of", "phase_end", "prune_local",
           "ridge_estimates", "true_clusters"]
