"""Budget-vs-regret studies: TOML specifications, a resumable runner, summaries, plots."""
from .runner import StudyError, StudyOutcome, execute_run, run_seed, run_study
from .spec import AlgorithmSpec, RunSpec, StudySpec, load_study, parse_study, study_from_dict

__all__ = [
    "AlgorithmSpec", "RunSpec", "StudyError", "StudyOutcome", "StudySpec", "execute_run",
    "load_study", "parse_study", "run_seed", "run_study", "study_from_dict",
]
