"""The benchmark set file: JSON lines, a header line then one rated position a line (docs/benchmark.md).

Line 1 is the **header**, a JSON object::

    {"format": "tapa-ai-benchmark", "version": 1, "variant": "tapa", "rules": {...},
     "settings": {...what the positions and their ratings depend on...},
     "models": {"net:tapa": {"file": ..., "sha256": ..., "label": ...}, ...},
     "sampling": {...what the sampling games came to...},
     "command": "tapa-ai benchmark build ...", "tapa_ai": "0.1.0"}

Every further line is one **record**: a position before its roll (the JSON position of docs/rules.md, the
side to move ``turn``), its ``dice``, ``phase``, ``source``, the rollout ``seed`` and its ``candidates``:
``move`` (move text), ``key`` (:func:`afterstate_key` of the position after it), ``equity`` (cubeless, the
mover's, by rollout), ``ci95``, ``games``, and for the moves rolled out at build time the paired
``difference`` to the build's best and its ``difference_ci95``; a move first met when a bot is scored is
rolled out then with the set's settings and seed (so on the same dice) and added with ``added_by``.

A build appends each record as one write, flushed and fsynced, so a killed build leaves every finished
position and at most one partial last line, which the next build drops (:func:`read_set` reports it);
``score`` rewrites the file through :func:`tapa_ai.net.atomic_files.atomic_write` when it adds moves. A
finished set may be gzipped (``FILE.jsonl.gz``: read, and rewritten, as such). A set is named by its path,
or by the name of a set shipped in ``tapa_ai/models/benchmarks/<name>.jsonl[.gz]`` (:func:`resolve_set`),
which ``score`` never rewrites.
"""

from __future__ import annotations

import gzip
import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from ...errors import TapaError
from ...rules.options import RuleOptions
from ...rules.outcomes import top_points
from ...rules.position import Position

FORMAT = "tapa-ai-benchmark"
VERSION = 1
RECORD_KEYS = ("index", "position", "dice", "phase", "source", "seed", "candidates")
CANDIDATE_KEYS = ("move", "key", "equity", "ci95", "games")


class BenchmarkError(TapaError, ValueError):
    """A benchmark set that cannot be built, read or scored as asked; ``str()`` is one line saying why."""


def check_integers(*options: tuple[str, object, int]) -> None:
    """BenchmarkError (one line) for the first ``(option name, value, lowest)`` whose value is not an integer
    of at least ``lowest``."""
    for name, value, low in options:
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise BenchmarkError(f"--{name} {value!r}: must be an integer >= {low}")


def set_rules(bench: BenchmarkSet) -> RuleOptions:
    """The rule set a set's header names (BenchmarkError if it is unreadable)."""
    try:
        return RuleOptions.from_dict(bench.header["rules"])
    except (ValueError, TypeError) as error:
        raise BenchmarkError(f"{bench.path}: header rules unreadable ({error})") from None


def afterstate_key(position: Position) -> str:
    """A position after a move as one short string: the 24 stacks (X's 1-point first, bottom to top), the
    checkers off (X, O) and on the bar (X, O), and the side that moved. Equal keys, equal positions."""
    return f"{','.join(position.points)}|{position.off[0]},{position.off[1]}|" \
           f"{position.bar[0]},{position.bar[1]}|{position.turn}"


@dataclass
class BenchmarkSet:
    """A set as read: its header, its records in order, and whether a partial last line was dropped."""

    path: Path
    header: dict
    records: list[dict] = field(default_factory=list)
    partial_tail: bool = False
    """The file ended in a partial line (a build killed while writing it)."""
    every: int = 1
    """``records`` holds every ``every``-th position of the file (a score of part of a set), not all."""

    def keep_every(self, every: int) -> None:
        """Keep every ``every``-th record only (part of the set, as a reroll ``--every`` takes it)."""
        self.records, self.every = self.records[::every], every

    @property
    def planned(self) -> int:
        return int(self.header["settings"]["positions"])

    @property
    def complete(self) -> bool:
        return len(self.records) >= self.planned


def _check_header(path: Path, header) -> dict:
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise BenchmarkError(f"{path}: not a tapa-ai benchmark set (its first line is no header with format "
                             f"{FORMAT!r}; `tapa-ai benchmark build` writes one)")
    version = header.get("version")
    if not isinstance(version, int) or version < 1:
        raise BenchmarkError(f"{path}: header has no valid format version ({version!r})")
    if version > VERSION:
        raise BenchmarkError(f"{path}: format version {version} is newer than this tapa-ai reads ({VERSION}); "
                             f"upgrade tapa-ai")
    for key in ("variant", "rules", "settings", "models"):
        if key not in header:
            raise BenchmarkError(f"{path}: header lacks {key!r}: not a complete benchmark header")
    if not isinstance(header["settings"], dict) or not isinstance(header["settings"].get("positions"), int):
        raise BenchmarkError(f"{path}: header settings lack the number of positions")
    return header


LUCK_MARGIN = 0.25
"""How far past the variant's top points a luck-adjusted rollout's mean may stray: each game's result less the
luck of its rolls can fall outside the points a game can score, so their mean can too, but by little."""


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _interval(value) -> bool:
    return isinstance(value, list) and len(value) == 2 and all(_number(x) for x in value) and value[0] <= value[1]


def check_numbers(candidate: dict, where: str, number: int, limit: float) -> None:
    """BenchmarkError (naming ``where``) unless a candidate's numbers are finite and in range: its ``equity``
    within +-``limit`` (the variant's top points, and a margin for luck-adjusted rollouts), its ``difference``
    within twice that, its intervals two finite numbers in order, its ``games`` a positive integer."""
    what = f"{where}: candidate {number}"
    equity = candidate["equity"]
    if not _number(equity):
        raise BenchmarkError(f"{what} has no finite equity ({equity!r})")
    if abs(equity) > limit + 1e-9:
        raise BenchmarkError(f"{what}: equity {equity!r} lies outside the variant's range [-{limit:g}, {limit:g}]")
    difference = candidate.get("difference")
    if difference is not None and not (_number(difference) and abs(difference) <= 2 * limit + 1e-9):
        raise BenchmarkError(f"{what}: difference {difference!r} is not a number within +-{2 * limit:g}")
    for key in ("ci95", "difference_ci95", "halves"):
        if key in candidate and not (key == "difference_ci95" and candidate[key] is None):
            value = candidate[key]
            if not (_interval(value) if key != "halves" else
                    isinstance(value, list) and len(value) == 2 and all(_number(x) for x in value)):
                raise BenchmarkError(f"{what}: {key} {value!r} is not two finite numbers"
                                     + (", low then high" if key != "halves" else ""))
    games = candidate["games"]
    if isinstance(games, bool) or not isinstance(games, int) or games < 1:
        raise BenchmarkError(f"{what}: games {games!r} is not a positive number of games")


def equity_limit(header: dict) -> float:
    """The largest equity a record of this set may hold: the variant's top points (3 for a backgammon or a
    Tapa mother win, 2 for a Plakoto mother win), plus :data:`LUCK_MARGIN` for a luck-adjusted rollout."""
    try:
        rules = RuleOptions.from_dict(header["rules"])
        limit = float(top_points(rules))
    except (ValueError, TypeError, KeyError) as error:
        raise BenchmarkError(f"header rules unreadable ({error})") from None
    rollout = header["settings"].get("rollout")
    luck = isinstance(rollout, dict) and bool(rollout.get("luck"))
    return limit + (LUCK_MARGIN if luck else 0.0)


def check_record(record, where: str, index: int, limit: float = 3.0) -> dict:
    """``record`` if it is a well-formed record number ``index`` whose equities lie within +-``limit``
    (BenchmarkError naming ``where`` if not)."""
    if not isinstance(record, dict):
        raise BenchmarkError(f"{where}: not a benchmark record (a JSON object)")
    missing = [key for key in RECORD_KEYS if key not in record]
    if missing:
        raise BenchmarkError(f"{where}: record lacks {', '.join(missing)}")
    if record["index"] != index:
        raise BenchmarkError(f"{where}: record number {record['index']!r} where {index} belongs (lines out of "
                             f"order or missing)")
    candidates = record["candidates"]
    if not isinstance(candidates, list) or not candidates:
        raise BenchmarkError(f"{where}: record has no candidate moves")
    for number, candidate in enumerate(candidates):
        if not isinstance(candidate, dict) or any(key not in candidate for key in CANDIDATE_KEYS):
            raise BenchmarkError(f"{where}: candidate {number} lacks one of {', '.join(CANDIDATE_KEYS)}")
        check_numbers(candidate, where, number, limit)
    dice = record["dice"]
    if not (isinstance(dice, list) and len(dice) == 2 and all(isinstance(d, int) and 1 <= d <= 6 for d in dice)):
        raise BenchmarkError(f"{where}: dice {dice!r} are not two numbers 1 to 6")
    return record


def sets_dir() -> Path:
    """Where shipped sets live: ``tapa_ai/models/benchmarks/``."""
    from ...net.shipped import MODELS_DIR

    return MODELS_DIR / "benchmarks"


def shipped_sets() -> list[str]:
    """The names of the shipped sets (``--set NAME``)."""
    return sorted(path.name.removesuffix(".jsonl.gz") for path in sets_dir().glob("*.jsonl.gz"))


def resolve_set(text: str | Path) -> tuple[Path, bool]:
    """(path, shipped) of a set: a file at ``text`` first, else a shipped set of that name
    (``tapa_ai/models/benchmarks/<name>.jsonl.gz`` or ``.jsonl``), else ``text`` as a path (not found)."""
    path = Path(text)
    if path.is_file() or "/" in str(text) or "\\" in str(text) or str(text).startswith("."):
        return path, False
    for suffix in (".jsonl.gz", ".jsonl"):
        shipped = sets_dir() / f"{text}{suffix}"
        if shipped.is_file():
            return shipped, True
    return path, False


def read_set(path: str | Path, allow_partial_tail: bool = False) -> BenchmarkSet:
    """The set in ``path``: header and records, each checked; BenchmarkError (one line) for anything else.

    A partial last line (no newline, not JSON: a build killed while writing it) is an error, unless
    ``allow_partial_tail`` (the build, which drops it and goes on).
    """
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        names = ", ".join(shipped_sets()) or "none"
        raise BenchmarkError(f"{path}: no such file (build one with `tapa-ai benchmark build`, or name a shipped "
                             f"set: {names})") from None
    except OSError as error:
        raise BenchmarkError(f"{path}: cannot read ({error.strerror or error})") from None
    if path.suffix == ".gz":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError) as error:
            raise BenchmarkError(f"{path}: damaged gzip file ({error})") from None
    if not data.strip():
        raise BenchmarkError(f"{path}: empty file, not a benchmark set")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise BenchmarkError(f"{path}: not a benchmark set (not UTF-8 text)") from None
    lines = text.split("\n")
    ends_cleanly = text.endswith("\n")
    if ends_cleanly:
        lines.pop()
    try:
        header = json.loads(lines[0])
    except ValueError:
        header = None
    header = _check_header(path, header)
    try:
        limit = equity_limit(header)
    except BenchmarkError as error:
        raise BenchmarkError(f"{path}: {error}") from None
    result = BenchmarkSet(path, header)
    for number, line in enumerate(lines[1:], start=2):
        last = number == len(lines)
        try:
            record = json.loads(line)
        except ValueError:
            if last and not ends_cleanly:
                if allow_partial_tail:
                    result.partial_tail = True
                    break
                raise BenchmarkError(f"{path} line {number}: truncated record (the build was stopped while "
                                     f"writing it): run the same build command again to repair and finish "
                                     f"the set") from None
            raise BenchmarkError(f"{path} line {number}: not a benchmark record (not JSON)") from None
        result.records.append(check_record(record, f"{path} line {number}", len(result.records), limit))
    if len(result.records) > result.planned:
        raise BenchmarkError(f"{path}: holds {len(result.records)} records but its header plans "
                             f"{result.planned}")
    return result


def _line(data: dict) -> str:
    return json.dumps(data, separators=(",", ":")) + "\n"


def write_set(path: Path, header: dict, records: list[dict]) -> None:
    """The whole set written atomically (a temporary file renamed over ``path``; gzipped for ``.gz``)."""
    from ...net.atomic_files import WriteError, atomic_write

    path = Path(path)
    data = (_line(header) + "".join(_line(record) for record in records)).encode("utf-8")
    if path.suffix == ".gz":
        data = gzip.compress(data, mtime=0)
    try:
        atomic_write(path, lambda handle: handle.write(data))
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(path, 0o666 & ~umask)  # as a plain open() would make it, not the temporary file's 0600
    except (WriteError, OSError) as error:
        raise BenchmarkError(str(error) if isinstance(error, WriteError) else f"cannot write {path}: {error}") from None


def append_record(path: Path, record: dict, handle=None) -> None:
    """Append one record as one line, flushed and fsynced (``handle``: an open append handle to reuse)."""
    line = _line(record).encode("utf-8")
    own = handle is None
    try:
        if own:
            handle = open(path, "ab")
        handle.write(line)
        handle.flush()
        os.fsync(handle.fileno())
    except OSError as error:
        raise BenchmarkError(f"cannot write {path}: {error.strerror or error}") from None
    finally:
        if own and handle is not None:
            handle.close()


def differences(found: dict, wanted: dict, prefix: str = "") -> list[str]:
    """The dotted names of the keys whose values differ between two JSON objects (nested objects walked)."""
    names = []
    for key in sorted(set(found) | set(wanted), key=str):
        a, b = found.get(key), wanted.get(key)
        if isinstance(a, dict) and isinstance(b, dict):
            names += differences(a, b, f"{prefix}{key}.")
        elif a != b:
            names.append(f"{prefix}{key}")
    return names


def candidate_map(record: dict) -> dict[str, dict]:
    """The candidates of a record by afterstate key."""
    return {candidate["key"]: candidate for candidate in record["candidates"]}


def best_equity(record: dict) -> float:
    """The best equity among the moves rolled out at build time (moves added by ``score`` do not move it)."""
    built = [c["equity"] for c in record["candidates"] if not c.get("added_by")]
    return max(built or [c["equity"] for c in record["candidates"]])


def phase_counts(records: list[dict]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for record in records:
        counts[record["phase"]] = counts.get(record["phase"], 0) + 1
    return counts


def summary_line(bench: BenchmarkSet, extra: Optional[str] = None) -> str:
    """``FILE: tapa, 2000 positions (contact 700, ...), rolled out by net:tapa, 1296 games a move``."""
    settings = bench.header["settings"]
    rollout = settings.get("rollout", {})
    phases = ", ".join(f"{phase} {n}" for phase, n in phase_counts(bench.records).items())
    done = f"{len(bench.records)} positions" if bench.complete else \
        f"{len(bench.records)} of {bench.planned} positions (one in {bench.every})" if bench.every > 1 else \
        f"{len(bench.records)} of {bench.planned} positions (a partial build)"
    text = (f"{bench.path}: {bench.header['variant']}, {done} ({phases}), rolled out by "
            f"{rollout.get('bot', '?')}, {rollout.get('games', '?')} games a move, seed {settings.get('seed')}")
    return text + (f"; {extra}" if extra else "")
