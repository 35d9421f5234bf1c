"""Auditing the registry's private algorithms end to end, on neighbouring environments.

- `end_to_end`: white-box forced replay of an entry's run against neighbours;
- `black_box`: sampled transcripts of an entry's runs, audited black-box;
- `canaries`: one-run audits with canary user-rounds;
- `command`: `privbandit audit`.

The audit layer (`privbandit.audits`) holds the statistics and never learns
what a bandit is; this package builds its plain callables from registry entries.
"""
