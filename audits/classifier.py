"""A classifier-based tester for vector and matrix outputs (DP-Sniper style).

    ClassifierTester(model="logistic", candidates=256, holdout=0.2)
    ClassifierStatistic(model="logistic")

Bichsel, Steffen, Bogunovic & Vechev (S&P 2021, DP-Sniper): a classifier
trained to tell the dataset's outputs from the neighbour's estimates
P(neighbour | output); thresholding its score gives the events whose
probability ratio is largest, which a hand-picked projection can miss (a
single mis-scaled coordinate, a pattern of sparse-vector answers).  Here the
classifier is fitted on the selection part only (scikit-learn, the `audit`
extra, imported when first used), its score is the statistic, and the
threshold search and Clopper-Pearson bounds of `ThresholdTester` give the
bound: valid whatever the classifier learned, since the evaluation part
never trained it.

Models: "logistic" (logistic regression on the standardized outputs and
their squares: linear shifts and variance changes) and "boosting"
(histogram gradient boosting: any shape, slower).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from privbandit.accounting.errors import invalid, require_extra

from .statistics import _rows
from .testers import ThresholdTester

_MODELS = ("logistic", "boosting")


@dataclass(frozen=True)
class ClassifierStatistic:
    """The fitted classifier's log-odds that an output came from the neighbour."""

    model: str = "logistic"
    name: str = "classifier"

    def __post_init__(self) -> None:
        if self.model not in _MODELS:
            raise invalid("model", self.model, "one of " + ", ".join(map(repr, _MODELS)))

    def fit(self, selection0: np.ndarray, selection1: np.ndarray):
        x0, x1 = _rows(selection0), _rows(selection1)
        x = np.concatenate([x0, x1])
        labels = np.r_[np.zeros(len(x0)), np.ones(len(x1))]
        centre, scale = x.mean(axis=0), x.std(axis=0)
        scale[scale == 0] = 1.0
        if self.model == "logistic":
            lm = require_extra("sklearn.linear_model", "audit", "the classifier tester")
            clf = lm.LogisticRegression(C=1.0, max_iter=500)
            features = lambda v: _quadratic((_rows(v) - centre) / scale)  # noqa: E731
        else:
            ens = require_extra("sklearn.ensemble", "audit", "the classifier tester")
            clf = ens.HistGradientBoostingClassifier(max_iter=100, random_state=0)
            features = lambda v: (_rows(v) - centre) / scale  # noqa: E731
        clf.fit(features(x), labels)
        return _Score(clf, features, self.name)


@dataclass(frozen=True, eq=False)
class _Score:
    clf: Any
    features: Any
    name: str

    def __call__(self, outputs: np.ndarray) -> np.ndarray:
        return np.asarray(self.clf.decision_function(self.features(outputs)), dtype=float)


def _quadratic(z: np.ndarray) -> np.ndarray:
    return np.concatenate([z, z * z], axis=1)


@dataclass(frozen=True)
class ClassifierTester(ThresholdTester):
    """Threshold events on a classifier's score (DP-Sniper); needs the `audit` extra."""

    statistic: Any = field(default_factory=ClassifierStatistic)

    name = "classifier"
    assumptions = "none (any mechanism)"
