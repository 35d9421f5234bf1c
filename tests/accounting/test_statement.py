"""PrivacyStatement: typed relations, validation, and the stable JSON form."""
from __future__ import annotations

import json

import pytest

from privbandit.accounting import LaplaceEvent, Ledger, PrivacyStatement, Relation
from privbandit.accounting.errors import InvalidParameterError
from privbandit.accounting.statement import JSON_KEYS


def test_json_form_has_fixed_keys_and_round_trips():
    s = PrivacyStatement(Relation.CLUSTER, 1.0, 1e-5, "exact-gaussian", False,
                         unit="one observation of one local cluster", summary="(1, 1e-05)-CDP",
                         details={"L": 5, "sigma": 2.5})
    data = json.loads(json.dumps(s.to_dict()))
    assert tuple(data) == JSON_KEYS == ("relation", "epsilon", "delta", "accountant",
                                        "float_safe", "unit", "statement", "details")
    assert data["relation"] == "cluster-level" and data["float_safe"] is False
    assert PrivacyStatement.from_dict(data) == s and s.is_dp


def test_non_dp_statements_carry_no_epsilon():
    masks = PrivacyStatement("masking", unit="passive features")
    assert masks.relation is Relation.MASKING and not masks.is_dp and masks.epsilon is None
    none = PrivacyStatement.none("reads raw rewards")
    assert none.to_dict()["relation"] == "none" and none.summary == "none: reads raw rewards"
    assert [r.is_dp for r in Relation] == [True, True, True, True, True, False, False, False]


@pytest.mark.parametrize(("args", "kwargs", "match"), [
    (("agent-level",), {}, "epsilon must be a finite number > 0 for a agent-level"),
    (("record-level", 1.0, 1.0, "pure-dp"), {}, r"delta must be a number in \[0, 1\)"),
    (("user-level", 1.0), {}, "accountant must be the name"),
    (("k-anonymity", 2.0), {}, r"epsilon must be \(None, 0\) for a k-anonymity statement"),
    (("cluster",), {}, "relation must be one of"),
    (("none",), {"float_safe": "yes"}, "float_safe must be True, False or None"),
    (("none",), {"details": []}, "details must be a dict"),
])
def test_bad_statements_are_refused(args, kwargs, match):
    with pytest.raises(InvalidParameterError, match=match):
        PrivacyStatement(*args, **kwargs)


def test_from_dict_refuses_unknown_keys():
    data = PrivacyStatement.none("x").to_dict()
    with pytest.raises(InvalidParameterError, match="exactly the keys"):
        PrivacyStatement.from_dict({**data, "guarantee": "none"})


def test_a_ledger_records_its_statement():
    ledger = Ledger("user 3", 1.0)
    assert "statement" not in ledger.summary()
    ledger.declare(PrivacyStatement(Relation.USER, 1.0, 0.0, "pure-dp", True, unit="user 3"))
    ledger.charge(LaplaceEvent(1.0, 1.0))
    assert ledger.summary()["statement"]["unit"] == "user 3"
    with pytest.raises(InvalidParameterError, match="statement must be a PrivacyStatement"):
        ledger.declare({"relation": "user-level"})
