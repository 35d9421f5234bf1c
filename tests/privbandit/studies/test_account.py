"""`privbandit account`: every private family's statement and ledger spends."""
from privbandit.cli import main

# one private algorithm of each family (vertical federation has none: its masks are lossless)
FCLUB_ENV = "dim = 4\nusers = 12\nclusters = 2\nitems = 5\nservers = 2\n"
# each family's study sets only the keys all its algorithms read
FAMILIES = (
    (("fclub-dc", "cdp-fclub-dc", "cdp-fclub-dc+"), FCLUB_ENV),
    (("cdp-fedc3ucb-h", "cdp-fedc3ucb-h+"), "users = 6\nclusters = 2\nitems = 8\nlist_len = 2\n"),
    (("cdp-mab", "ddp-mab", "hdp-mab"), "users = 6\narms = 4\n"),
    (("anonymous-base-laplace",), "arms = 4\nthreshold = 2\ncluster_size = 3\n"),
)
STUDY = """
name = "every-private-family"
horizon = 1500
seeds = 1
[environment]
{env}
{algorithms}
"""
ALGORITHMS = ("cdp-fclub-dc", "cdp-fclub-dc+", "cdp-fedc3ucb-h", "cdp-fedc3ucb-h+", "cdp-mab",
              "ddp-mab", "hdp-mab", "anonymous-base-laplace")


def _account(tmp_path, capsys, algorithms, *args, env=FCLUB_ENV):
    tables = "".join(f'[[algorithm]]\nname = "{n}"\n' + (
        "[algorithm.params]\ncomponents = 2\n" if n == "hdp-mab" else "") + (
        "[algorithm.grid]\nepsilon = [1]\n" if n.startswith(("cdp", "ddp", "hdp", "anon")) else "")
        for n in algorithms)
    path = tmp_path / "study.toml"
    path.write_text(STUDY.format(env=env, algorithms=tables))
    assert main(["account", str(path), *args]) == 0
    return capsys.readouterr().out


def test_account_prints_every_private_familys_statement_and_ledgers(tmp_path, capsys):
    out = "".join(_account(tmp_path, capsys, names, "--horizon", "1200", env=env)
                  for names, env in FAMILIES)
    heads = [line for line in out.splitlines() if not line.startswith("  ")]
    assert [h.split(" [")[0] for h in heads] == list(ALGORITHMS)  # the non-private one is skipped
    assert all("[epsilon=1]:" in h for h in heads)
    blocks = out.split("\n" + "cdp-mab [")[1]
    assert "at delta=0 (pure DP) (pure-dp" in blocks  # pure-DP ledgers: what they have
    assert "spent epsilon=1 of 1 at delta=1e-05 (exact-gaussian" in out  # (epsilon, delta) ones
    assert "cdp-fclub-dc [epsilon=1]: (1, 1e-05)-DP for one user-round's reward" in out
    assert "more ledgers alike)" in out  # identical agents' ledgers folded into one line
    assert "NOT DP" not in out


def test_account_of_a_study_without_private_algorithms(tmp_path, capsys):
    # linucb has no servers: the study sets only the world both read
    out = _account(tmp_path, capsys, ("fclub-dc", "linucb"), env=FCLUB_ENV.replace(
        "servers = 2\n", ""))
    assert out.strip() == "no private algorithm in this study: nothing is spent"


def test_account_flags_a_not_dp_release(tmp_path, capsys):
    path = tmp_path / "raw.toml"
    algorithm = ('[[algorithm]]\nname = "cdp-fclub-dc-paper"\npreset = "paper"\n'
                 '[algorithm.params]\ndetection = "raw"\nepsilon = 1\n')
    path.write_text(STUDY.format(env=FCLUB_ENV, algorithms=algorithm))
    assert main(["account", str(path), "--horizon", "400"]) == 0
    assert "NOT DP" in capsys.readouterr().out
