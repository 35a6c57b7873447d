"""Does a benchmark set predict match play? A score against duels (``tapa-ai benchmark study``).

Input: the JSON of ``tapa-ai benchmark score ... --json`` (every pair of bots: the paired difference of
their losses, weighted to the phases of real games) and duels between some of those bots, as records of
``tapa-ai match --out`` or stated by hand (A, B, points per game for A and its 95% CI). Per duel: whether
the benchmark orders the two bots as the duel does (A loses less per move exactly when it wins the duel),
the duel's points per game predicted from the benchmark, and how many positions the set would need for
the separation of that duel (its 95% CI in points per game), with their build cost.

Millipoints a move turn into points per game by a factor ``k``: fitted through the origin on the duels
(``k_fit``, points per game per mp a move), and in theory the decisions a side makes in a game divided
by 1000 (``k_theory``: each decision's loss is expected points given away; the sampling games of the set's
player against itself count them, forced rolls left out). The predictions and the positions needed use
``k_theory`` where the set has it (``k_fit`` is as noisy as the differences it is fitted on; the two agreeing
is one test of the benchmark).

**Rollout length.** Part of a pair's spread over the positions is the rollouts' noise (the score's
``noise_share``), which longer rollouts shrink, and the rest the positions' own, which only more positions
do. With a share ``s`` of noise at ``G`` games, rollouts of ``g`` games need ``(1 - s + s G / g)`` times the
positions; a position costs its candidates' CPU-seconds (fixed) plus its rollouts' (in proportion to ``g``).
:func:`cheapest_rollouts` finds the ``g`` (whole blocks of 36 games when the first roll is rotated) that
gives a duel's separation for the least CPU; where the candidates are cheap beside the rollouts, that is
shorter rollouts of more positions.

Bots are matched by name after resolving model files: ``net:tapa`` and ``net:checkpoints/tapa.pt`` are
the same bot when they name the same file (its sha256), at the same plies with the same options. A duel
record names the files as they were when it was played: state duels whose files have since been replaced
by hand (``--known A B PPG LOW HIGH``) with today's names.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Optional, Sequence

from .file import BenchmarkError
from ..rollout_report import BLOCK

_NET = re.compile(r"^net:(?P<path>.+?)(?:@(?P<plies>\d+)(?:ply)?)?$")


def canonical(spec: str) -> str:
    """A bot's identity: ``net:<sha256 prefix>@<plies>`` and its sorted options for a net, else the spec."""
    from ...net.model_id import short_sha256
    from ...net.shipped import find_model_path

    text = str(spec).strip()
    if text.startswith("engine:"):
        return text
    base, *options = [part.strip() for part in text.split(",")]
    match = _NET.match(base)
    if not match:
        return text
    path = find_model_path(match.group("path"))
    identity = short_sha256(path) if path.is_file() else match.group("path")
    return f"net:{identity}@{int(match.group('plies') or 0)}" + "".join(f",{o}" for o in sorted(options))


def read_record(path: str | Path, what: str) -> dict:
    """The JSON object in ``path`` (a score or a duel record, ``what``); BenchmarkError in one line otherwise."""
    from ...notation.json_file import JsonFileError, read_json_file

    try:
        data = read_json_file(path, f"a {what} record")
    except JsonFileError as error:
        raise BenchmarkError(f"{what}: {error}") from None
    if not isinstance(data, dict):
        raise BenchmarkError(f"{what} {path}: a JSON {type(data).__name__}, not a {what} record (an object)")
    return data


def read_duel(path: str | Path) -> dict:
    """A ``tapa-ai match --out`` record as a duel: a, b, ppg, ppg_ci95, games."""
    data = read_record(path, "duel")
    try:
        return {"a": data["bot_a"], "b": data["bot_b"], "ppg": float(data["ppg"]),
                "ppg_ci95": [float(x) for x in data["ppg_ci95"]], "games": int(data["games"]), "source": str(path)}
    except (KeyError, TypeError, ValueError):
        raise BenchmarkError(f"duel {path}: not a tapa-ai match record (bot_a, bot_b, ppg, ppg_ci95, games)") from None


def known_duel(values: Sequence[str]) -> dict:
    """``[A, B, PPG, LOW, HIGH]`` as a duel."""
    a, b, *numbers = values
    try:
        ppg, low, high = (float(x) for x in numbers)
    except ValueError:
        raise BenchmarkError(f"--known {' '.join(values)}: want A B PPG LOW HIGH, numbers last") from None
    return {"a": a, "b": b, "ppg": ppg, "ppg_ci95": [low, high], "games": None, "source": "stated"}


def cheapest_rollouts(positions: int, noise_share: float, cpu: float, fixed: float, games: int, block: int,
                      longest: int = 8) -> dict:
    """The rollout length (games, a multiple of ``block``, up to ``longest`` times ``games``) that reaches the
    precision of ``positions`` positions rolled out with ``games`` games for the least CPU, with the positions
    it needs and their build cost: ``cpu`` CPU-seconds a position now, ``fixed`` of them not in the rollouts."""
    share = min(max(noise_share, 0.0), 1.0)
    per_game = max(cpu - fixed, 0.0) / games

    def needed(g: int) -> int:
        return int(math.ceil(positions * ((1 - share) + share * games / g)))

    lengths = range(block, longest * games + 1, block)
    best = min(lengths, key=lambda g: (needed(g) * (fixed + per_game * g), g))
    return {"rollout_games": best, "positions": needed(best),
            "build_cpu_hours": needed(best) * (fixed + per_game * best) / 3600}


def pairs_by_bots(score: dict) -> dict[tuple[str, str], tuple[dict, float]]:
    """The score's pairs by their two bots (:func:`canonical`), each way round: (pair, +1 as A-B, -1 as B-A)."""
    pairs = {}
    for pair in score.get("pairs", []):
        key = (canonical(pair["a"]), canonical(pair["b"]))
        pairs[key] = (pair, 1.0)
        pairs[key[::-1]] = (pair, -1.0)
    return pairs


def noise_between_lengths(long: dict, short: dict) -> list[dict]:
    """The rollout noise of each pair scored on two sets of one variant (independent positions) rolled out
    with ``G`` (``long``) and ``g < G`` games (``short``), measured by how much the pair's spread grows: the
    spread squared is the positions' own plus the noise, and the noise grows as ``G / g``, so the noise at
    ``G`` is ``(sd_short² − sd_long²) / (G / g − 1)``. Beside it, each set's own estimate at ``G`` (halves or
    CIs: the score's ``noise_share``). One row a pair both scores have, matched as the study matches bots."""
    games = [score.get("rollout", {}).get("games") for score in (long, short)]
    if not all(games) or games[0] <= games[1] or long.get("variant") != short.get("variant"):
        raise BenchmarkError(f"want two scores of one variant, the first rolled out with more games than the "
                             f"second (got {long.get('variant')} at {games[0]}, {short.get('variant')} at {games[1]})")
    ratio = games[0] / games[1]
    found = pairs_by_bots(short)
    rows = []
    for pair in long.get("pairs", []):
        other, _ = found.get((canonical(pair["a"]), canonical(pair["b"])), (None, None))
        if other is None or pair.get("sd_mp") is None or other.get("sd_mp") is None:
            continue
        sd_long, sd_short = pair["sd_mp"], other["sd_mp"]
        implied = (sd_short ** 2 - sd_long ** 2) / (ratio - 1)
        row = {"a": pair["a"], "b": pair["b"], "sd_long_mp": sd_long, "sd_short_mp": sd_short,
               "positions": [pair["positions"], other["positions"]],
               "implied_noise_share": implied / sd_long ** 2 if sd_long > 0 else None,
               "long_noise_share": pair.get("noise_share"), "long_noise_from_halves": pair.get("noise_from_halves"),
               "short_noise_from_halves": other.get("noise_from_halves"), "short_noise_share_at_long": None}
        if other.get("noise_sd_mp") is not None and sd_short > 0:
            noise_at_long = other["noise_sd_mp"] ** 2 / ratio  # the short set's own estimate, scaled to G games
            row["short_noise_share_at_long"] = noise_at_long / (sd_short ** 2 - other["noise_sd_mp"] ** 2
                                                                + noise_at_long)
        rows.append(row)
    return rows


def study(score: dict, duels: list[dict]) -> dict:
    """Each duel against the score's paired differences; the factor k, the agreement, positions and cost."""
    pairs = pairs_by_bots(score)
    per_side = score.get("decisions_per_side_per_game")
    k_theory = per_side / 1000 if per_side else None
    rows = []
    for duel in duels:
        found = pairs.get((canonical(duel["a"]), canonical(duel["b"])))
        row = {**duel, "scored": found is not None}
        if found is not None:
            pair, sign = found
            if pair.get("difference_mp") is None:  # no position rated for both
                rows.append({**row, "scored": False})
                continue
            weighted = pair.get("weighted_difference_mp") is not None
            diff = pair["weighted_difference_mp"] if weighted else pair["difference_mp"]
            ci = pair["weighted_difference_mp_ci95"] if weighted else pair["difference_mp_ci95"]
            low, high = sorted(sign * x for x in ci)
            row.update(benchmark_mp=sign * diff, benchmark_mp_ci95=[low, high], weighted=weighted,
                       positions=pair["positions"], agrees=(duel["ppg"] > 0) == (sign * diff < 0),
                       noise_share=pair.get("noise_share"))
        rows.append(row)
    scored = [r for r in rows if r["scored"] and r["benchmark_mp"] != 0]
    k_fit = None
    if scored:
        k_fit = sum(-r["benchmark_mp"] * r["ppg"] for r in scored) / sum(r["benchmark_mp"] ** 2 for r in scored)
    k = k_theory or (k_fit if k_fit and k_fit > 0 else None)  # the fit is as noisy as the differences it fits
    cpu = score.get("cpu_seconds_per_position")
    fixed = score.get("candidates_cpu_seconds_per_position")
    rollout = score.get("rollout") or {}
    block = BLOCK if rollout.get("rotate") else 1
    for row in rows:
        if not row["scored"]:
            continue
        if k:
            row["predicted_ppg"] = -k * row["benchmark_mp"]
            duel_half_mp = (row["ppg_ci95"][1] - row["ppg_ci95"][0]) / 2 / k
            half_mp = (row["benchmark_mp_ci95"][1] - row["benchmark_mp_ci95"][0]) / 2
            if duel_half_mp > 0 and math.isfinite(half_mp):
                row["positions_for_duel_ci"] = int(math.ceil(row["positions"] * (half_mp / duel_half_mp) ** 2))
                if cpu:
                    row["build_cpu_hours"] = row["positions_for_duel_ci"] * cpu / 3600
                share = row.get("noise_share")
                if cpu and fixed is not None and rollout.get("games") and share is not None:
                    row["cheapest"] = cheapest_rollouts(row["positions_for_duel_ci"], share, cpu, fixed,
                                                        rollout["games"], block)
    return {"set": score.get("set"), "variant": score.get("variant"), "k_theory": k_theory, "k_fit": k_fit,
            "k_used": k, "agree": sum(bool(r.get("agrees")) for r in rows), "scored": sum(r["scored"] for r in rows),
            "cpu_seconds_per_position": cpu, "candidates_cpu_seconds_per_position": fixed,
            "rollout_games": rollout.get("games"), "duels": rows}


def report(result: dict) -> str:
    k = ", ".join(f"{name} {result[name]:.4f}" for name in ("k_fit", "k_theory") if result[name] is not None)
    lines = [f"{result['set']}: {result['agree']} of {result['scored']} scored duels ordered as the benchmark "
             f"orders them; points per game per mp a move: {k or 'none'}", ""]
    for row in result["duels"]:
        ci = row["ppg_ci95"]
        duel = f"{row['a']} vs {row['b']}: {row['ppg']:+.3f} [{ci[0]:+.3f}, {ci[1]:+.3f}]"
        if not row["scored"]:
            lines.append(f"  {duel}  (these two bots are not both in the score)")
            continue
        bci = row["benchmark_mp_ci95"]
        text = f"  {duel}  benchmark A-B {row['benchmark_mp']:+.1f} mp [{bci[0]:+.1f}, {bci[1]:+.1f}]"
        text += "  agrees" if row["agrees"] else "  DISAGREES"
        if "predicted_ppg" in row:
            text += f"; predicts {row['predicted_ppg']:+.3f}"
        if "positions_for_duel_ci" in row:
            text += f"; the duel's CI needs {row['positions_for_duel_ci']:,} positions"
            if "build_cpu_hours" in row:
                text += f" ({row['build_cpu_hours']:.1f} CPU-hours to build)"
            if "cheapest" in row:
                cheap = row["cheapest"]
                text += (f"; rollout noise {row['noise_share']:.0%} of the spread: cheapest with rollouts of "
                         f"{cheap['rollout_games']} games, {cheap['positions']:,} positions "
                         f"({cheap['build_cpu_hours']:.1f} CPU-hours)")
        lines.append(text)
    return "\n".join(lines)


def study_command(score_path: str, duel_paths: Sequence[str], known: Sequence[Sequence[str]],
                  out: Optional[str] = None) -> dict:
    duels = [read_duel(path) for path in duel_paths] + [known_duel(values) for values in known]
    if not duels:
        raise BenchmarkError("give duels: --duel MATCH.json (tapa-ai match --out) or --known A B PPG LOW HIGH")
    result = study(read_record(score_path, "score"), duels)
    if out:
        Path(out).write_text(json.dumps(result, indent=1) + "\n")
    return result
