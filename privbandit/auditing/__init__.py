"""Auditing the registry's private algorithms end to end, on neighbouring environments.

Each private registry entry declares how it is audited beside its builder
(`privbandit.registry.AuditProfile`: its small worlds, its flips, its black-box
size and flip, its one-run canaries); this package reads nothing else about it.

- `target`: an entry prepared for auditing (`AuditTarget`: the registry visited
  once, runs built by the entry's own builder on its world, its neighbour
  `Environment.neighbour(flip)` or a copy holding canaries);
- `end_to_end`: white-box forced replay of an entry's run against neighbours,
  flips chosen from what the run declares (`audit_entry`, `audit_registry`);
- `black_box`: sampled transcripts of an entry's runs, audited black-box;
- `canaries`: one-run audits with canary user-rounds;
- `command`: `privbandit audit` (`--end-to-end`, `--black-box N`, `--one-run`).

The audit layer (`privbandit.audits`) holds the statistics and never learns
what a bandit is; this package builds its plain callables from registry entries.
"""
