"""Deliberately broken CDP-FCLUB-DC: the audit's positive controls (tests only).

Both still claim the plan's (epsilon, delta) and charge the same ledgers, so
only an audit of what leaves a local cluster can tell them apart:

- `RawTriggerClub` decides uploads from the raw buffer (the paper's eq. 5),
  so the timing of uploads leaks raw data;
- `NoNoiseClub` uploads the raw buffer and reads raw statistics for local
  deletion and the phase uploads (the public code's noiseless statistics).
"""
from __future__ import annotations

from privbandit.fclub.algorithm import FederatedClub
from privbandit.fclub.models import logdet
from privbandit.fclub.sync import DelayedSync


class RawTriggerSync(DelayedSync):
    def _fires(self, c, logdet_noisy):
        # eq. 5 on the raw buffer, whatever the model acts on
        return logdet(self.S[c] + self.pend_s[c]) - self.logdet_s[c] >= self._ln_u


class NoNoiseSync(DelayedSync):
    def _contents(self, c, ds, du, logdet_new):
        raw_s, raw_u, _ = self.raw_buffer(c)
        return raw_s, raw_u, logdet(self.S[c] + raw_s)


class RawTriggerClub(FederatedClub):
    delayed_sync = RawTriggerSync


class NoNoiseClub(FederatedClub):
    delayed_sync = NoNoiseSync

    def _reads_raw(self, detection):
        return True


CONTROLS = {"raw-trigger": RawTriggerClub, "no-noise": NoNoiseClub}
