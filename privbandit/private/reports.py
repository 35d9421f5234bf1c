"""What a guarded federation reports: its ledgers, communication, clusters and guarantee.

The guarantee's trust model is part of its statement: it covers what the
global server and every OTHER party receive; a party holds its units' raw data,
and where it serves several users (a local server) it acts for all of them on
that data, so the users of one party are not protected from each other --
one user's reward changes the actions later shown to the other users of its
party.  That is not joint differential privacy, and the statement says so.
"""
from __future__ import annotations

import numpy as np

from privbandit.accounting.ledger import Ledger
from privbandit.accounting.statement import PrivacyStatement, Relation

from ..comm import CommLog


class GuardedReports:
    """Mixin of the guarded and released federations.  The class names `unit` (the
    neighbouring relation's unit, a phrase), `released_by` (the role whose statistics leave
    it) and `relation`; an instance holds `streams` (`streams.UnitStreams`: `RewardStreams`
    or `PartyStreams`), `labels` (clusters) and `_comm` (`CommLog`)."""

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
        role = self.released_by
        article = "an" if role[:1] in "aeiou" else "a"
        several = np.bincount(self.streams.party_of).max(initial=0) > 1
        trust = (f"; trust: it covers what the global server and the other {role}s receive; "
                 f"{article} {role} holds its own raw data"
                 + (f" and acts for all its users on it, so users of the same {role} are "
                    "not protected from each other (not joint DP)" if several else ""))
        return self.streams.statement(
            self.unit, f"every statistic leaving {article} {role} is a noisy prefix of a "
                       "continual-release stream; clusters, downloads and timing are "
                       "post-processing" + self.caveat + trust, self.relation)
