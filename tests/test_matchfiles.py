"""Match files in and out (issue 65): GNU Backgammon's SGF and the .mat text, for every variant (docs/match-files.md).

The files in tests/data/matchfiles/: ``gnubg_match3.sgf`` and ``gnubg_match3.mat`` are one 3-point match
GNU Backgammon 1.07.001 played against itself (``gnubg -t``: ``new match 3``, then ``save match`` and ``export
match mat``), with its analysis properties; ``fibs_style.mat`` is its first game edited by hand into the other
writing of the format (CRLF line ends, comments, ``bar/22``, ``6/off``, ``13/7(2)``, no final ``Wins`` line).
"""

from __future__ import annotations

import dataclasses
import io
import re
from pathlib import Path

import pytest

from tapa_ai.analysis.records import RecordError, read_record, record_from_json
from tapa_ai.arena.match import run_match
from tapa_ai.matchfiles import (MatchFileError, from_record, is_match_file, match_text, parse_match_text,
                                read_match_file, replay_match)
from tapa_ai.rules.options import REGISTRY, VARIANTS, variant_rules
from tapa_ai.rules.rotations import ROTATIONS, Rotation

DATA = Path(__file__).parent / "data" / "matchfiles"


def moves_of(record):
    return [[(turn.side, turn.action, turn.dice, turn.move, turn.cube) for turn in game.turns]
            for game in record.games]


def ends_of(record):
    return [(game.number, game.result, game.cube, game.ending, game.players, game.score, game.crawford)
            for game in record.games]


def round_trip(record, kind: str):
    text = match_text(from_record(record), kind)
    return replay_match(parse_match_text(text, f"back.{kind}"), f"back.{kind}", record_from_json), text


@pytest.fixture(scope="module")
def arena_records(tmp_path_factory):
    folder = tmp_path_factory.mktemp("arena")
    records = {}
    for variant in sorted(VARIANTS):
        rules = variant_rules(variant)
        result = run_match("heuristic", "random", rules, 2, seed=3, progress=False, record_games=2)
        result.write_games(folder / f"{variant}.json", rules)
        records[variant] = (read_record(folder / f"{variant}.json"), result, rules)
    return records


@pytest.mark.parametrize("variant", sorted(VARIANTS))
@pytest.mark.parametrize("kind", ["sgf", "mat"])
def test_every_variants_arena_games_round_trip(arena_records, variant, kind):
    record, _, _ = arena_records[variant]
    back, text = round_trip(record, kind)
    assert moves_of(back) == moves_of(record)
    assert ends_of(back) == ends_of(record)
    assert sum(len(game.moves) for game in back.games) > 20
    if variant != "backgammon":  # the extension names the variant; backgammon files stay standard
        assert (f"Variant={variant}" in text) if kind == "sgf" else ('[Variation "' in text)


@pytest.mark.parametrize("kind", ["sgf", "mat"])
def test_match_record_games_writes_the_file_by_its_name(arena_records, kind, tmp_path):
    record, result, rules = arena_records["gulbara"]
    path = tmp_path / f"games.{kind}"
    result.write_games(path, rules)
    assert is_match_file(path)
    back = read_record(path)
    assert moves_of(back) == moves_of(record) and ends_of(back) == ends_of(record)
    if kind == "sgf":  # a cascade's stages: nodes of the same player one after the other
        colours = re.findall(r"^;([BW])\[", path.read_text(), re.M)
        assert any(a == b for a, b in zip(colours, colours[1:]))


def test_gnubgs_sgf_and_mat_of_one_match_read_as_the_same_games():
    sgf, mat = read_record(DATA / "gnubg_match3.sgf"), read_record(DATA / "gnubg_match3.mat")
    assert moves_of(sgf) == moves_of(mat)
    assert ends_of(sgf) == ends_of(mat)
    assert [game.number for game in sgf.games] == [1, 2]
    first, second = sgf.games
    assert first.players == {"X": "root", "O": "gnubg"} and first.score == (0, 0) and first.match_length == 3
    assert first.turns[0].move == "13/7 8/7" and first.turns[0].dice == (6, 1) and first.turns[0].opening
    assert [turn.action for turn in first.turns[-2:]] == ["double", "drop"] and first.ending == "drop"
    assert first.result.winner == "X"
    # gnubg's RE[B+2R] (the .mat: Wins 2 points, the moves not over): resigned, a single game at the cube of 2
    assert second.score == (1, 0) and second.cube == 2 and second.ending == "resigned"
    assert second.result.winner == "X" and second.result.kind == "single"
    passes = [turn for turn in second.turns if turn.action == "move" and turn.move == ""]
    assert len(passes) == 9  # ;W[53] and '53:' with no move: O on the bar, closed out
    assert sum(len(game.moves) for game in sgf.games) == 70


def test_a_hand_written_mat_with_crlf_comments_and_shorthands_reads_as_gnubgs():
    assert b"\r\n" in (DATA / "fibs_style.mat").read_bytes()
    hand, gnubg = read_record(DATA / "fibs_style.mat"), read_record(DATA / "gnubg_match3.mat")
    assert moves_of(hand) == moves_of(gnubg)[:1]
    assert hand.games[0].result == gnubg.games[0].result and hand.games[0].ending == "drop"
    assert read_match_file(DATA / "fibs_style.mat").players == {"O": "gnubg", "X": "root"}


def test_sgf_with_comments_variations_and_crlf_reads_its_main_line():
    text = (DATA / "gnubg_match3.sgf").read_text()
    text = text.replace(";B[61lrqr]", ";B[61lrqr]C[a comment \\] with a bracket]", 1)
    text = text.replace(";W[66mgmghbhb]", "(;W[66mgmghbhb]", 1)
    first_game_end = text.index(")\n(;FF")
    text = text[:first_game_end] + ")(;W[11]C[a variation: not the main line]))" + text[first_game_end + 1:]
    record = replay_match(parse_match_text(text.replace("\n", "\r\n"), "x.sgf"), "x.sgf", record_from_json)
    assert moves_of(record) == moves_of(read_record(DATA / "gnubg_match3.sgf"))


def test_a_mat_without_the_final_wins_line_and_unfinished_game(tmp_path):
    text = (DATA / "gnubg_match3.mat").read_text()
    cut = text[:text.index(" 13) 65")]  # game 2 stops in the middle: no result
    path = tmp_path / "cut.mat"
    path.write_text(cut)
    record = read_record(path)
    assert record.games[1].result is None and record.games[1].ending == "unfinished"


def test_an_illegal_move_is_one_line_naming_the_game_and_the_move(tmp_path):
    text = (DATA / "gnubg_match3.mat").read_text().replace("  4) 66: 24/18 24/18 13/7 13/7",
                                                            "  4) 66: 24/18 24/18 13/7 13/1")
    path = tmp_path / "bad.mat"
    path.write_text(text)
    with pytest.raises(RecordError) as caught:
        read_record(path)
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"{path}: game 2, move 4 (O 6-6 '24/18 24/18 13/7 13/1'): an illegal move")
    sgf = (DATA / "gnubg_match3.sgf").read_text().replace(";B[11lmlmmnmn]", ";B[11lmlmmnmo]", 1)
    path = tmp_path / "bad.sgf"
    path.write_text(sgf)
    with pytest.raises(RecordError, match=r"bad\.sgf: game 1, move 17 \(X 1-1 .*\): an illegal move"):
        read_record(path)


@pytest.mark.parametrize("kind", ["sgf", "mat"])
def test_a_match_of_changed_rules_round_trips_with_its_options(kind, tmp_path):
    """Options changed from the variant's preset (a mother win worth 3 in Plakoto) are written as the extension's
    Rules (SGF ``RU[Variant=plakoto:Rules={"mother_points":3}]``, .mat ``; [Rules "..."]``) and read back to the
    same rule set, moves and results."""
    rules = variant_rules("plakoto").replace(mother_points=3)
    result = run_match("heuristic", "random", rules, 4, seed=5, progress=False, record_games=4)
    result.write_games(tmp_path / "changed.json", rules)
    record = read_record(tmp_path / "changed.json")
    assert record.rules == rules
    back, text = round_trip(record, kind)
    assert back.rules == rules and back.rules != variant_rules("plakoto")
    assert moves_of(back) == moves_of(record) and ends_of(back) == ends_of(record)
    assert ('Rules={"mother_points":3}' in text) if kind == "sgf" else ('; [Rules "{"mother_points":3}"]' in text)
    # Without its Rules the file is the preset's, where its mother win (3 points) is not what the moves make (2).
    assert any(game.result.kind == "mother" for game in record.games)
    plain = text.replace(':Rules={"mother_points":3}', "").replace('; [Rules "{"mother_points":3}"]\n', "")
    with pytest.raises(MatchFileError, match=r"says . wins 3 point\(s\), but the moves end it with . winning 2"):
        replay_match(parse_match_text(plain, f"plain.{kind}"), f"plain.{kind}", record_from_json)
    preset = match_text(from_record(read_record(DATA / "gnubg_match3.sgf")), kind)
    assert "Rules" not in preset  # a preset's file names no options


@pytest.mark.parametrize("text, expected", [
    ("(;FF[4]GM[1];B[aa])", "not a backgammon game"),
    ("(;FF[4]GM[6];B[61lrqr]", "truncated"),
    ("(;FF[4]GM[6];B[6lrqr])", "is not a move"),
    ("(;FF[4]GM[6]RU[Variant=chess];B[61lrqr])", "names no variant"),
    ("(;FF[4]GM[6]RU[Variant=plakoto:Rules={\"chess\":1}];B[61lrqr])", r"RU\[Rules=...\]: unknown rule option"),
    ("(;FF[4]GM[6]RU[Variant=plakoto:Rules=3];B[61lrqr])", "not a JSON object of rule options"),
    ("; [Variation \"Plakoto\"]\n; [Rules \"{\"mother_points\":-1}\"]\n 3 point match\n Game 1\n a : 0     b : 0\n"
     "  1) 31: 8/5 6/5\n", "the Rules header: "),
    (" 3 point match\n Game 1\n a : 0   b : 0\n  1) 31 8/5 6/5\n", "cannot read"),
    ("; [Variation \"Nackgammon\"]\n 3 point match\n Game 1\n a : 0     b : 0\n  1) 31: 8/5 6/5\n",
     "not a variant this project plays"),
    ("hello\n", "no 'Game 1' line"),
])
def test_bad_files_are_one_line(text, expected, tmp_path):
    path = tmp_path / ("f.sgf" if text.startswith("(") else "f.mat")
    path.write_text(text)
    with pytest.raises(RecordError, match=expected) as caught:
        read_record(path)
    assert "\n" not in str(caught.value)


def test_the_wins_line_must_be_what_the_moves_make(tmp_path):
    text = (DATA / "gnubg_match3.mat").read_text().replace("Wins 1 point", "Wins 2 points")
    path = tmp_path / "wins.mat"
    path.write_text(text)
    with pytest.raises(RecordError, match="game 1: the file says X wins 2 point.*the moves end it with X winning 1"):
        read_record(path)


def _rotation_record(rotation: Rotation, seed: int):
    from tests.test_analyse_tabla import played, web_file
    return record_from_json(web_file(played(rotation, 3, seed=seed, games=3).match), "file")


@pytest.mark.parametrize("rotation", [ROTATIONS["tabla"], ROTATIONS["tavli"],
                                      Rotation.of(["tapa", "fevga"], changes={"tapa": {"backgammons": False}})],
                         ids=["tabla", "tavli", "custom"])
@pytest.mark.parametrize("kind", ["sgf", "mat"])
def test_a_rotations_match_round_trips_each_game_naming_its_variant(rotation, kind):
    record = _rotation_record(rotation, seed=5)
    back, text = round_trip(record, kind)
    assert back.rotation == rotation and back.length == record.length
    assert [game.rules for game in back.games] == [game.rules for game in record.games]
    assert moves_of(back) == moves_of(record) and ends_of(back) == ends_of(record)
    for game in record.games:
        assert (f"Variant={game.rules.name}" in text) if kind == "sgf" else \
            (f' Game {game.number}\n; [Variation "{REGISTRY[game.rules.name].title}"]' in text)


def test_analyse_reads_a_match_file_and_exports_it(tmp_path):
    from tapa_ai.analysis.cli_analyse import analyse_command

    out = io.StringIO()
    target = tmp_path / "out.sgf"
    assert analyse_command(str(DATA / "gnubg_match3.mat"), bot="net:backgammon@0ply", quiet=True, output=out,
                           export_path=str(target)) == 0
    report = out.getvalue()
    assert "Game 1" in report and "Game 2" in report and "root" in report
    back = read_record(target)
    assert moves_of(back) == moves_of(read_record(DATA / "gnubg_match3.mat"))
    assert "C[" in target.read_text()  # the analysis as SGF comments


@pytest.mark.parametrize("kind", ["sgf", "mat"])
def test_a_match_with_the_cube_and_a_resignation_round_trips(kind):
    record = read_record(DATA / "gnubg_match3.sgf")
    back, _ = round_trip(record, kind)
    assert moves_of(back) == moves_of(record) and ends_of(back) == ends_of(record)
    assert [game.ending for game in back.games] == ["drop", "resigned"]


def test_mat_quirks_and_a_txt_file_read_by_its_content(tmp_path):
    text = (DATA / "gnubg_match3.mat").read_text().replace("Wins 2 points", "Wins 2 points and the match")
    path = tmp_path / "match.txt"
    path.write_text("\ufeff" + text)
    assert is_match_file(path)
    assert moves_of(read_record(path)) == moves_of(read_record(DATA / "gnubg_match3.mat"))
    json_text = tmp_path / "games.txt"
    json_text.write_text('{"format": "tapa-ai/games"}')
    assert not is_match_file(json_text)


def test_mutated_files_are_read_or_refused_in_one_line():
    """Random damage to the three files: never a traceback, never a second line."""
    import random
    from tapa_ai.errors import TapaError

    rng = random.Random(65)
    for name in ("gnubg_match3.mat", "gnubg_match3.sgf", "fibs_style.mat"):
        text = (DATA / name).read_text()
        for _ in range(60):
            chars = list(text)
            for _ in range(rng.randint(1, 6)):
                place = rng.randrange(len(chars))
                what = rng.choice("0123456789/*():;[] \nabxyzBW-\\")
                if rng.random() < 0.5:
                    chars[place] = what
                else:
                    chars.insert(place, what)
            try:
                replay_match(parse_match_text("".join(chars), name), name, record_from_json)
            except TapaError as error:
                assert "\n" not in str(error)


def test_a_mat_laid_out_as_xg_and_snowie_write_it(tmp_path):
    """Other columns (the right cell at 38), XG's header tags, a Jacoby money session: the same games."""
    lines = []
    for line in (DATA / "gnubg_match3.mat").read_text().splitlines():
        if re.match(r"^\s*\d+\) |^\s+Wins", line) and len(line) > 33:
            line = line[:33] + "     " + line[33:]
        lines.append(line)
    header = ['; [Site "XG Mobile"]', '; [Player 1 "root"]', '; [Player 2 "gnubg"]', '; [EventTime "15.00"]',
              '; [Jacoby "Off"]', '; [Beaver "Off"]', '; [CubeLimit "1024"]']
    path = tmp_path / "xg.mat"
    path.write_text("\n".join(header + lines[1:]) + "\n")
    assert moves_of(read_record(path)) == moves_of(read_record(DATA / "gnubg_match3.mat"))
    assert ends_of(read_record(path)) == ends_of(read_record(DATA / "gnubg_match3.mat"))


def test_a_game_from_a_set_up_position_is_refused_in_one_line():
    from tapa_ai.arena.recorded_games import games_document
    from tapa_ai.flow import GameState
    from tapa_ai.matchfiles import MatchFileError
    from tapa_ai.notation.json_position import position_from_json, position_to_json

    points = [""] * 24
    points[0], points[12] = "XX", "O" * 15
    start = position_from_json({"variant": "tapa", "points": points, "off": {"X": 13, "O": 0}, "turn": "X"})
    state = GameState.new("tapa", opener="X", position=start).rolled((3, 1), "X")
    state = state.play(state.moves[0])
    game = {"number": 1, "start": position_to_json(start), "history": [event.to_dict() for event in state.history]}
    record = record_from_json(games_document(start.rules, {}, [game], "a test"))
    with pytest.raises(MatchFileError, match="game 1 began from a set-up position"):
        from_record(record)


@pytest.mark.parametrize("kind", ["sgf", "mat"])
def test_a_play_save_of_a_tabla_match_exports_and_reads_back(kind, tmp_path):
    """tapa-ai play --tabla's save (the whole match) written by tapa-ai analyse --export-only, read back."""
    from tests.test_analyse_tabla import played

    from tapa_ai.analysis.cli_analyse import analyse_command
    from tapa_ai.bots.rotation import make_rotation_player
    from tapa_ai.play import PlaySession
    from tapa_ai.play.saves import save_game

    session = PlaySession.rotation_match(make_rotation_player("runner", ROTATIONS["tabla"]), 3,
                                         input=io.StringIO(""), output=io.StringIO(), colour=False)
    session.match = played(ROTATIONS["tabla"], 3, seed=7, games=3).match
    save = tmp_path / "save.json"
    save_game(save, session.saved_game())
    target = tmp_path / f"tabla.{kind}"
    out = io.StringIO()
    assert analyse_command(str(save), export_path=str(target), export_only=True, output=out) == 0
    assert out.getvalue() == f"written: {target}\n"
    record, back = read_record(save), read_record(target)
    assert back.rotation == ROTATIONS["tabla"] and len(back.games) == len(record.games) >= 2
    assert moves_of(back) == moves_of(record) and ends_of(back) == ends_of(record)


@pytest.mark.parametrize("kind", ["sgf", "mat"])
def test_player_names_with_colons_and_brackets_round_trip(arena_records, kind):
    record, _, _ = arena_records["tapa"]
    names = {"X": "net:tapa@1ply [x]", "O": "gnubg:0 \\ a name longer than the column is wide"}
    renamed = dataclasses.replace(record, games=tuple(dataclasses.replace(game, players=dict(names))
                                                      for game in record.games))
    back, _ = round_trip(renamed, kind)
    assert [game.players for game in back.games] == [names] * len(record.games)


def test_a_server_export_with_its_first_move_in_the_right_column_and_rated_names(tmp_path):
    """A FIBS-style export as public parsers' tests show it: the first move in the right column with the left
    cell empty, ``name,rating`` player names, a game cut before its end."""
    path = tmp_path / "fibs.mat"
    path.write_text(" 3 point match\n\n Game 1\n zoonk,1666 : 0                   nori,1699 : 0\n"
                    "  1)                             26: 24/18 13/11\n"
                    "  2) 31: 8/5 6/5                    43: 24/21 13/9\n")
    record = read_record(path)
    game = record.games[0]
    assert game.players == {"X": "nori,1699", "O": "zoonk,1666"} and game.ending == "unfinished"
    assert [(turn.side, turn.dice, turn.move) for turn in game.turns] == [
        ("X", (6, 2), "24/18 13/11"), ("O", (3, 1), "8/5 6/5"), ("X", (4, 3), "24/21 13/9")]
