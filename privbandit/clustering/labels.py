"""Partitions as label arrays: canonical labels, and cliques of a link matrix."""
from __future__ import annotations

import numpy as np

from ..errors import config_error


def true_clusters(clusters: object, unit: str) -> tuple[np.ndarray, np.ndarray]:
    """A yardstick's hidden clusters: (the labels as given, each `unit`'s cluster 0..m-1);
    refuses anything but a non-empty 1-D array, naming `unit`."""
    labels = np.asarray(clusters)
    if labels.ndim != 1 or labels.size == 0:
        raise config_error("clusters", labels.shape, "a non-empty 1-D array of the true "
                           f"cluster of each {unit}")
    return labels.copy(), np.unique(labels, return_inverse=True)[1].ravel()


def by_first_appearance(labels: np.ndarray) -> np.ndarray:
    """The same partition labelled 0..m-1 in order of first appearance."""
    _, first, inverse = np.unique(labels, return_index=True, return_inverse=True)
    return np.argsort(np.argsort(first))[inverse.ravel()]


def by_smallest_member(labels: np.ndarray) -> np.ndarray:
    """The same partition, each unit's cluster named by its smallest unit (the convention of
    `cluster_labels()`): labels (n,) of any integers."""
    _, index = np.unique(labels, return_inverse=True)
    index = index.ravel()
    smallest = np.full(int(index.max()) + 1, index.size)
    np.minimum.at(smallest, index, np.arange(index.size))
    return smallest[index]


def clique_labels(links: np.ndarray) -> np.ndarray:
    """Greedy complete-linkage partition of an (n, n) bool link matrix: each unit,
    best-connected first, joins the first group it is linked to entirely.  Returns the
    smallest member of each unit's group."""
    n = links.shape[0]
    groups: list[list[int]] = []
    for u in np.argsort(-links.sum(axis=1), kind="stable"):
        for group in groups:
            if links[u, group].all():
                group.append(int(u))
                break
        else:
            groups.append([int(u)])
    labels = np.empty(n, dtype=np.int64)
    for group in groups:
        labels[group] = min(group)
    return labels
