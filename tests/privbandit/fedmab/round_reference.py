"""A round-by-round reference implementation of CDP/DDP/HDP-MAB, for tests only.

It walks the horizon one round at a time: every agent picks its arm from the
current phase (round-robin exploration, local exploitation while a protocol
runs, commit), pull counts are accumulated per round, and the protocols are
simulated message by message with Python sets.  It shares with the fast
engine only what defines the algorithm's inputs (the schedule, the mechanism
factory, the environment) and makes the same random calls in the same order
(reward sums of the pulls it counted, one batched release per epoch, the
participation draw), so on the same seed it must play the same arms.
"""
from __future__ import annotations

import math
from collections import deque

import numpy as np

from privbandit.fedmab.graphs import components, sinks
from privbandit.fedmab.privacy import epoch_mechanism
from privbandit.fedmab.schedule import EpochSchedule


def gis_round(adj: np.ndarray) -> tuple[int, int, int]:
    """(slots, links used summed over slots, messages) of one GIS round."""
    m = adj.shape[0]
    nbrs = [list(np.flatnonzero(adj[i])) for i in range(m)]
    known = [{i} for i in range(m)]
    new = [{i} for i in range(m)]
    slots = links = messages = 0
    while any(len(k) < m for k in known):
        slots += 1
        adv = [(i, j, new[i]) for i in range(m) if new[i] for j in nbrs[i]]
        requests: dict[tuple[int, int], set] = {}
        for j in range(m):
            offers = [(i, labs) for (i, jj, labs) in adv if jj == j]
            for label in set().union(*[labs for _, labs in offers]) - known[j]:
                src = min(i for i, labs in offers if label in labs)
                requests.setdefault((src, j), set()).add(label)
        links += len({frozenset((i, j)) for i, j, _ in adv})
        messages += len(adv) + 2 * len(requests)
        new = [set() for _ in range(m)]
        for (_, j), labs in requests.items():
            new[j] |= labs
        for j in range(m):
            known[j] |= new[j]
    return slots, links, messages


def bfs_distances(adj: np.ndarray, source: int) -> dict[int, int]:
    """Hop distance from `source` to every node it reaches (breadth-first search)."""
    dist = {source: 0}
    queue = deque([source])
    while queue:
        u = queue.popleft()
        for v in map(int, np.flatnonzero(adj[u])):
            if v not in dist:
                dist[v] = dist[u] + 1
                queue.append(v)
    return dist


def sac_round(adj: np.ndarray, graph) -> tuple[int, int]:
    """(slots of the slowest component, links used) of one SAC round."""
    slots_all = links = 0
    for part, sink in zip(components(graph), sinks(graph), strict=True):
        dist = bfs_distances(adj, int(sink))
        parent = {i: min(j for j in np.flatnonzero(adj[i]) if dist[int(j)] == dist[i] - 1)
                  for i in map(int, part) if i != sink}
        pending = {i: {i} for i in parent}
        held_by_sink = {int(sink)}
        slots = 0
        while len(held_by_sink) < part.size:
            slots += 1
            moved: dict[int, set] = {}
            for i, labs in pending.items():
                if labs:
                    links += 1
                    moved.setdefault(int(parent[i]), set()).update(labs)
            pending = {i: moved.get(i, set()) for i in parent}
            held_by_sink |= moved.get(int(sink), set())
        slots_all = max(slots_all, slots)
    return slots_all, links


def reference_run(env, kind, *, epsilon, horizon, rng, participation=1.0, rounds=None,
                  graph=None, server_cost=25.0, agent_cost=1.0, sampler=None):
    """Play `horizon` rounds; returns (arms (T, M), regret (T,), cost, committed)."""
    m, k = env.n_users, env.n_arms
    n_up = max(1, math.ceil(round(participation * m, 9))) if kind == "cdp" else m
    schedule = EpochSchedule.build(epsilon, k, horizon, n_up, rounds)
    reward_rng, noise_rng, protocol_rng = rng.spawn(3)
    if kind == "ddp":
        delay, links, _ = gis_round(graph.adjacency)
        round_cost = agent_cost * links
    elif kind == "hdp":
        delay, links = sac_round(graph.adjacency, graph)
        round_cost = agent_cost * links + server_cost * len(components(graph))
    else:
        delay, round_cost = 0, server_cost * n_up
    arms = np.zeros((horizon, m), dtype=np.int64)
    ybar = np.zeros((m, k))
    counts = np.zeros((m, k), dtype=np.int64)
    active = list(range(k))
    r, prev, start = 1, 0, 0
    phase, exploit_left, local_best, committed, cost = "explore", 0, None, None, 0.0
    for t in range(horizon):
        if phase == "explore":
            arm = active[(t - start) % len(active)]
            arms[t] = arm
            counts[:, arm] += 1
            n = schedule.sizes[r - 1] - prev
            if t - start + 1 < n * len(active):
                continue
            # the epoch is complete: reward sums, release, exchange
            assert np.all(counts[:, active] == n)
            sums = env.draw_sums(np.array(active), n, reward_rng)
            mech = epoch_mechanism(epsilon, n, sampler)
            yhat = mech.release_means(sums / n, noise_rng)
            size = schedule.sizes[r - 1]
            for j, a in enumerate(active):
                ybar[:, a] = (prev / size) * ybar[:, a] + (n / size) * yhat[:, j]
            counts[:] = 0
            prev = size
            if t + 1 == horizon:
                break
            rows = ybar[:, active]
            if kind == "cdp" and n_up < m:
                rows = rows[np.sort(protocol_rng.choice(m, n_up, replace=False))]
            mean = rows.mean(axis=0) if kind != "hdp" else _hdp_mean(ybar[:, active], graph)
            cost += round_cost
            local_best = []
            for i in range(m):
                best_i = active[0]
                for a in active:
                    if ybar[i, a] > ybar[i, best_i]:
                        best_i = a
                local_best.append(best_i)
            top = max(mean)
            best = active[int(np.argmax(mean))]
            radius = schedule.radii[r - 1]
            active = [a for a, v in zip(active, mean, strict=True) if top - v < 2.0 * radius]
            if len(active) == 1 or r == rounds:
                committed = active[0] if len(active) == 1 else best
            r += 1
            phase, exploit_left = ("exploit", delay) if delay else ("after", 0)
            if phase == "after":
                phase, start = ("commit" if committed is not None else "explore"), t + 1
            continue
        if phase == "exploit":
            arms[t] = local_best
            exploit_left -= 1
            if exploit_left == 0:
                phase, start = ("commit" if committed is not None else "explore"), t + 1
            continue
        arms[t] = committed
    return arms, env.regret(arms), cost, committed


def _hdp_mean(rows: np.ndarray, graph) -> np.ndarray:
    total = np.zeros(rows.shape[1])
    for part in components(graph):
        total += rows[part].sum(axis=0)
    return total / rows.shape[0]
