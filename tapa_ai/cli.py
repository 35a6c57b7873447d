"""The ``tapa-ai`` command line: thin wrappers over the package."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from .rules.options import VARIANTS


def _cmd_demo(args: argparse.Namespace) -> int:
    from .rules.demo import random_play

    variants = list(VARIANTS) if args.variant == "all" else [args.variant]
    rows = []
    for variant in variants:
        stats = random_play(variant, args.games, args.seed, progress=not args.quiet)
        rows.append(stats.summary())
    if args.json:
        print(json.dumps(rows if len(rows) > 1 else rows[0]))
        return 0
    for row in rows:
        print(f"\n{row['variant']}: {row['games']} random games, seed {args.seed}")
        print(f"  turns per game           {row['turns_per_game']}")
        print(f"  legal moves per position {row['legal_moves_per_position']}")
        print(f"  passed turns             {row['pass_rate']:.2%}")
        print(f"  reference generator      {row['reference_positions_per_s']} positions/s")
        print(f"  results                  {row['result_kinds']}")
        print(f"  wins                     {row['winners']}  points X {row['points_X']} O {row['points_O']}")
    return 0


def _cmd_engine(args: argparse.Namespace) -> int:
    from .bots.base import BotError
    from .engine.protocol import RequestError, serve

    try:
        return serve(generator=args.generator, bot=args.bot)
    except (RequestError, BotError) as error:
        print(f"tapa-ai engine: {error}", file=sys.stderr)
        return 2


def _cmd_serve(args: argparse.Namespace) -> int:
    from .bots.base import BotError
    from .engine.http import run
    from .engine.protocol import RequestError

    if not 0 <= args.port <= 65535:
        print(f"tapa-ai serve: --port must be 0..65535 (0 picks a free port), got {args.port}", file=sys.stderr)
        return 2
    from .engine.http_limits import ServerLimits

    try:
        if args.max_rollout_games < 0:
            raise RequestError(f"--max-rollout-games {args.max_rollout_games}: must be 0 (no rollouts) or more")
        try:
            limits = ServerLimits(threads=args.threads, queue=args.queue, read_timeout=args.read_timeout,
                                  command_timeout=args.command_timeout or None)
        except ValueError as error:
            raise RequestError(f"--{str(error).replace('_', '-')}") from None
        return run(args.host, args.port, bot=args.bot, generator=args.generator, allow_origins=args.allow_origin,
                   quiet=args.quiet, max_rollout_games=args.max_rollout_games, allow_hosts=args.allow_host,
                   limits=limits)
    except (RequestError, BotError) as error:
        print(f"tapa-ai serve: {error}", file=sys.stderr)
        return 2
    except OSError as error:
        print(f"tapa-ai serve: cannot listen on {args.host}:{args.port}: {error}", file=sys.stderr)
        return 2


DEFAULT_TRAIN_CONFIG = "configs/quick.toml"


def _cmd_train(args: argparse.Namespace) -> int:
    from .training.command import train_command

    overrides = [*args.set, *([f"distributed.workers={args.workers}"] if args.workers is not None else [])]
    return train_command(config_file=args.config, resume=args.resume, overrides=overrides,
                         ray_address=args.ray_address, progress=not args.quiet, default_config=DEFAULT_TRAIN_CONFIG)


def _arena_variant(specs: list[str], variant: str | None):
    """The rule set of an arena command: ``--variant``, else the first model file's (``net:``, ``onnx:``), else
    tapa."""
    from .bots.spec import model_rules
    from .rules.options import variant_rules

    if variant:
        return variant_rules(variant)
    for spec in specs:
        rules = model_rules(spec)
        if rules is not None:
            return rules
    return variant_rules("tapa")


def _cmd_match(args: argparse.Namespace) -> int:
    from .arena.match import run_cube_match, run_match
    from .bots.base import BotError

    try:
        rules = _arena_variant([args.bot_a, args.bot_b], args.variant)
        if args.matches is not None and not args.match_length:
            raise BotError("--matches needs --match-length N (the points to win each match)")
        if args.partial and (args.match_length or args.cube):
            raise BotError("--partial keeps the chunks of single games (no --cube, no --match-length)")
        if args.match_length and args.cube:
            raise BotError("--cube is money play with the cube; matches (--match-length) always use the cube "
                           "where the rules have one: give one or the other")
        if args.record_games and (args.match_length or args.cube):
            raise BotError("--record-games records single games (no --cube, no --match-length)")
        if args.record_count is not None and not args.record_games:
            raise BotError("--record-count needs --record-games FILE (where the games go)")
        if args.match_length:
            result = run_cube_match(args.bot_a, args.bot_b, rules, args.matches or 1000, seed=args.seed,
                                    workers=args.workers, match_length=args.match_length, progress=not args.quiet,
                                    ray_address=args.ray_address)
        elif args.cube:
            result = run_cube_match(args.bot_a, args.bot_b, rules, args.games, seed=args.seed, workers=args.workers,
                                    progress=not args.quiet, ray_address=args.ray_address)
        else:
            record = (args.games if args.record_count is None else max(args.record_count, 0)) if args.record_games \
                else 0
            result = run_match(args.bot_a, args.bot_b, rules, args.games, seed=args.seed, workers=args.workers,
                               progress=not args.quiet, ray_address=args.ray_address, partial=args.partial,
                               record_games=record)
    except BotError as error:
        print(f"tapa-ai match: {error}", file=sys.stderr)
        return 2
    recorded = result.write_games(args.record_games, rules) if args.record_games else 0
    if args.out:
        result.write(args.out, args.csv)
    if args.json:
        print(json.dumps(result.to_dict()))
    else:
        print(result.report())
        if args.out:
            print(f"  written                {args.out} and {args.csv or Path(args.out).with_suffix('.csv')}")
        if args.record_games:
            print(f"  recorded               {recorded} games in {args.record_games} (tapa-ai analyse reads it)")
    return 0


def _cmd_tournament(args: argparse.Namespace) -> int:
    from .arena.tournament import run_tournament
    from .bots.base import BotError

    connected = False
    try:
        rules = _arena_variant(args.bots, args.variant)
        if args.ray_address:  # once for all the pairings
            from .ray_cluster import RayUnavailable, connect

            try:
                connected = connect(args.ray_address, num_cpus=os.cpu_count())
            except RayUnavailable as error:
                raise BotError(str(error)) from None
        result = run_tournament(args.bots, rules, args.games, seed=args.seed, workers=args.workers,
                                progress=not args.quiet, ray_address=args.ray_address)
        if args.out:
            result.write(args.out)
    except BotError as error:
        print(f"tapa-ai tournament: {error}", file=sys.stderr)
        return 2
    finally:
        if connected:
            from .ray_cluster import disconnect

            disconnect(connected)
    print(result.markdown())
    if args.out:
        print(f"\nwritten: {args.out}/tournament.json, tournament.md, tournament.png")
    return 0


def _cmd_export(args: argparse.Namespace) -> int:
    from .export import FORMATS, ExportError, export_checkpoint

    try:
        if args.format not in FORMATS:
            raise ExportError(f"--format {args.format!r}: unknown; choose one of {', '.join(FORMATS)}")
        path = export_checkpoint(args.checkpoint, args.format, args.out)
    except ExportError as error:
        print(f"tapa-ai export: {error}", file=sys.stderr)
        return 2
    print(f"wrote {path} ({args.format}, {path.stat().st_size:,} bytes; docs/export.md)")
    return 0


def _cmd_play(args: argparse.Namespace) -> int:
    from .play.launch import launch

    return launch(variant=args.variant, bot=args.bot, match_length=args.match_length, seed=args.seed,
                  human=args.human, no_color=args.no_color, advisor=args.advisor, load=args.load,
                  show_eval=args.show_eval)


def _cmd_analyse(args: argparse.Namespace) -> int:
    from .analysis.command import analyse_command

    return analyse_command(args.file, bot=args.bot, json_path=args.json, blunder_mp=args.blunder,
                           error_mp=args.error, game=args.game, quiet=args.quiet)


def _cmd_bearoff(args: argparse.Namespace) -> int:
    import json

    from .bearoff.database import database_path, one_sided
    from .bearoff.one_sided import check_home

    home = args.home
    if home:
        try:
            check_home(home)
        except ValueError:
            print(f"tapa-ai bearoff: HOME must be 6 counts >= 0 (checkers on the 1- to 6-points) summing to at most "
                  f"15, got {home}", file=sys.stderr)
            return 2
    database = one_sided(rebuild=args.rebuild, progress=not args.quiet, quiet=args.quiet)
    if not home:
        print(f"one-sided bear-off database: {database_path()} ({database.turns.shape[0]:,} positions)")
        return 0
    turns, first_off = database.distributions(home)
    if args.json:
        print(json.dumps({"home": home, "turns": turns, "first_off": first_off}))
        return 0
    print(f"checkers on the 1- to 6-points {home}: {database.mean_turns(home):.4f} turns on average")
    print("turns  all off   first off")
    for k in range(max(len(turns), len(first_off))):
        all_k = turns[k] if k < len(turns) else 0.0
        first_k = first_off[k] if k < len(first_off) else 0.0
        print(f"{k:5d}  {all_k:8.5f}  {first_k:9.5f}")
    return 0


def _read_position(text: str, turn: str):
    """A position from ``--position``: JSON text, a JSON file, or a GNU Backgammon Position ID (backgammon)."""
    from .notation.gnubg_id import position_from_gnubg_id
    from .notation.json_position import position_from_json
    from .rules.position import PositionError

    source = text.strip()
    if not source.startswith("{") and Path(source).is_file():
        source = Path(source).read_text().strip()
    if source.startswith("{"):
        try:
            data = json.loads(source)
        except ValueError as error:
            raise PositionError(f"--position: not valid JSON ({error})") from None
        return position_from_json(data)
    try:
        return position_from_gnubg_id(source, turn=turn)
    except (PositionError, ValueError) as error:
        raise PositionError(f"--position {text!r}: neither JSON, a JSON file, nor a GNU Backgammon Position ID "
                            f"({error})") from None


def _cmd_rollout(args: argparse.Namespace) -> int:
    from .arena.rollout import RolloutError, RolloutSettings, rollout_moves, rollout_position
    from .bots.base import BotError
    from .play.advice import default_advisor_spec
    from .rules.options import RulesError

    try:
        position = _read_position(args.position, args.turn)
        bot = args.bot or default_advisor_spec(position.rules.name)
        if bot is None:
            raise RolloutError(f"no shipped network for {position.rules.name!r}: give --bot SPEC")
        settings = RolloutSettings(games=args.games, truncate=args.truncate, bearoff=args.bearoff,
                                   rotate=args.rotate, luck=args.luck, seed=args.seed)
        common = dict(evaluator=args.evaluator, workers=args.workers, ray_address=args.ray_address,
                      progress=not args.quiet)
        if args.dice:
            result = rollout_moves(position, tuple(args.dice), bot, settings, moves=args.move,
                                   candidates=args.candidates, ranker=args.ranker, **common)
        else:
            if args.move:
                raise RolloutError("--move needs --dice (the roll the moves are played with)")
            result = rollout_position(position, bot, settings, **common)
    except (RolloutError, BotError, RulesError) as error:
        print(f"tapa-ai rollout: {error}", file=sys.stderr)
        return 2
    data = result.to_dict()
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(data, indent=1) + "\n")
    print(json.dumps(data) if args.json else result.report())
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tapa-ai", description="Self-play AI toolkit for Tapa, Plakoto and backgammon.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    demo = sub.add_parser("demo", help="play random self-play games and summarise them")
    demo.add_argument("--variant", default="all", choices=["all", *VARIANTS], help="rule set (default: all three)")
    demo.add_argument("--games", type=int, default=200, help="games per variant (default 200)")
    demo.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    demo.add_argument("--json", action="store_true", help="print the summary as JSON")
    demo.add_argument("--quiet", action="store_true", help="no progress bar")
    demo.set_defaults(func=_cmd_demo)

    train = sub.add_parser("train", help="train an evaluator by self-play (the command run when none is given; "
                                         "default config: configs/quick.toml)")
    train.add_argument("--config", help=f"TOML config file (default {DEFAULT_TRAIN_CONFIG})")
    train.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE",
                       help="override a config value, e.g. --set model.hidden=128 (repeatable)")
    train.add_argument("--resume", metavar="RUN", help="continue a run: its directory or a checkpoint file")
    train.add_argument("--workers", type=int, default=None, metavar="N",
                       help="self-play actor processes beside the learner (= --set distributed.workers=N; "
                       "1, the default, is the single-process trainer)")
    train.add_argument("--ray-address", metavar="ADDRESS", help="run the actors on a Ray cluster: auto, host:port, "
                       "or local (a new instance on this machine); needs pip install 'tapa-ai[ray]'")
    train.add_argument("--quiet", action="store_true", help="no progress bar")
    train.set_defaults(func=_cmd_train)

    from .bots.spec import SPEC_FORMS

    bots_help = "bot spec: " + ", ".join(SPEC_FORMS)
    match = sub.add_parser("match", help="two bots over many games in duplicate pairs (points per game, 95%% CI)")
    match.add_argument("bot_a", metavar="A", help=bots_help)
    match.add_argument("bot_b", metavar="B", help="the opponent (same forms)")
    _arena_options(match, games=1000)
    match.add_argument("--cube", action="store_true", help="money play with the doubling cube (docs/cube.md); "
                       "points per game count the cube")
    match.add_argument("--match-length", type=int, default=0, metavar="N",
                       help="play matches to N points with the cube and Crawford rule (match-win %%, 95%% CI)")
    match.add_argument("--matches", type=int, default=None, metavar="M",
                       help="matches to play with --match-length, in duplicate pairs (default 1000)")
    match.add_argument("--out", metavar="JSON", help="write the full record here (and a CSV of the games)")
    match.add_argument("--csv", metavar="CSV", help="where the CSV goes (default: --out with .csv)")
    match.add_argument("--json", action="store_true", help="print the record as one JSON line")
    match.add_argument("--partial", metavar="DIR", help="save every finished chunk of games here and resume from "
                       "it: a killed match loses only the chunks in flight; more --games reuses the first ones")
    match.add_argument("--record-games", metavar="FILE", help="also write the moves of the games here (a "
                       "tapa-ai/games record that tapa-ai analyse reads); single games only")
    match.add_argument("--record-count", type=int, default=None, metavar="N",
                       help="with --record-games: record the first N games only (default: all)")
    match.set_defaults(func=_cmd_match)

    tournament = sub.add_parser("tournament", help="round robin of several bots: Elo ratings with 95%% CIs")
    tournament.add_argument("bots", nargs="+", metavar="BOT", help=bots_help)
    _arena_options(tournament, games=400)
    tournament.add_argument("--out", metavar="DIR", help="write tournament.json, tournament.md and tournament.png here")
    tournament.set_defaults(func=_cmd_tournament)

    export = sub.add_parser("export", help="write a checkpoint's network as ONNX, TorchScript or npz (docs/export.md)")
    export.add_argument("checkpoint", metavar="CHECKPOINT", help="a training checkpoint, or a shipped model's "
                        "name: tapa, plakoto, backgammon")
    export.add_argument("--format", required=True, metavar="FORMAT", help="onnx, torchscript or npz")
    export.add_argument("--out", required=True, metavar="PATH", help="the file to write (parent folders are made)")
    export.set_defaults(func=_cmd_export)

    play = sub.add_parser("play", help="play a game or a match against a bot in the terminal (docs/play.md)")
    play.add_argument("--variant", choices=list(VARIANTS), help="rule set (default: the bot net's, else tapa)")
    play.add_argument("--bot", metavar="SPEC", help="the opponent (default: the shipped net:<variant>@1ply, else "
                      "heuristic); " + bots_help)
    play.add_argument("--match-length", type=int, default=0, metavar="N",
                      help="play a match to N points (default 0: money play, game after game)")
    play.add_argument("--seed", type=int, default=None, help="seed of the dice and the bot (default: random, shown)")
    play.add_argument("--as", dest="human", choices=["X", "O"], default="X", help="the side you play (default X)")
    play.add_argument("--advisor", metavar="SPEC", help="network behind hint and eval: net:PATH[@Nply] or none "
                      "(default: the bot if it is a net, else the shipped net:<variant>)")
    play.add_argument("--load", metavar="FILE", help="continue a game saved with 'save FILE' (or start from a "
                      "JSON position)")
    play.add_argument("--show-eval", action="store_true", help="show the engine's view of every bot move")
    play.add_argument("--no-color", action="store_true", help="plain text (colour is used only on a terminal "
                      "and when NO_COLOR is unset)")
    play.set_defaults(func=_cmd_play)

    engine = sub.add_parser("engine", help="JSON-lines engine protocol on stdin/stdout (docs/protocol.md)")
    engine.add_argument("--generator", choices=["reference", "vectorized"], default=None,
                        help="default move generator (default: vectorized when available)")
    engine.add_argument("--bot", metavar="SPEC", help="the model of encode/evaluate/best_move/hint: net:PATH or "
                        "net:PATH@Nply, e.g. net:tapa@1ply, the shipped model (its checkpoint fixes the variant)")
    engine.set_defaults(func=_cmd_engine)

    serve = sub.add_parser("serve", help="the engine's commands as JSON over HTTP (docs/protocol.md#http)")
    serve.add_argument("--port", type=int, default=8080, help="TCP port (default 8080; 0 picks a free one)")
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1, this machine "
                       "only; 0.0.0.0 opens it to the network)")
    serve.add_argument("--bot", metavar="SPEC", help="the model: net:PATH or net:PATH@Nply (as engine --bot)")
    serve.add_argument("--generator", choices=["reference", "vectorized"], default=None,
                       help="default move generator (default: vectorized when available)")
    serve.add_argument("--allow-origin", action="append", default=[], metavar="ORIGIN",
                       help="let web pages of ORIGIN (e.g. https://board.example; '*' for any) call the engine "
                       "from a browser; repeatable (default: none, only the server's own page, the board)")
    serve.add_argument("--allow-host", action="append", default=[], metavar="NAME",
                       help="answer requests whose Host is NAME ('*' for any); repeatable (default: IP addresses, "
                       "localhost and the --host name only, so a web page cannot reach it by DNS rebinding)")
    serve.add_argument("--threads", type=int, default=8, help="worker threads answering requests (default 8)")
    serve.add_argument("--queue", type=int, default=64,
                       help="connections that may wait for a thread; more get 429 with Retry-After (default 64)")
    serve.add_argument("--read-timeout", type=float, default=10.0, metavar="S",
                       help="seconds a client has to send a whole request (default 10)")
    serve.add_argument("--command-timeout", type=float, default=30.0, metavar="S",
                       help="seconds one request may compute, then 503 (default 30; 0: no limit)")
    serve.add_argument("--max-rollout-games", type=int, default=2 * 1296, metavar="N",
                       help="most games one rollout request may play, games a move times the moves (default 2592)")
    serve.add_argument("--quiet", action="store_true", help="no request log on stderr")
    serve.set_defaults(func=_cmd_serve)

    rollout = sub.add_parser("rollout", help="roll out a position, or the candidate moves of a roll on the same "
                             "dice (docs/rollout.md)")
    rollout.add_argument("--position", required=True, metavar="POSITION",
                         help="JSON position (text or a file) before the roll, or a GNU Backgammon Position ID")
    rollout.add_argument("--turn", choices=["X", "O"], default="X", help="side to roll of a Position ID (default X)")
    rollout.add_argument("--dice", type=int, nargs=2, metavar=("D1", "D2"),
                         help="analyse the moves of this roll instead of rolling out the position")
    rollout.add_argument("--candidates", type=int, default=5, metavar="N",
                         help="with --dice: roll out the N best moves of the ranking net's search (default 5)")
    rollout.add_argument("--move", action="append", metavar="MOVE", help="with --dice: roll out this move "
                         "(move notation, e.g. '24/18 13/11'; repeatable) instead of the best N")
    rollout.add_argument("--ranker", metavar="SPEC", help="net:PATH[@Nply] ranking the candidates (default: the "
                         "bot if it is a net, else the evaluator)")
    rollout.add_argument("--bot", metavar="SPEC", help="the bot playing both sides (default: the variant's shipped "
                         "net, 0-ply); " + bots_help)
    rollout.add_argument("--evaluator", metavar="SPEC", help="net:PATH valuing luck and truncated games (default: "
                         "the bot when it is a net)")
    rollout.add_argument("--games", type=int, default=1296, help="games per position or move (default 1296; "
                         "rounded up to a multiple of 36 when rotating)")
    rollout.add_argument("--truncate", type=int, default=0, metavar="PLIES",
                         help="stop after PLIES plies and take the evaluator's value (default 0: play to the end)")
    rollout.add_argument("--bearoff", action="store_true",
                         help="stop at the first bear-off position and take the bear-off database's value")
    rollout.add_argument("--rotate", type=int, choices=[0, 1, 2], default=1,
                         help="balance the first 0, 1 or 2 rolls over every 36 games (default 1)")
    rollout.add_argument("--luck", action="store_true", help="luck-adjusted results by the evaluator's 21-roll "
                         "mean: a narrower CI per game, at 10-20x the time with a 0-ply bot (docs/rollout.md)")
    rollout.add_argument("--seed", type=int, default=1, help="seed of the dice (default 1)")
    _worker_options(rollout)
    rollout.add_argument("--json", action="store_true", help="print the result as one JSON object")
    rollout.add_argument("--out", metavar="JSON", help="also write the result here")
    rollout.set_defaults(func=_cmd_rollout)

    analyse = sub.add_parser("analyse", help="rate the moves and rolls of a recorded game or match: errors, "
                             "blunders, luck per player (docs/analysis.md)")
    analyse.add_argument("file", metavar="FILE", help="a game saved by tapa-ai play, the web board's Save game, or "
                         "tapa-ai match --record-games")
    analyse.add_argument("--bot", metavar="SPEC", help="the analysing network, net:PATH[@Nply] (default: the shipped "
                         "net:<variant>@1ply of the record's variant)")
    analyse.add_argument("--json", metavar="PATH", help="also write the full analysis here as JSON")
    analyse.add_argument("--blunder", type=float, default=80.0, metavar="MP",
                         help="mark a move losing more than MP millipoints a blunder (default 80)")
    analyse.add_argument("--error", type=float, default=20.0, metavar="MP",
                         help="mark a move losing more than MP millipoints an error (default 20)")
    analyse.add_argument("--game", type=int, metavar="N", help="analyse game number N of the file only")
    analyse.add_argument("--quiet", action="store_true", help="no progress bar")
    analyse.set_defaults(func=_cmd_analyse)

    bearoff = sub.add_parser("bearoff", help="build (once) and query the one-sided bear-off database")
    bearoff.add_argument("home", nargs="*", type=int, metavar="N",
                         help="checkers on the 1- to 6-points (six counts): print their distributions")
    bearoff.add_argument("--rebuild", action="store_true", help="build the database again even if a valid one is cached")
    bearoff.add_argument("--json", action="store_true", help="one JSON object, as the engine's bearoff command")
    bearoff.add_argument("--quiet", action="store_true", help="no progress bar or messages")
    bearoff.set_defaults(func=_cmd_bearoff)
    from .arena.benchmark_command import add_parser as add_benchmark_parser  # tapa-ai benchmark (docs/benchmark.md)
    add_benchmark_parser(sub, bots_help, _worker_options)
    return parser


def _arena_options(parser: argparse.ArgumentParser, games: int) -> None:
    parser.add_argument("--variant", choices=list(VARIANTS), help="rule set (default: the net's, else tapa)")
    parser.add_argument("--games", type=int, default=games, help=f"games per pairing, played in duplicate pairs "
                        f"(default {games}; rounded up to even)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the dice and of every random choice (default 1)")
    _worker_options(parser)


def _worker_options(parser: argparse.ArgumentParser) -> None:
    """--workers, --ray-address and --quiet of the commands that play games over processes."""
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1,
                        help="processes playing games (default: the CPU count); results do not depend on it")
    parser.add_argument("--ray-address", metavar="ADDRESS", help="play on a Ray cluster instead of --workers "
                        "processes: auto, host:port, or local; same results (needs pip install 'tapa-ai[ray]')")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        args = parser.parse_args(["train", *(argv or [])])
    if args.command == "demo" and args.games < 1:
        parser.error("--games must be at least 1")
    if args.command in ("match", "tournament") and args.games < 2:
        parser.error("--games must be at least 2 (one duplicate pair)")
    if args.command in ("match", "tournament") and args.workers < 1:
        parser.error("--workers must be at least 1")
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
