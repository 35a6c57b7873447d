"""Strength reports of shipped models: the final ladder, generation duels, and model cards.

``scripts/strength.py`` is the command line. For one model it plays, in
duplicate pairs:

- the model at 0-ply against every fixed bot of its variant (``random``,
  ``runner``, ``heuristic``, and for backgammon ``pubeval`` and ``gnubg:0``),
- the model at 2-ply against the same fixed bots and against itself at 0-ply
  (2-ply costs ~1,000 times more than 0-ply per move, so fewer games: each
  2-ply match may get its own count, sized for the confidence interval wanted),
- optionally the model against the previous generation,

writes one JSON record per match (the ``tapa-ai match --out`` format) and a
``summary.json``, and renders the model card ``checkpoints/<variant>.md``
from the checkpoint's own facts (config, encoding, games, CPU time) and the
summary.
"""

from __future__ import annotations

import json
import os
import platform
from pathlib import Path
from typing import Iterable, Optional, Sequence

from ..bots.base import BotError
from ..config import config_to_toml
from ..net.checkpoint import load_checkpoint
from ..net.model_id import file_sha256, model_label
from ..rules.options import REGISTRY
from .match import run_match

FIXED_OPPONENTS = {name: list(entry.opponents) for name, entry in REGISTRY.items() if entry.ships_model}
"""The fixed bots every shipped model is measured against, per variant (the registry's opponents)."""
SEARCH_OPPONENTS = FIXED_OPPONENTS
"""The fixed bots the 2-ply model plays (all of them, as the issue's ladder asks)."""


def _label(spec: str) -> str:
    return spec.replace(":", "").replace("/", "_").replace("@", "_")


def strength_matches(model: str, games: int, games_2ply: int, previous: Optional[str], out: Path,
                     workers: int = os.cpu_count() or 1, parts: tuple[str, ...] = ("0ply", "2ply", "previous"),
                     progress: bool = True, games_2ply_for: Optional[dict[str, int]] = None,
                     partial: Optional[Path] = None, command: Optional[str] = None) -> dict:
    """Play the strength matches of ``model`` (a checkpoint path) and write their records under ``out``.

    ``games_2ply_for`` maps a 2-ply opponent (a fixed bot spec, or ``0ply`` for
    the model itself) to its own game count instead of ``games_2ply``; a count of
    0 skips that match (its earlier record, if any, stays in the summary). ``partial``: a directory
    keeping every finished chunk of games, one subdirectory per match (``run_match(partial=...)``), so
    that a killed run resumes where it stopped and a longer match reuses the games of a shorter one.
    ``command``: the command line that asked for these matches, recorded with them once all are played
    (:func:`record_command`).
    """
    counts_2ply = dict(games_2ply_for or {})
    checkpoint = load_checkpoint(model)
    rules = checkpoint.rules()
    variant = rules.name
    out.mkdir(parents=True, exist_ok=True)
    summary_path = out / "summary.json"
    summary = json.loads(summary_path.read_text()) if summary_path.is_file() else {}
    summary.update(model=str(model), variant=variant, games_trained=checkpoint.games)
    model_sha256 = file_sha256(model)
    summary.setdefault("matches", {})
    plan = []
    if "0ply" in parts:
        plan += [(f"0ply_vs_{_label(o)}", f"net:{model}", o, games, 1) for o in FIXED_OPPONENTS[variant]]
    if "2ply" in parts:
        unknown = sorted(set(counts_2ply) - set(SEARCH_OPPONENTS[variant]) - {"0ply"})
        if unknown:
            raise BotError(f"2-ply game counts for {unknown}: not opponents of a {variant} model "
                           f"(known: {SEARCH_OPPONENTS[variant] + ['0ply']})")
        plan += [(f"2ply_vs_{_label(o)}", f"net:{model}@2ply", o, counts_2ply.get(o, games_2ply), 2)
                 for o in SEARCH_OPPONENTS[variant]]
        plan.append(("2ply_vs_0ply", f"net:{model}@2ply", f"net:{model}", counts_2ply.get("0ply", games_2ply), 3))
        plan = [entry for entry in plan if entry[3] > 0]
    if "previous" in parts and previous:
        plan.append(("0ply_vs_previous", f"net:{model}", f"net:{previous}", games, 4))
    for name, spec_a, spec_b, count, seed in plan:
        result = run_match(spec_a, spec_b, rules, count, seed=seed, workers=workers, progress=progress,
                           desc=name, partial=partial / variant / name if partial is not None else None)
        result.write(out / f"{name}.json")
        record = result.to_dict()
        matches = _with_what_is_on_disk(summary, summary_path)
        matches[name] = {key: record[key] for key in ("bot_a", "bot_b", "games", "ppg", "ppg_ci95", "win_rate",
                                                      "win_rate_ci95", "kinds", "seed", "games_per_s")}
        matches[name]["model_sha256"] = model_sha256  # the file measured: a card names it (measured_with)
        summary_path.write_text(json.dumps(summary, indent=1) + "\n")  # after every match: nothing lost on a kill
        if progress:
            print(f"{name}: {record['ppg']:+.3f} [{record['ppg_ci95'][0]:+.3f}, {record['ppg_ci95'][1]:+.3f}] "
                  f"win {record['win_rate']:.1%} ({record['games']} games)", flush=True)
    if command is not None:
        _with_what_is_on_disk(summary, summary_path)
        record_command(summary, command, model_sha256, [entry[0] for entry in plan])
        summary_path.write_text(json.dumps(summary, indent=1) + "\n")
    return summary


def _with_what_is_on_disk(summary: dict, summary_path: Path) -> dict:
    """Take the matches and commands of ``summary_path`` into ``summary`` before writing it (another run may
    have added its own to the same --out meanwhile); returns the summary's ``matches``."""
    if summary_path.is_file():
        on_disk = json.loads(summary_path.read_text())
        summary["matches"] = dict(on_disk.get("matches", {}))
        summary["commands"] = list(on_disk.get("commands", []))
    return summary.setdefault("matches", {})


def measured_with(model: str, summary: dict) -> str:
    """The sentence naming the file the summary's matches were measured with (docs/strength.md's convention).

    Refuses a summary with a match measured with another file than ``model`` is now (a model shipped
    since, or a record without the hash): those matches must be played again, or the card would pass
    them off as the new model's.
    """
    current = file_sha256(model)
    stale = sorted(name for name, m in summary.get("matches", {}).items() if m.get("model_sha256") != current)
    if stale:
        raise ValueError(f"{model}: matches {', '.join(stale)} of the summary were not measured with this file "
                         f"(sha256 {current[:12]}): play them again (scripts/strength.py without --only-card)")
    return f"Measured with {model_label(model, markdown=True)}"


def record_command(summary: dict, command: str, model_sha256: str, measured: Iterable[str]) -> None:
    """Add the command line that measured the model file of sha256 ``model_sha256`` to the summary's
    ``commands``, tied to that hash and to the names of the matches it played (``measured``).

    A card's *Reproduce* block lists only the commands of the file it describes (:func:`commands_for`):
    once a new model is shipped under the same name, the old model's commands stay in the summary as
    history but no longer pass as the new one's. A command that plays a match again (e.g. with more games)
    takes it over from the commands before it for the same file; one left with no match of its own is
    dropped, since running it would no longer reproduce anything the summary shows.
    """
    measured = sorted(set(measured))
    kept = []
    for entry in summary.get("commands", []):
        if isinstance(entry, dict) and entry.get("model_sha256") == model_sha256:
            if entry.get("command") == command:
                continue  # the same command again: recorded once, last
            if "matches" in entry:
                own = [name for name in entry["matches"] if name not in measured]
                if not own:
                    continue
                entry = {**entry, "matches": own}
        kept.append(entry)
    summary["commands"] = kept + [{"command": command, "model_sha256": model_sha256, "matches": measured}]


def commands_for(model: str, summary: Optional[dict]) -> list[str]:
    """The command lines of the summary that measured the file ``model`` is now (:func:`record_command`)."""
    current = file_sha256(model)
    return [entry["command"] for entry in (summary or {}).get("commands", [])
            if isinstance(entry, dict) and entry.get("model_sha256") == current]


def strength_table(summary: dict) -> str:
    """Markdown table of a summary: one row per match."""
    lines = ["| match | games | points per game [95% CI] | games won [95% CI] | seed |", "|---|---:|---|---|---:|"]
    for name, m in summary.get("matches", {}).items():
        lines.append(f"| {m['bot_a']} vs {m['bot_b']} | {m['games']:,} | {m['ppg']:+.3f} [{m['ppg_ci95'][0]:+.3f}, "
                     f"{m['ppg_ci95'][1]:+.3f}] | {m['win_rate']:.1%} [{m['win_rate_ci95'][0]:.1%}, "
                     f"{m['win_rate_ci95'][1]:.1%}] | {m['seed']} |")
    return "\n".join(lines)


def strength_section(model: str, summary: dict, history: str = "") -> str:
    """The section of a shipped model in docs/strength.md: its ladder (:func:`strength_table`, named with
    :func:`measured_with`) and how it was made (``history``, the card's *How it was made*)."""
    said = measured_with(model, summary)
    parts = ["Final ladder of the shipped model, " + said[0].lower() + said[1:] + ":", "", strength_table(summary)]
    if history.strip():
        parts += ["", history.strip()]
    return "\n".join(parts)


def section_markers(name: str) -> tuple[str, str]:
    """The HTML comments (invisible in rendered markdown) around the section that :func:`replace_section` writes."""
    return f"<!-- begin strength.py {name} -->", f"<!-- end strength.py {name} -->"


def _split_at_markers(text: str, name: str) -> tuple[str, str, str]:
    """``text`` as (before the begin marker, between the markers, after the end marker) of ``name``'s
    :func:`section_markers`; ValueError when they are missing, doubled or out of order."""
    begin, end = section_markers(name)
    if text.count(begin) != 1 or text.count(end) != 1 or text.index(begin) > text.index(end):
        raise ValueError(f"the file needs one line {begin!r} and, after it, one line {end!r} around the section "
                         f"of {name}")
    head, rest = text.split(begin, 1)
    inside, tail = rest.split(end, 1)
    return head, inside, tail


def replace_section(text: str, name: str, body: str) -> str:
    """``text`` with what stands between ``name``'s :func:`section_markers` replaced by ``body``.

    ValueError when the markers are missing, doubled or out of order: the file says where the section goes.
    """
    begin, end = section_markers(name)
    head, _, tail = _split_at_markers(text, name)
    return f"{head}{begin}\n{body.strip()}\n{end}{tail}"


def marked_section(text: str, name: str) -> str:
    """What stands between ``name``'s :func:`section_markers` in ``text`` (ValueError as :func:`replace_section`)."""
    return _split_at_markers(text, name)[1].strip()


def _cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def model_card(model: str, summary: Optional[dict], history: str = "", command: str = "") -> str:
    """The model card of a checkpoint, as markdown."""
    checkpoint = load_checkpoint(model)
    config = checkpoint.train_config()
    cpu_seconds = checkpoint.extra.get("cpu_seconds")
    wall_seconds = checkpoint.extra.get("wall_seconds")
    arch = checkpoint.model_config
    parts = [
        f"# Model card: `{model}`",
        "",
        f"A {checkpoint.rules().name} evaluator trained by self-play TD(lambda) with tapa_ai "
        f"{checkpoint.tapa_ai_version}.",
        "",
        "| fact | value |",
        "|---|---|",
        f"| variant / rule options | {checkpoint.rules().name} / `{json.dumps(checkpoint.rule_options)}` |",
        f"| encoding | {checkpoint.encoding[0]} version {checkpoint.encoding[1]} |",
        f"| network | {json.dumps(arch)} |",
        f"| games trained | {checkpoint.games:,} ({checkpoint.decisions:,} decisions, {checkpoint.steps:,} updates) |",
        f"| CPU time (self-play + learning) | " + (f"{cpu_seconds / 3600:.2f} CPU-hours" if cpu_seconds else "unknown")
        + (f" ({wall_seconds / 3600:.2f} h wall, shared machine)" if wall_seconds else "") + " |",
        f"| hardware | {_cpu_name()}, {os.cpu_count()} cores, no GPU; one training process, one torch thread |",
        f"| file | {model_label(model, markdown=True)}: full checkpoint: network, optimizer, RNG and running games "
        f"(resumable: copy it to `runs/<name>/latest.pt`, then `tapa-ai train --resume runs/<name>`) |",
        "",
        "Use it: `tapa-ai match net:" + model + " heuristic --games 1000`, "
        "`net:" + model + "@2ply` for 2-ply search; load in Python with `tapa_ai.net.checkpoint.load_network`.",
        "",
    ]
    if history:
        parts += ["## How it was made", "", history.strip(), ""]
    parts += ["## Training config (as stored in the checkpoint)", "", "```toml", config_to_toml(config).strip(),
              "```", ""]
    if summary:
        parts += ["## Measured strength", "", measured_with(model, summary) + ":", "", strength_table(summary), "",
                  "Duplicate pairs: every deal is played twice with the same dice, each bot moving first once; "
                  "the 95% CI of points per game is over the pairs.", ""]
        if command:
            parts += ["Reproduce:", "", "```", command.strip(), "```", ""]
    return "\n".join(parts)


def plot_training_curve(model: str, path: str | Path, curve_reports: Sequence[str | Path] = ()) -> Path:
    """PNG of the model's learning curve: games trained → points per game (95% CI) per fixed opponent.

    The points are the trainer's periodic evaluations stored in the checkpoint
    (``eval.opponents`` at every ``eval.every_games``), plus, when given, the
    2,000-game snapshots of the ``scripts/learning_curve.py`` reports ``curve_reports``
    (``docs/curves/<variant>.json``; e.g. a run's report and the report of its continuation).
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    checkpoint = load_checkpoint(model)
    series: dict[str, list[tuple[int, float, float, float]]] = {}
    for record in checkpoint.extra.get("evaluations", []):
        low, high = record["ppg_ci95"]
        series.setdefault(f"{record['opponent']} ({record['games']} games each)", []).append(
            (record["games_trained"], record["ppg"], low, high))
    for report in curve_reports:
        for row in json.loads(Path(report).read_text()).get("rows", []):
            for name in ("random", "pipcount", "heuristic"):
                if name in row:
                    low, high = row[name]["ppg_ci95"]
                    series.setdefault(f"{name}, snapshots ({row[name]['games']} games each)", []).append(
                        (row["games_trained"], row[name]["ppg"], low, high))
    figure, axis = plt.subplots(figsize=(8, 4.5))
    opponents = sorted({name.split(" ")[0].rstrip(",") for name in series})
    colours = {opponent: f"C{i}" for i, opponent in enumerate(opponents)}
    for name, points in sorted(series.items()):
        points.sort()
        games = [p[0] for p in points]
        ppg = [p[1] for p in points]
        errors = [[p[1] - p[2] for p in points], [p[3] - p[1] for p in points]]
        style = "s" if "snapshots" in name else "o"
        axis.errorbar(games, ppg, yerr=errors, fmt=style, markersize=3, capsize=2, linewidth=1, label=name,
                      color=colours[name.split(" ")[0].rstrip(",")], linestyle=":" if "snapshots" in name else "-")
    axis.axhline(0, color="grey", linewidth=0.8)
    axis.set_xlabel("self-play games trained")
    axis.set_ylabel("points per game at 0-ply (95% CI)")
    axis.set_title(f"{checkpoint.rules().name}: learning curve of {Path(model).name}")
    axis.grid(alpha=0.3)
    axis.legend(fontsize=7)
    figure.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path


def promote(candidate: str, shipped: str, generations: str | Path, games: int = 10000, seed: int = 11,
            workers: int = os.cpu_count() or 1, progress: bool = True) -> dict:
    """Duel a candidate against the shipped model (0-ply); ship it only if it is better with confidence.

    The candidate replaces ``shipped`` when the lower end of the 95% CI of its
    points per game is above zero; the replaced model is kept, slim, as
    ``<generations>/<variant>-g<N>.pt`` (N = its generation). Returns the duel
    record with ``generation`` (the candidate's number), ``promoted`` and ``kept_as`` added.
    """
    import shutil

    from ..net.checkpoint import slim_checkpoint

    rules = load_checkpoint(candidate).rules()
    if load_checkpoint(shipped).rules() != rules:
        raise ValueError(f"{candidate} and {shipped} play different rule sets")
    result = run_match(f"net:{candidate}", f"net:{shipped}", rules, games, seed=seed, workers=workers,
                       progress=progress, desc="candidate vs shipped")
    generations = Path(generations)
    shipped_number = 1 + len(list(generations.glob(f"{rules.name}-g*.pt")))
    record = result.to_dict()
    record["generation"] = shipped_number + 1
    record["promoted"] = record["ppg_ci95"][0] > 0
    record["kept_as"] = None
    if record["promoted"]:
        generations.mkdir(parents=True, exist_ok=True)
        kept = generations / f"{rules.name}-g{shipped_number}.pt"
        slim_checkpoint(shipped, kept)
        shutil.copyfile(candidate, shipped)
        record["kept_as"] = str(kept)
    return record
