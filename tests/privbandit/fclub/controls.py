"""Deliberately broken CDP-FCLUB-DC: the audit's positive controls (tests only).

Both still claim the plan's (epsilon, delta) and charge the same ledgers, so
only an audit of what leaves a local cluster can tell them apart:

- `RawTriggerClub` decides uploads from the raw buffer (the paper's eq. 5),
  so the timing of uploads leaks raw data;
- `NoNoiseClub` uploads the raw buffer and reads raw statistics for local
  deletion and the phase uploads (the public code's noiseless statistics).
"""
from __future__ import annotations

import numpy as np

from privbandit.fclub.algorithm import FederatedClub
from privbandit.fclub.models import logdet
from privbandit.fclub.sync import DelayedSync


class RawBuffers(DelayedSync):
    """Keeps the raw buffer (since the last upload) that a run acting on released data does
    not need: the controls read it."""

    def observe(self, c, x, y, z, t, rng):
        if not self._acts_on_raw:
            self.pend_s[c] += np.multiply.outer(x, x)
            self.pend_u[c] += y * x
        super().observe(c, x, y, z, t, rng)


class RawTriggerSync(RawBuffers):
    def _fires(self, c, logdet_noisy):
        # eq. 5 on the raw buffer, whatever the model acts on
        return logdet(self.S[c] + self.pend_s[c]) - self.logdet_s[c] >= self._ln_u


class NoNoiseSync(RawBuffers):
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
