"""What a guarded federation reports: its ledgers, communication, clusters and guarantee."""
from __future__ import annotations

import numpy as np

from privbandit.accounting.ledger import Ledger
from privbandit.accounting.statement import PrivacyStatement, Relation

from ..comm import CommLog


class GuardedReports:
    """Mixin of the guarded algorithms.  The class names `unit` (the neighbouring relation's
    unit, a phrase) and `released_by` (the role whose statistics leave it); an instance holds
    `streams` (`PartyStreams`), `labels` (clusters) and `_comm` (`CommLog`)."""

    unit: str
    released_by: str
    relation: Relation = Relation.RECORD
    caveat: str = ""

    @property
    def comm(self) -> CommLog:
        return self._comm

    def ledgers(self) -> list[Ledger]:
        return list(self.streams.ledgers)

    def cluster_labels(self) -> np.ndarray:
        return self.labels.copy()

    def privacy(self) -> PrivacyStatement:
        return self.streams.statement(
            self.unit, f"every statistic leaving a {self.released_by} is a noisy prefix of a "
                       "continual-release stream; clusters, downloads and timing are "
                       "post-processing" + self.caveat, self.relation)
