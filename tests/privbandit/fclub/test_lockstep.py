"""FCLUB-family replicates in lockstep: each replicate is the separate run of its seed."""
import textwrap

import numpy as np
import pytest

from privbandit.fclub.models import inverse, logdet, logdets
from privbandit.registry import get_algorithm
from privbandit.runtime import run
from privbandit.runtime.lockstep import run_lockstep

SEEDS = [np.random.SeedSequence(5, spawn_key=(i,)) for i in range(3)]
WORLD = {"setting": "seed000", "servers": 5}

def build_run(name: str, cfg: dict, seed) -> tuple:
    """(policy, world, horizon) of entry `name`'s run on `seed`."""
    built = get_algorithm(name).setup(cfg, seed)
    return built.protocol, built.env, built.horizon



def config(name: str, horizon: int, **values) -> dict:
    return {**get_algorithm(name).defaults, "horizon": horizon, "environment": WORLD, **values}


def test_batched_logdets_and_inverses_are_those_of_one_matrix_at_a_time():
    rng = np.random.default_rng(0)
    a = rng.normal(size=(6, 12, 4))
    grams = np.einsum("mki,mkj->mij", a, a) + np.eye(4)
    grams[2] = -np.eye(4)  # not positive definite: -inf, as alone
    batch = logdets(grams)
    assert np.array_equal(batch, [logdet(g) for g in grams])
    assert batch[2] == -np.inf
    np.testing.assert_allclose(batch[[0, 1, 3]], np.linalg.slogdet(grams[[0, 1, 3]])[1],
                               rtol=1e-12)
    assert np.array_equal(inverse(grams), np.stack([inverse(g) for g in grams]))


def test_fclub_dc_state_after_many_uploads_is_the_separate_runs():
    """Long enough for phases, renewals, and uploads and downloads in most rounds; the
    stacked arrays hold what each separate run's DelayedSync and models hold."""
    cfg = config("fclub-dc", 1500)
    alone = []
    for seed in SEEDS:
        policy, env, horizon = build_run("fclub-dc", cfg, seed)
        alone.append((policy, run(policy, env, horizon, seed)))
    built = [build_run("fclub-dc", cfg, seed) for seed in SEEDS]
    policies = [b[0] for b in built]
    together = run_lockstep(policies, [b[1] for b in built], 1500, SEEDS)
    for (single, a), p, b in zip(alone, policies, together, strict=True):
        np.testing.assert_array_equal(b.regret, a.regret)
        assert b.comm == a.comm and a.comm["messages_by_direction"]["download"] > 1000
        np.testing.assert_array_equal(b.comm_rounds, a.comm_rounds)
        for name in ("S", "u", "logdet_s", "S_g", "logdet_g", "pend_s", "s_down"):
            np.testing.assert_allclose(getattr(p.sync, name), getattr(single.sync, name),
                                       rtol=1e-12, atol=1e-12, err_msg=name)
        for name in ("n_sync", "n_g", "pend_n", "n_down", "k_of"):
            np.testing.assert_array_equal(getattr(p.sync, name), getattr(single.sync, name))
        for name in ("inv", "b", "logdet", "count"):
            np.testing.assert_allclose(getattr(p.sync.models, name),
                                       getattr(single.sync.models, name), rtol=1e-12,
                                       atol=1e-12, err_msg=name)
        np.testing.assert_array_equal(p.cluster_labels(), single.cluster_labels())



def guarded_runs(cfg: dict, seeds=SEEDS):
    """(policy, result) of separate runs, then of runs in lockstep, of "cdp-fclub-dc+"."""
    alone = []
    for seed in seeds:
        policy, env, horizon = build_run("cdp-fclub-dc+", cfg, seed)
        alone.append((policy, run(policy, env, horizon, seed)))
    built = [build_run("cdp-fclub-dc+", cfg, seed) for seed in seeds]
    together = run_lockstep([b[0] for b in built], [b[1] for b in built], cfg["horizon"], seeds)
    return alone, list(zip([b[0] for b in built], together, strict=True))


def test_guarded_runs_its_seeds_one_by_one():
    # the billboard's shared track has no batched twin: the entry runs seeds separately
    cfg = config("cdp-fclub-dc+", 300, epsilon=2.0)
    assert not build_run("cdp-fclub-dc+", cfg, SEEDS[0])[0].lockstep_ready
    results = get_algorithm("cdp-fclub-dc+").run_seeds(cfg, SEEDS[:2])
    assert all("lockstep_replicates" not in r.timings for r in results)


@pytest.mark.parametrize("values", [
    {"epsilon": 1.0, "mechanism": "tree", "schedule": "every-round"},
    {"epsilon": 50.0, "detection": "noise-aware", "schedule": "every-round"},
    {"epsilon": 8.0, "delta": 0.1, "calibration": "paper", "detection": "raw",
     "mechanism": "tree", "schedule": "every-round"},
])
def test_cdp_fclub_dc_replicates_are_their_separate_runs(values):
    """The paper's path (raw buffers): its every-round twin plays the seeds in lockstep."""
    cfg = config("cdp-fclub-dc-paper", 900, **values)
    alone = []
    for seed in SEEDS:
        policy, env, horizon = build_run("cdp-fclub-dc-paper", cfg, seed)
        alone.append((policy, run(policy, env, horizon, seed)))
    built = [build_run("cdp-fclub-dc-paper", cfg, seed) for seed in SEEDS]
    policies = [b[0] for b in built]
    assert policies[0].lockstep_ready
    together = run_lockstep(policies, [b[1] for b in built], 900, SEEDS)
    for (single, a), p, b in zip(alone, policies, together, strict=True):
        np.testing.assert_array_equal(b.regret, a.regret)
        np.testing.assert_array_equal(b.cluster_error, a.cluster_error)
        assert b.ledgers == a.ledgers and b.ledger_trace == a.ledger_trace
        spent = [led["epsilon_spent"] for led in b.ledgers]  # one ledger per renewed tree
        assert 0 < min(spent) and max(spent) <= values["epsilon"] * (1 + 1e-9)
        assert b.comm == a.comm and a.comm["messages_by_direction"]["upload"] > 0
        assert b.privacy == a.privacy and b.timings["lockstep_replicates"] == 3
        np.testing.assert_array_equal(b.comm_rounds, a.comm_rounds)
        for name in ("S", "u", "logdet_s", "S_g", "logdet_g", "pend_s", "s_down", "last"):
            np.testing.assert_allclose(getattr(p.sync, name), getattr(single.sync, name),
                                       rtol=1e-12, atol=1e-12, err_msg=name)
        for name in ("inv", "b", "logdet", "count"):
            np.testing.assert_allclose(getattr(p.sync.models, name),
                                       getattr(single.sync.models, name), rtol=1e-12,
                                       atol=1e-12, err_msg=name)


@pytest.mark.parametrize("name", ["club-per-server", "sclub-per-server", "homo-dc", "fclub",
                                  "homo"])
def test_baselines_run_their_seeds_in_lockstep(name):
    entry = get_algorithm(name)
    cfg = config(name, 1200)
    alone = []
    for seed in SEEDS:
        policy, env, horizon = build_run(name, cfg, seed)
        alone.append((policy, run(policy, env, horizon, seed, algorithm=name)))
    together = entry.run_seeds(cfg, SEEDS)
    for (single, a), b in zip(alone, together, strict=True):
        np.testing.assert_array_equal(b.regret, a.regret)
        assert b.algorithm == a.algorithm == name and b.params == a.params
        assert b.timings["lockstep_replicates"] == 3
        assert b.comm == a.comm
        if name in ("club-per-server", "sclub-per-server", "fclub"):
            np.testing.assert_array_equal(b.cluster_error, a.cluster_error)
            assert single.cluster_labels() is not None


def _separate_and_fresh(name, cfg):
    """Policies of `name` played in separate runs of SEEDS, and fresh ones with their worlds."""
    alone = []
    for seed in SEEDS:
        policy, env, horizon = build_run(name, cfg, seed)
        run(policy, env, horizon, seed)
        alone.append(policy)
    built = [build_run(name, cfg, seed) for seed in SEEDS]
    return alone, [b[0] for b in built], built


def test_club_per_server_state_is_the_separate_runs():
    cfg = config("club-per-server", 1500)
    alone, policies, built = _separate_and_fresh("club-per-server", cfg)
    run_lockstep(policies, [b[1] for b in built], 1500, SEEDS)
    for single, p in zip(alone, policies, strict=True):
        rounds = p.replicate_state()["rounds"]
        np.testing.assert_array_equal(rounds, single.replicate_state()["rounds"])
        np.testing.assert_array_equal(p.cluster_labels(), single.cluster_labels())
        assert len(np.unique(p.cluster_labels())) > p.server.max() + 1  # servers split
        for club, club1 in zip(p.policies, single.policies, strict=True):
            np.testing.assert_array_equal(club.graph.adjacency, club1.graph.adjacency)
            np.testing.assert_allclose(club.clusters.inv, club1.clusters.inv, rtol=1e-12,
                                       atol=1e-12)


def test_the_main_jobs_study_gives_the_records_of_seed_by_seed_runs(tmp_path):
    """The default trade-off study's four algorithms, at a small horizon, through the
    runner: lockstep by default, the records of seed-by-seed runs."""
    from concurrent.futures import ThreadPoolExecutor

    from privbandit.studies import parse_study, run_study

    spec = parse_study(textwrap.dedent("""
        name = "main-job-small"
        horizon = 400
        seeds = 2
        max_points = 400
        [environment]
        setting = "seed000"
        servers = 5
        [[algorithm]]
        name = "club-per-server"
        [[algorithm]]
        name = "fclub-dc"
        [[algorithm]]
        name = "cdp-fclub-dc"
        [algorithm.grid]
        epsilon = [1.0]
        [[algorithm]]
        name = "cdp-fclub-dc+"
        [algorithm.grid]
        epsilon = [1.0]
    """))
    with ThreadPoolExecutor(1) as pool:
        together = run_study(spec, tmp_path / "a", executor=pool, progress=False)
        separate = run_study(spec, tmp_path / "b", executor=pool, progress=False,
                             lockstep=False)
    assert len(together.records) == 8
    for a, b in zip(separate.records, together.records, strict=True):
        assert b["run_id"] == a["run_id"]
        np.testing.assert_array_equal(b["cumulative_regret"], a["cumulative_regret"])
        assert b["ledgers"] == a["ledgers"] and b["comm"] == a["comm"]
        assert "lockstep_replicates" not in a["timings"]
        # the private entries act on released data only, which their batched twins predate
        batched = b["run"]["algorithm"] in ("club-per-server", "fclub-dc")
        assert b["timings"].get("lockstep_replicates") == (2 if batched else None)


def test_sclub_per_server_state_is_the_separate_runs():
    """Each server's SCLUB sees its own round count: stages start at different rounds."""
    cfg = config("sclub-per-server", 1500)
    alone, policies, built = _separate_and_fresh("sclub-per-server", cfg)
    assert policies[0].lockstep_ready
    run_lockstep(policies, [b[1] for b in built], 1500, SEEDS)
    for single, p in zip(alone, policies, strict=True):
        rounds = p.replicate_state()["rounds"]
        np.testing.assert_array_equal(rounds, single.replicate_state()["rounds"])
        assert len({s.stage for s in p.policies}) > 1 or len(set(rounds.tolist())) > 1
        for sclub, sclub1 in zip(p.policies, single.policies, strict=True):
            assert sclub.stage == sclub1.stage and sclub.stage_end == sclub1.stage_end
            for name in ("label", "size", "user_checked", "ref_count"):
                np.testing.assert_array_equal(getattr(sclub, name), getattr(sclub1, name))
            np.testing.assert_allclose(sclub.clusters.inv, sclub1.clusters.inv, rtol=1e-12,
                                       atol=1e-12)
