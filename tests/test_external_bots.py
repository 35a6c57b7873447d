"""Bots outside this process: ``engine:CMD`` (a JSON-lines engine subprocess) and ``onnx:PATH`` (onnxruntime).

The real engine (``tapa-ai engine --bot net:...``) and the exported model
must play exactly the moves of the ``net:`` checkpoint, so duplicate pairs
against it score exactly 0 and are the very games of net against net. Small
fake engines (Python scripts written to ``tmp_path``, moving by the reference
generator) misbehave on purpose: every misbehaviour is a clear BotError (or
the passive-cube fallback), and no engine process outlives its bot.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from tapa_ai.arena.cube_play import play_cube_pairs
from tapa_ai.arena.duels import play_pairs
from tapa_ai.arena.match import run_match
from tapa_ai.bots.base import BotError
from tapa_ai.cube.decisions import CubeSituation
from tapa_ai.bots.search import NetBot
from tapa_ai.bots.spec import make_bot, model_file_path, model_rules, net_checkpoint_path
from tapa_ai.movegen.batch import PositionBatch
from tapa_ai.movegen.generate import Afterstates, generate
from tapa_ai.movegen.random_positions import endgame_positions, mixed_positions, playout_positions, random_dice
from tapa_ai.net.evaluator import TorchEvaluator
from tapa_ai.rules.options import variant_rules
from tapa_ai.rules.position import start_position
from tests.requires import require

ROOT = Path(__file__).resolve().parent.parent
TAPA = variant_rules("tapa")
NET = f"net:{ROOT / 'checkpoints/tapa.pt'}"
REAL_ENGINE = f"engine:{shlex.quote(sys.executable)} -m tapa_ai.cli engine --bot {shlex.quote(NET)}"

FAKE_ENGINE = textwrap.dedent('''
    """A fake engine: plays the first legal move of the reference generator, misbehaving as MODE says.

    argv: MODE AFTER LOG [MARKER]; it misbehaves from the best_move request number AFTER + 1 on (the
    handshake's probe is number 1), appends its pid to PIDS and every request to LOG.
    """
    import json, os, sys, time
    from tapa_ai.notation.json_position import position_from_json, position_to_json
    from tapa_ai.notation.move_text import format_move
    from tapa_ai.rules.options import variant_rules
    from tapa_ai.rules.position import start_position
    from tapa_ai.rules.reference import legal_moves

    mode, after, log = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    marker = sys.argv[4] if len(sys.argv) > 4 else None
    with open(log + ".pids", "a") as pids:
        pids.write(f"{os.getpid()}\\n")
    moves_asked = 0
    for line in sys.stdin:
        request = json.loads(line)
        with open(log, "a") as handle:
            handle.write(line)
        command = request["cmd"]
        if command == "start":
            answer = {"position": position_to_json(start_position(variant_rules(request["variant"]), "X"))}
        elif command == "best_move":
            moves_asked += 1
            position = position_from_json(request["position"])
            move = legal_moves(position, tuple(request["dice"]))[0]
            answer = {"move": format_move(move), "position": position_to_json(move.position)}
            if mode == "text":
                del answer["position"]
            if moves_asked > after:
                if mode == "illegal":
                    answer = {"move": "", "position": request["position"]}
                elif mode == "garbage":
                    print("this is not JSON", flush=True)
                    continue
                elif mode == "error":
                    answer = {"error": "no idea"}
                elif mode == "silent":
                    time.sleep(300)
                elif mode == "die" or (mode == "die_once" and not os.path.exists(marker)):
                    if marker:
                        open(marker, "w").close()
                    print("fake engine: dying on purpose", file=sys.stderr, flush=True)
                    sys.exit(3)
        elif command == "cube":
            if mode == "nocube":
                answer = {"error": "'cube' needs a model: start the engine with --bot net:PATH"}
            else:
                answer = {"action": "double", "response": "pass"}
        else:
            answer = {"error": f"unknown cmd {command!r}"}
        answer["id"] = request["id"]
        print(json.dumps(answer), flush=True)
    if mode == "linger":  # does not exit at the end of its input: only a kill ends it
        time.sleep(300)
''')


@pytest.fixture
def fake(tmp_path):
    """``fake(mode, after=..., marker=...)`` -> (spec, log path) of a fake engine."""
    script = tmp_path / "fake_engine.py"
    script.write_text(FAKE_ENGINE)
    logs = []

    def make(mode: str = "ok", after: int = 10 ** 9, marker: bool = False) -> tuple[str, Path]:
        log = tmp_path / f"log{len(logs)}.jsonl"
        logs.append(log)
        command = f"{sys.executable} {script} {mode} {after} {log}" + (f" {tmp_path / 'marker'}" if marker else "")
        return f"engine:{command}", log

    yield make
    for log in logs:  # no fake engine outlives the test
        pids = Path(str(log) + ".pids")
        for pid in (pids.read_text().split() if pids.exists() else []):
            assert not alive(int(pid)), f"fake engine {pid} still running"


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def engine_children() -> list[int]:
    """Processes whose parent is this one and whose command line runs ``tapa_ai.cli engine``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ")
        except (OSError, IndexError, ValueError):
            continue
        if parent == os.getpid() and b"tapa_ai.cli engine" in command:
            found.append(int(entry.name))
    return found


def requests(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text().splitlines()]


def assert_same_games(one, other) -> None:
    for name in ("points_for_a", "turns", "kind"):
        assert np.array_equal(getattr(one, name), getattr(other, name)), name


# -- the real engine ----------------------------------------------------------------------------------------
PAIRS, SEED = 10, 3


@pytest.fixture(scope="module")
def real_engine():
    """``tapa-ai engine --bot net:checkpoints/tapa.pt`` as a bot (one process for the module: it starts slowly)."""
    bot = make_bot(REAL_ENGINE, TAPA)
    yield bot
    bot.close()
    assert engine_children() == []


def test_the_engine_of_a_net_plays_as_the_net_but_for_exact_ties(real_engine):
    records = play_pairs(TAPA, real_engine, make_bot(NET, TAPA), PAIRS, seed=SEED)
    assert records.summary().ppg == 0.0
    assert np.array_equal(records.points_for_a[0::2], -records.points_for_a[1::2])
    # Move by move on positions of all kinds: the engine's choice is the net's, except where the net sees
    # an exact tie (two such draws can make two otherwise equal games differ, so the games are not
    # compared with net against net).
    rng = np.random.default_rng(5)
    differ = engine_differences_from_net(real_engine, playout_positions(TAPA, 1500, rng), rng)
    assert differ.mean() < 0.1


def engine_differences_from_net(engine, batch, rng) -> np.ndarray:
    """Where ``engine`` chooses another move than the net on ``batch`` (one random roll each), checked to be ties.

    Where the net sees an exact tie it draws at random and the engine takes the first: not a difference.
    """
    afterstates = generate(batch, random_dice(len(batch), rng))
    net = make_bot(NET, TAPA)
    _, _, equities = net.ranked(afterstates)
    mine = engine.choose(afterstates, np.random.default_rng(0))
    theirs = net.choose(afterstates, np.random.default_rng(0))
    differ = mine != theirs
    assert np.all(np.abs(equities[mine[differ]] - equities[theirs[differ]]) < 1e-9)
    return differ


def test_the_engine_of_a_net_chooses_as_the_net_in_bear_offs_too(real_engine):
    rng = np.random.default_rng(1)
    engine_differences_from_net(real_engine, endgame_positions(TAPA, 300, rng), rng)


def test_the_engine_bot_takes_its_cube_decisions_from_the_engine(real_engine):
    net = make_bot(NET, TAPA)
    positions = playout_positions(TAPA, 40, np.random.default_rng(2))
    rng = np.random.default_rng(0)
    count = len(positions)
    situations = [
        CubeSituation.money_play(TAPA, np.ones(count), np.zeros(count)),
        CubeSituation(TAPA, np.full(count, 2), np.ones(count, dtype=np.int8), 7, np.full(count, 4),
                      np.full(count, 2), np.zeros(count, dtype=bool), np.zeros(count, dtype=bool)),
    ]
    for situation in situations:
        for method in ("offer_double", "accept_double"):
            mine = getattr(real_engine, method)(positions, situation, rng)
            theirs = getattr(net, method)(positions, situation, rng)
            assert np.array_equal(mine, theirs), method
    assert real_engine.cube_mode == "engine"


# -- onnx ---------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """variant -> the shipped checkpoint exported to ONNX by the project's exporter."""
    require("onnx")
    require("onnxruntime")
    from tapa_ai.export.core import export_checkpoint

    folder = tmp_path_factory.mktemp("onnx")
    return {variant: export_checkpoint(ROOT / f"checkpoints/{variant}.pt", "onnx", folder / f"{variant}.onnx")
            for variant in ("tapa", "plakoto", "backgammon")}


def test_an_onnx_model_scores_level_with_its_checkpoint(exported):
    # Move by move the two differ only at float32 near-ties and exact ties (the test below); over these
    # seeded duplicate pairs no such difference changes a result: exactly level.
    records = play_pairs(TAPA, make_bot(f"onnx:{exported['tapa']}"), make_bot(NET, TAPA), PAIRS, seed=SEED)
    assert records.summary().ppg == 0.0


@pytest.mark.parametrize("variant", ["tapa", "plakoto", "backgammon"])
def test_onnx_and_net_choose_the_same_rows_but_for_float32_near_ties(exported, variant):
    onnx_bot = make_bot(f"onnx:{exported[variant]}")
    net_bot = make_bot(f"net:{ROOT / f'checkpoints/{variant}.pt'}")
    rng = np.random.default_rng(11)
    batch = mixed_positions(variant, 2500, rng)
    afterstates = generate(batch, random_dice(len(batch), rng))
    _, net_values, net_equities = net_bot.ranked(afterstates)  # the net bot's own 0-ply values (numba kernel)
    torch_bot = NetBot(TorchEvaluator(net_bot.net))  # the same net on its torch reference path
    _, torch_values, _ = torch_bot.ranked(afterstates)
    torch_choices = torch_bot.choose(afterstates, np.random.default_rng(4))
    # float32 in another order: as close to the kernel as the net's own torch path is (two-layer nets whose
    # logits span tens of orders of magnitude differ by ~1e-5 between any two orders; an export error would
    # be orders of magnitude more)
    own_spread = np.abs(torch_values - net_values).max()
    assert np.abs(onnx_bot.evaluator.afterstate_distributions(afterstates) - net_values).max() < max(1e-5, 2 * own_spread) < 1e-4
    mine = onnx_bot.choose(afterstates, np.random.default_rng(4))
    theirs = net_bot.choose(afterstates, np.random.default_rng(4))
    differ = np.flatnonzero(mine != theirs)
    decisions = int((np.diff(afterstates.offsets) > 1).sum())
    # As rarely as the net's own torch path chooses otherwise than its kernel (how many near-ties a net has
    # depends on its weights: 0.1-0.5% of choices for the shipped nets), and never more than 1%.
    own_differ = int((torch_choices != theirs).sum())
    assert decisions > 2000 and differ.size <= max(0.005 * decisions, 2 * own_differ)
    assert differ.size <= 0.01 * decisions
    # A differing choice is a near-tie: the two moves are within float32 noise of each other in the net's values.
    assert np.all(np.abs(net_equities[mine[differ]] - net_equities[theirs[differ]]) < 1e-6)


@pytest.mark.parametrize("variant", ["tapa", "backgammon"])
def test_an_onnx_model_searches_two_plies_as_its_checkpoint_does(exported, variant):
    """onnx:PATH@2ply is the net bot's search over the exported model: the same candidates, values within
    float32 noise of net:PATH@2ply's, and the same choices but for near-ties."""
    onnx_bot = make_bot(f"onnx:{exported[variant]}@2ply")
    net_bot = make_bot(f"net:{ROOT / f'checkpoints/{variant}.pt'}@2ply")
    assert onnx_bot.name.endswith("@2ply") and onnx_bot.plies == net_bot.plies == 2 and onnx_bot.bearoff
    rng = np.random.default_rng(5)
    batch = mixed_positions(variant, 40, rng)
    afterstates = generate(batch, random_dice(len(batch), rng))
    onnx_rows, onnx_values, onnx_equities = onnx_bot.ranked(afterstates)
    net_rows, net_values, net_equities = net_bot.ranked(afterstates)
    assert np.array_equal(onnx_rows, net_rows)
    # Float32 noise (~2e-7 points) everywhere, except where it flips a reply the search chose by a near-tie of
    # 0-ply equities deeper down: that branch (1/36 of a value) then takes the other reply's value. Measured
    # here: 2 of 153 tapa candidates (up to 0.004 points), none of 138 backgammon ones.
    gaps = np.abs(onnx_equities - net_equities)
    assert np.mean(gaps < 1e-5) >= 0.95 and gaps.max() < 0.01
    mine = onnx_bot.choose(afterstates, np.random.default_rng(4))
    theirs = net_bot.choose(afterstates, np.random.default_rng(4))
    decisions = int((np.diff(afterstates.offsets) > 1).sum())
    assert decisions > 20 and np.sum(mine != theirs) <= 1


def test_an_onnx_model_knows_its_variant(exported):
    spec = f"onnx:{exported['plakoto']}"
    bot = make_bot(spec)  # no rules needed: the file's metadata has them
    assert bot.rules == variant_rules("plakoto") and bot.name == spec
    assert model_rules(spec) == variant_rules("plakoto") and model_file_path(spec) == exported["plakoto"]
    assert model_rules(NET) == TAPA and model_rules("heuristic") is None and net_checkpoint_path(spec) is None
    with pytest.raises(BotError, match="trained for rule set 'plakoto'; it cannot play 'tapa'"):
        make_bot(spec, TAPA)
    # Its cube is passive.
    positions = PositionBatch.from_positions([start_position(TAPA)])
    situation = CubeSituation.money_play(TAPA, [1], [0])
    tapa_bot = make_bot(f"onnx:{exported['tapa']},nocube", TAPA)
    assert not tapa_bot.offer_double(positions, situation, None)[0] and tapa_bot.accept_double(positions, situation,
                                                                                              None)[0]


def test_onnx_errors_are_clear(tmp_path, monkeypatch):
    with pytest.raises(BotError, match="no ONNX model file"):
        make_bot(f"onnx:{tmp_path / 'missing.onnx'}")
    (tmp_path / "junk.onnx").write_bytes(b"not a model")
    with pytest.raises(BotError, match="not a readable ONNX model"):
        make_bot(f"onnx:{tmp_path / 'junk.onnx'}")
    with pytest.raises(BotError, match="needs the path"):
        make_bot("onnx:")
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # as if not installed
    with pytest.raises(BotError, match=r"pip install 'tapa-ai\[export\]'"):
        make_bot(f"onnx:{tmp_path / 'junk.onnx'}")


# -- fake engines -------------------------------------------------------------------------------------------
def test_commas_belong_to_the_engine_command_line(fake):
    spec, log = fake("ok")
    bot = make_bot(spec + " a,b", TAPA)  # ",b" is an argument, not a cube option
    try:
        assert bot.argv[-1] == "a,b" and bot.name == spec + " a,b"
        assert [request["cmd"] for request in requests(log)] == ["start", "best_move"]  # the handshake
    finally:
        bot.close()


def test_a_healthy_fake_engine_plays_whole_games_asking_only_real_choices(fake):
    spec, log = fake("ok")
    bot = make_bot(spec, TAPA)
    try:
        records = play_pairs(TAPA, bot, make_bot("runner"), 2, seed=1)
    finally:
        bot.close()
    assert records.games == 4 and (records.kind > 0).all()
    asked = [request for request in requests(log) if request["cmd"] == "best_move"][1:]
    assert len({request["id"] for request in asked}) == len(asked)
    for request in asked:  # only positions with more than one legal move are asked
        from tapa_ai.notation.json_position import position_from_json
        from tapa_ai.rules.reference import legal_moves

        assert len(legal_moves(position_from_json(request["position"]), tuple(request["dice"]))) > 1


def test_move_text_alone_is_understood(fake):
    spec_text, _ = fake("text")
    spec_position, _ = fake("ok")
    text_bot, position_bot = make_bot(spec_text, TAPA), make_bot(spec_position, TAPA)
    try:
        assert_same_games(play_pairs(TAPA, text_bot, make_bot("runner"), 2, seed=5),
                          play_pairs(TAPA, position_bot, make_bot("runner"), 2, seed=5))
    finally:
        text_bot.close()
        position_bot.close()


@pytest.mark.parametrize("mode, message", [
    ("illegal", "answered an illegal move: its position is none of the"),
    ("garbage", "answered a line that is not JSON; request: .*best_move.*; answer: this is not JSON"),
    ("error", "answered an error; request: .*; answer: .*no idea"),
])
def test_a_misbehaving_engine_is_a_clear_error(fake, mode, message):
    spec, _ = fake(mode, after=3)
    bot = make_bot(spec, TAPA)
    with pytest.raises(BotError, match=message):
        play_pairs(TAPA, bot, make_bot("runner"), 3, seed=1)
    with pytest.raises(BotError, match="its engine was stopped"):
        play_pairs(TAPA, bot, make_bot("runner"), 1, seed=1)
    bot.close()


def test_an_engine_that_does_not_answer_in_time_is_stopped(fake, monkeypatch):
    monkeypatch.setenv("TAPA_ENGINE_MOVE_TIMEOUT", "0.5")
    spec, _ = fake("silent", after=1)
    bot = make_bot(spec, TAPA)
    assert bot.move_timeout == 0.5
    with pytest.raises(BotError, match=r"gave no answer within 0.5 s \(the limit TAPA_ENGINE_MOVE_TIMEOUT\)"):
        play_pairs(TAPA, bot, make_bot("runner"), 2, seed=1)
    monkeypatch.setenv("TAPA_ENGINE_MOVE_TIMEOUT", "soon")
    with pytest.raises(BotError, match="TAPA_ENGINE_MOVE_TIMEOUT='soon': want a number of seconds > 0"):
        make_bot(spec, TAPA)


def test_a_silent_engine_at_start_up_is_stopped(fake, monkeypatch):
    monkeypatch.setenv("TAPA_ENGINE_START_TIMEOUT", "0.5")
    spec, _ = fake("silent", after=0)
    with pytest.raises(BotError, match="gave no answer within 0.5 s .*TAPA_ENGINE_START_TIMEOUT.* at start-up"):
        make_bot(spec, TAPA)


def test_a_dead_engine_is_restarted_once_and_the_batch_played_again(fake, capsys):
    healthy, _ = fake("ok")
    dies_once, log = fake("die_once", after=4, marker=True)
    bot, reference = make_bot(dies_once, TAPA), make_bot(healthy, TAPA)
    try:
        records = play_pairs(TAPA, bot, make_bot("runner"), 2, seed=2)
        assert_same_games(records, play_pairs(TAPA, reference, make_bot("runner"), 2, seed=2))
    finally:
        bot.close()
        reference.close()
    assert bot.restarts == 1
    err = capsys.readouterr().err
    assert "process ended (exit code 3)" in err and "restarting it" in err and "dying on purpose" in err
    assert len(Path(str(log) + ".pids").read_text().split()) == 2


def test_an_engine_that_dies_again_stops_the_match(fake):
    spec, _ = fake("die", after=3)
    bot = make_bot(spec, TAPA)
    with pytest.raises(BotError, match=r"process ended \(exit code 3\) before answering again after its restart; "
                                       r"request: .*best_move.*engine stderr, last lines: fake engine: dying"):
        play_pairs(TAPA, bot, make_bot("runner"), 3, seed=1)


def test_an_engine_without_cube_answers_plays_the_passive_cube(fake, capsys):
    spec, log = fake("nocube")
    bot = make_bot(spec, TAPA)
    try:
        records = play_cube_pairs(TAPA, bot, make_bot("runner"), 3, seed=1)
        assert bot.cube_mode == "passive" and records.doubles.sum() == 0
        # Both cubes passive: the very games of play_pairs.
        plain = play_pairs(TAPA, bot, make_bot("runner"), 3, seed=1)
        assert np.array_equal(records.points_for_a, plain.points_for_a) and np.array_equal(records.turns, plain.turns)
    finally:
        bot.close()
    err = capsys.readouterr().err
    assert err.count("plays the passive cube") == 1 and "needs a model" in err
    assert sum(request["cmd"] == "cube" for request in requests(log)) >= 1


def test_cube_requests_carry_the_cube_and_the_score(fake):
    spec, log = fake("ok")
    bot = make_bot(spec, TAPA)
    try:
        position = start_position(TAPA, "O")
        positions = PositionBatch.from_positions([position])
        situation = CubeSituation(TAPA, np.array([2]), np.array([1], dtype=np.int8), 7, np.array([4]), np.array([2]),
                                  np.array([True]), np.array([False]))
        assert bot.offer_double(positions, situation, None).tolist() == [True]
        assert bot.accept_double(positions, situation, None).tolist() == [False]
        money = CubeSituation.money_play(TAPA, [4], [-1])
        bot.offer_double(positions, money, None)
    finally:
        bot.close()
    cube = [request for request in requests(log) if request["cmd"] == "cube"]
    assert cube[0]["cube"] == {"value": 2, "owner": "O"}
    assert cube[0]["match"] == {"length": 7, "score": {"O": 3, "X": 5}, "crawford": False}
    assert cube[2]["cube"] == {"value": 4, "owner": "X"} and "match" not in cube[2]


def test_the_engine_bot_needs_the_positions_and_dice(fake):
    spec, _ = fake("ok")
    bot = make_bot(spec, TAPA)
    try:
        afterstates = generate(PositionBatch.from_positions([start_position(TAPA)]), np.array([[6, 5]]))
        bare = Afterstates(*[getattr(afterstates, name) for name in (
            "positions", "source", "offsets", "game_over", "winner", "result_kind", "result_points", "steps",
            "n_steps")])
        with pytest.raises(BotError, match="needs the positions moved from and their dice"):
            bot.choose(bare, np.random.default_rng(0))
        kept = afterstates.of_sources(np.array([0]))
        assert kept.inputs is not None and kept.dice.tolist() == [[6, 5]]
        assert 0 <= bot.choose(kept, np.random.default_rng(0))[0] < len(kept)
    finally:
        bot.close()


def test_engine_spec_errors_are_clear(fake, tmp_path):
    with pytest.raises(BotError, match="say which rule set"):
        make_bot("engine:anything")
    with pytest.raises(BotError, match="give the engine's command line"):
        make_bot("engine:", TAPA)
    with pytest.raises(BotError, match="cannot split the command line"):
        make_bot("engine:python 'unclosed", TAPA)
    with pytest.raises(BotError, match="cannot start '/no/such/engine'"):
        make_bot("engine:/no/such/engine --flag", TAPA)
    spec, _ = fake("ok")
    bot = make_bot(spec, TAPA)
    try:
        with pytest.raises(BotError, match="was started for rule set 'tapa'; it cannot play 'plakoto'"):
            bot.check_rules(variant_rules("plakoto"))
    finally:
        bot.close()


@pytest.mark.parametrize("workers", [1, 2])
def test_run_match_ends_the_engines_of_its_workers(fake, workers):
    spec, log = fake("linger")  # an engine that only a kill ends
    result = run_match(spec, "runner", TAPA, 8, seed=1, workers=workers, chunk_pairs=2, progress=False)
    assert result.records.games == 8
    pids = [int(pid) for pid in Path(str(log) + ".pids").read_text().split()]
    assert len(pids) == 1 + workers  # the check of the spec, then one per worker
    assert not any(alive(pid) for pid in pids)
