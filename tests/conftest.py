"""Suite-wide test settings: Hypothesis without deadlines (shared, noisy machines)."""
from hypothesis import HealthCheck, settings

settings.register_profile(
    "privbandit", deadline=None, suppress_health_check=[HealthCheck.too_slow], max_examples=60
)
settings.load_profile("privbandit")
