"""Readers for rating files: MovieLens (u.data, ratings.dat, ratings.csv) and Yelp (JSON lines).

Nothing is downloaded: the caller passes a path to a file it already has.
Every reader returns a `Ratings` table of (user, item, value) triples with
users and items coded 0..U-1 and 0..I-1 in order of their original ids (kept
as strings).  A missing, empty or binary file, a malformed line, and a line
whose number of fields differs from the first line's (a ragged file, or a
last line cut short) are a `DataError` naming the file (and the line).

Formats (`format=` or inferred from the file name):
- "movielens-100k": `u.data`, tab-separated `user item rating timestamp`;
- "movielens-1m":   `ratings.dat`, `user::item::rating::timestamp`;
- "movielens-csv":  `ratings.csv` (20M, 25M, latest), header
  `userId,movieId,rating,timestamp`;
- "yelp":           `*.json` / `*.jsonl` review file, one JSON object per line
  with "user_id", "business_id" and "stars".
"""
from __future__ import annotations

import csv
import json
import math
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import DataError, config_error

FORMATS = ("movielens-100k", "movielens-1m", "movielens-csv", "yelp")


@dataclass(frozen=True)
class Ratings:
    """(user, item, value) triples: users, items (N,) int codes, values (N,) float;
    user_ids (U,), item_ids (I,) the original ids as strings, sorted."""

    users: np.ndarray
    items: np.ndarray
    values: np.ndarray
    user_ids: np.ndarray
    item_ids: np.ndarray
    source: str = "the ratings"  # the file's name, for messages

    @property
    def n_users(self) -> int:
        return int(self.user_ids.size)

    @property
    def n_items(self) -> int:
        return int(self.item_ids.size)

    def __len__(self) -> int:
        return int(self.values.size)


def infer_format(path: str | os.PathLike) -> str:
    """The format implied by the file name (see the module docstring)."""
    name = Path(path).name.lower()
    if name.endswith(".data"):
        return "movielens-100k"
    if name.endswith(".dat"):
        return "movielens-1m"
    if name.endswith(".csv"):
        return "movielens-csv"
    if name.endswith((".json", ".jsonl")):
        return "yelp"
    raise config_error("format", None, f"one of {FORMATS} (cannot infer it from {name!r})")


def _number(value: str, path: Path, line: int) -> float:
    try:
        x = float(value)
    except ValueError:
        raise DataError(f"{path}: line {line}: rating must be a number; got {value!r}") from None
    if not math.isfinite(x):
        raise DataError(f"{path}: line {line}: rating must be finite; got {value!r}")
    return x


def _same_width(fields: list[str], width: int, path: Path, line: int) -> None:
    """Every line has as many fields as the first: a ragged or cut line is an error."""
    if len(fields) != width:
        raise DataError(
            f"{path}: line {line}: expected {width} fields like the first line; got "
            f"{len(fields)} ({fields[:6]!r}): a ragged or truncated file"
        )


def _split_lines(path: Path, sep: str | None) -> Iterator[tuple[str, str, float]]:
    width = None
    with path.open(encoding="utf-8") as fh:
        for line, text in enumerate(fh, start=1):
            if not text.strip():
                continue
            fields = text.strip().split(sep)
            if len(fields) < 3:
                raise DataError(
                    f"{path}: line {line}: expected user, item, rating separated by "
                    f"{sep or 'tabs/spaces'!r}; got {text.strip()[:80]!r}"
                )
            width = len(fields) if width is None else width
            _same_width(fields, width, path, line)
            yield fields[0], fields[1], _number(fields[2], path, line)


def _csv_lines(path: Path) -> Iterator[tuple[str, str, float]]:
    with path.open(encoding="utf-8", newline="") as fh:
        reader = csv.reader(fh)
        header = next(reader, None)
        wanted = ["userId", "movieId", "rating"]
        if header is None or header[:3] != wanted:
            raise DataError(f"{path}: line 1: expected a header starting {wanted}; got {header}")
        for row in reader:
            line = reader.line_num
            if not row:
                continue
            _same_width(row, len(header), path, line)
            yield row[0], row[1], _number(row[2], path, line)


def _yelp_lines(path: Path) -> Iterator[tuple[str, str, float]]:
    with path.open(encoding="utf-8") as fh:
        for line, text in enumerate(fh, start=1):
            if not text.strip():
                continue
            try:
                rec = json.loads(text)
                user, item, stars = rec["user_id"], rec["business_id"], rec["stars"]
            except (json.JSONDecodeError, KeyError, TypeError):
                raise DataError(
                    f"{path}: line {line}: expected a JSON object with user_id, business_id "
                    f"and stars; got {text.strip()[:80]!r}"
                ) from None
            yield str(user), str(item), _number(str(stars), path, line)


def read_ratings(path: str | os.PathLike, format: str | None = None) -> Ratings:
    """Read a rating file into a `Ratings` table (see the module docstring)."""
    p = Path(path)
    fmt = infer_format(p) if format is None else format
    if fmt not in FORMATS:
        raise config_error("format", format, f"one of {FORMATS}")
    if not p.is_file():
        raise DataError(f"ratings file not found: {str(p)!r} (nothing is downloaded)")
    lines = {
        "movielens-100k": lambda: _split_lines(p, None),
        "movielens-1m": lambda: _split_lines(p, "::"),
        "movielens-csv": lambda: _csv_lines(p),
        "yelp": lambda: _yelp_lines(p),
    }[fmt]()
    _check_text(p)
    users, items, values = [], [], []
    try:
        for u, i, v in lines:
            users.append(u)
            items.append(i)
            values.append(v)
    except UnicodeDecodeError as exc:
        raise DataError(f"{p}: not a UTF-8 text file ({exc.reason} at byte {exc.start})") from None
    if not values:
        raise DataError(f"{p}: no ratings found")
    user_ids, user_codes = _codes(users)
    item_ids, item_codes = _codes(items)
    return Ratings(user_codes, item_codes, np.array(values), user_ids, item_ids, str(p))


def _check_text(path: Path) -> None:
    """A NUL byte in the first 64 KiB marks a binary file (text files never hold one)."""
    with path.open("rb") as fh:
        if b"\0" in fh.read(65536):
            raise DataError(f"{path}: a binary file, not a text file of ratings")


def _codes(ids: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Sorted unique ids (numeric ids sorted as numbers) and each entry's code."""
    arr = np.array(ids)
    uniq, codes = np.unique(arr, return_inverse=True)
    if all(s.isdigit() for s in uniq):
        order = np.argsort(uniq.astype(np.int64), kind="stable")
        rank = np.empty_like(order)
        rank[order] = np.arange(order.size)
        uniq, codes = uniq[order], rank[codes]
    return uniq, codes.astype(np.int64)
