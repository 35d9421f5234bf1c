"""The figures of a results folder: the ledgers picture steps at each charge."""
import numpy as np
import pytest

from privbandit.studies.plots import _ledger_panel, ledger_steps, plot_ledgers, plots_available


def test_a_ledger_line_is_zero_before_its_charges_and_steps_at_each():
    x, y = ledger_steps([[19, 0.5], [60, 1.25]], horizon=100)
    assert x.tolist() == [1, 20, 61, 100]
    assert y.tolist() == [0.0, 0.5, 1.25, 1.25]
    x, y = ledger_steps([[0, 2.0]], horizon=50)  # a whole stream charged before round 1
    assert (x.tolist(), y.tolist()) == ([1, 1, 50], [0.0, 2.0, 2.0])


@pytest.mark.skipif(not plots_available(), reason="needs matplotlib")
def test_the_ledgers_picture_draws_every_party_of_every_budget(tmp_path):
    import matplotlib.pyplot as plt

    def record(eps, seed):
        return {"run_id": f"p-{eps}-{seed}", "horizon": 100, "final_regret": 1.0,
                "rounds": [0, 49, 99], "comm_rounds_curve": [0, 3, 6],
                "ledger_trace": {"party 0": [[0, eps]], "party 1": [[9, eps / 2], [59, eps]]},
                "run": {"label": "private", "algorithm": "toy", "cell": {"epsilon": eps},
                        "seed_index": seed, "base_seed": 1}}

    records = [record(eps, s) for eps in (1.0, 4.0) for s in (0, 1)]
    assert plot_ledgers(records, tmp_path / "ledgers.png").stat().st_size > 1000
    # every party of each budget's first seed is one step line ending at its budget
    ax = plt.figure().add_subplot()
    _ledger_panel(plt, ax, "private", [(1.0, records[0]), (4.0, records[2])])
    ends = sorted(line.get_ydata()[-1] for line in ax.lines)
    assert ends == pytest.approx([1.0, 1.0, 4.0, 4.0])
    assert np.all(np.diff(ax.lines[1].get_ydata()) >= 0)
    plt.close("all")


@pytest.mark.skipif(not plots_available(), reason="needs matplotlib")
def test_the_federation_gain_figure_places_the_private_runs_between_alone_and_the_ceiling(
        tmp_path):
    import matplotlib.pyplot as plt

    from privbandit.studies.plots import plot_all

    finals = {"alone": [100.0, 110.0, 105.0], "fed": [50.0, 60.0, 52.0]}
    records = []
    for label, cells in (("alone", [None]), ("fed", [None]), ("private", [1.0, 4.0])):
        for eps in cells:
            for seed in range(3):
                final = (finals[label][seed] if eps is None
                         else 100.0 - 10 * eps + seed)  # FGR rises with epsilon
                records.append({
                    "run_id": f"{label}-{eps}-{seed}", "horizon": 100, "final_regret": final,
                    "rounds": [0, 99], "cumulative_regret": [0.0, final],
                    "comm_rounds_curve": [0, 1], "ledger_trace": {},
                    "run": {"label": label, "algorithm": label, "seed_index": seed,
                            "base_seed": 1, "cell": {} if eps is None else {"epsilon": eps}}})
    paths = plot_all(records, tmp_path, ("private", float("inf")),
                     ("private", "alone", "fed"))
    assert [p.name for p in paths][-1] == "federation_gain.png"
    assert paths[-1].stat().st_size > 1000
    (tmp_path / "two").mkdir()
    assert len(plot_all(records, tmp_path / "two", None, ("private", "alone"))) == 4
    plt.close("all")
