"""One seed's runs of the vertical family's setups, as the runner plays them."""
from privbandit.runtime import run_setup, seed_streams
from privbandit.vertical import TrafficRecorder, partial_local_setup, vertical_setup


def run_vertical(policy, env, horizon, seed, **options):
    """VFUCB / VFTS on `env`, the mask from `seed`'s "secrets" stream."""
    masks = seed_streams(seed)["secrets"]
    return run_setup(vertical_setup(policy, env, horizon, masks, **options), seed)


def run_partial_local(policy, env, widths, horizon, seed):
    return run_setup(partial_local_setup(policy, env, widths, horizon), seed)


def collect_traffic(policy, env, horizon, seed, **options):
    """Passive party `party`'s traffic of one run."""
    recorder = TrafficRecorder(policy, env, horizon, seed_streams(seed)["secrets"], **options)
    run_setup(recorder.setup, seed)
    return recorder.traffic()


def mask_stream(seed):
    return seed_streams(seed)["secrets"]
