"""Seed 000: federated online clustering of bandits (FCLUB, FCLUB-DC, CDP-FCLUB-DC).

- `FclubConfig`: sizes, sharing mode, detection and radius settings (validated).
- `CdpPlan`: cluster-level DP -- calibration (tight | paper), noise, ledgers, beta.
- `FederatedClub`: the algorithm (and Homo / Homo-DC with `detect=False`).
- `PerServer`: CLUB or SCLUB run separately on each local server (baselines).
- `make_policy(name, ...)`: build any of the registered algorithms by name.
- `fclub.lockstep`: the batched twins of these classes, registered on import.
- `fclub.audit`: the end-to-end audit adapter and its positive controls.
- `fclub.study`: registration of the algorithms for studies (imported lazily).
"""
from . import lockstep  # noqa: F401 (registers the batched twins: runtime.lockstep)
from .algorithm import FederatedClub
from .baselines import ALGORITHMS, PerServer, make_policy
from .config import FclubConfig, server_of_users
from .privacy import CALIBRATIONS, CdpPlan

__all__ = [
    "ALGORITHMS", "CALIBRATIONS", "CdpPlan", "FclubConfig", "FederatedClub", "PerServer",
    "make_policy", "server_of_users",
]
