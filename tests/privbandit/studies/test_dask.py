"""A real Dask LocalCluster with two worker processes gives the local pool's results."""
import os
from concurrent.futures import ThreadPoolExecutor

import pytest

from privbandit.studies import parse_study, run_study

from .test_runner import study, without_times

distributed = pytest.importorskip("distributed")


def test_dask_cluster_matches_local_pool(tmp_path, monkeypatch):
    monkeypatch.setenv("PRIVBANDIT_ALGORITHMS", "tests.privbandit.studies.toy_algorithm")
    monkeypatch.setenv("PYTHONPATH", os.getcwd())
    spec = parse_study(study())
    with ThreadPoolExecutor(2) as pool:
        local = run_study(spec, tmp_path / "local", executor=pool, progress=False)
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster, distributed.Client(cluster) as client:
        remote = run_study(spec, tmp_path / "dask", executor=client.get_executor(), progress=False)
        workers = client.run(os.getpid)
    assert len(workers) == 2 and os.getpid() not in workers.values()
    assert without_times(local.records) == without_times(remote.records)


def test_unreachable_scheduler_is_a_config_error():
    from privbandit.errors import ConfigError
    from privbandit.studies.command import dask_executor

    with pytest.raises(ConfigError, match="is unreachable"):
        dask_executor("tcp://127.0.0.1:9")
