"""The levels of play in JavaScript (tapa_ai/web/levels.js, docs/frontends.md): an app with the exported model
alone plays a 0-ply level with a noise seed exactly as the Python bot does.

Node.js runs levels.js with the exported model (its metadata carries the variant's levels) on positions of the
shipped benchmark set and their legal moves from the engine; each choice must be the Python bot's
(``net:<variant>,level=NAME,noise_seed=SEED,nobearoff``: the page values bear-offs by the network too), and the
noise keys and draws must be bit for bit the Python ones.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest

from tapa_ai.arena.benchmark.file import read_set, resolve_set
from tapa_ai.bots.levels import LEVEL_NAMES
from tapa_ai.bots.noise import afterstate_keys, deterministic_draws
from tapa_ai.bots.spec import make_bot
from tapa_ai.engine.protocol import Engine
from tapa_ai.engine.web_board import model_json
from tapa_ai.export.core import export_checkpoint
from tapa_ai.movegen import PositionBatch
from tapa_ai.notation.json_position import position_from_json
from tapa_ai.rules import variant_rules
from tests.requires import require_node

WEB = Path(__file__).resolve().parent.parent / "tapa_ai" / "web"


def run_node(script: str) -> object:
    done = subprocess.run([require_node(), "-e", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    folder = tmp_path_factory.mktemp("levels-js")
    npz = folder / "plakoto.npz"
    export_checkpoint("plakoto", "npz", npz)
    path = folder / "plakoto.json"
    path.write_text(json.dumps(model_json(npz.read_bytes())))
    return path


def test_the_exported_model_carries_its_variants_levels(exported):
    levels = json.loads(exported.read_text())["metadata"]["levels"]
    assert sorted(levels) == sorted(LEVEL_NAMES)  # the metadata's keys are stored sorted
    shipped = json.loads((WEB.parent / "models" / "levels.json").read_text())["variants"]["plakoto"]["levels"]
    for name, setting in levels.items():  # as the shipped levels file states them (read here, not by find_level)
        assert setting == {"plies": shipped[name]["plies"], "noise": shipped[name]["noise"]}


def test_javascript_plays_a_level_with_a_noise_seed_as_the_python_bot(exported, tmp_path):
    rules = variant_rules("plakoto")
    bench = read_set(resolve_set("plakoto")[0])
    engine = Engine()
    cases, python = [], []
    for index, record in enumerate(r for r in bench.records if r["phase"] != "bearoff"):
        if index == 24:
            break
        name = ("beginner", "casual", "intermediate", "advanced", "expert")[index % 5]
        seed = 1000 + index
        moves = engine.respond({"cmd": "legal_moves", "position": record["position"], "dice": record["dice"]})[1]
        cases.append({"position": record["position"], "moves": moves["moves"], "level": name, "seed": seed})
        bot = make_bot(f"net:plakoto,level={name},noise_seed={seed},nobearoff", rules)
        position = position_from_json(record["position"])
        from tapa_ai.bots.base import one_position_afterstates

        afterstates = one_position_afterstates(position, tuple(record["dice"]))
        row = int(bot.choose(afterstates, np.random.default_rng(0))[0])
        python.append((afterstates, row, bot))
    data = tmp_path / "cases.json"
    data.write_text(json.dumps(cases))
    script = f"""
        const fs = require("fs");
        globalThis.TapaEncoding = require({json.dumps(str(WEB / "encoding.js"))});
        const TapaModel = require({json.dumps(str(WEB / "model.js"))});
        const TapaLevels = require({json.dumps(str(WEB / "levels.js"))});
        const model = TapaModel.fromJSON(JSON.parse(fs.readFileSync({json.dumps(str(exported))}, "utf8")));
        const cases = JSON.parse(fs.readFileSync({json.dumps(str(data))}, "utf8"));
        console.log(JSON.stringify(cases.map((c) => {{
          const index = TapaLevels.levelMove(model, c.position, c.moves, c.level, c.seed);
          const keys = c.moves.map((m) => TapaLevels.afterstateKey(m.position));
          return {{index, keys, draws: keys.map((k) => TapaLevels.noiseDraw(k, c.seed))}};
        }})));
    """
    answers = run_node(script)
    near_ties = 0
    for case, answer, (afterstates, row, bot) in zip(cases, answers, python):
        moves = case["moves"]
        batch = PositionBatch.from_positions([position_from_json(m["position"]) for m in moves])
        keys = afterstate_keys(batch)
        assert answer["keys"] == keys.tolist()
        assert answer["draws"] == deterministic_draws(keys, case["seed"]).tolist()  # bit for bit
        chosen_js = position_from_json(moves[answer["index"]]["position"])
        if chosen_js != afterstates.position(row):
            # Only where the two moves' values (noise included) agree to float32 rounding.
            rows, _, values = bot.ranked(afterstates)
            values = values + bot.move_noise(afterstates, rows, np.random.default_rng(0))
            js_row = [r for r in range(len(afterstates)) if afterstates.position(r) == chosen_js][0]
            assert abs(values[js_row] - values[row]) < 1e-5, (case["level"], case["position"])
            near_ties += 1
    assert near_ties <= 1
    # The levels differ somewhere: the noisy levels do not all play the plain net's moves.
    assert len({(c["level"], a["index"]) for c, a in zip(cases, answers)}) > 5


def test_a_deeper_level_or_an_unknown_one_is_refused_in_javascript(exported):
    script = f"""
        const fs = require("fs");
        globalThis.TapaEncoding = require({json.dumps(str(WEB / "encoding.js"))});
        const TapaModel = require({json.dumps(str(WEB / "model.js"))});
        const TapaLevels = require({json.dumps(str(WEB / "levels.js"))});
        const model = TapaModel.fromJSON(JSON.parse(fs.readFileSync({json.dumps(str(exported))}, "utf8")));
        const out = [];
        for (const name of ["world-class", "grandmaster"]) {{
          try {{ TapaLevels.levelMove(model, {{turn: "X"}}, [], name, 1); out.push("no error"); }}
          catch (e) {{ out.push(e.message); }}
        }}
        console.log(JSON.stringify(out));
    """
    deeper, unknown = run_node(script)
    assert "searches 2 plies" in deeper and "best_move" in deeper
    assert "unknown level" in unknown and "beginner" in unknown
