#!/usr/bin/env bash
# The same seeded duels, cube and match play and benchmark score in one tree, for a before/after comparison of
# a refactor (docs/experiments/one-home-before-after.md): scripts/before_after.sh NAME TREE OUT_DIR, then compare
# OUT_DIR/NAME-*.csv, the recorded games and the JSON summaries of two trees (e.g. a `git worktree add /tmp/before
# REV` and HEAD).
set -euo pipefail
name=$1; tree=$(cd "$2" && pwd); out=$(mkdir -p "$3" && cd "$3" && pwd)
cd "$tree"
export PYTHONPATH=$tree
run() { python -m tapa_ai.cli "$@"; }
run match net:tapa heuristic --games 2000 --seed 1 --workers 1 --out "$out/$name-duel.json" > "$out/$name-duel.txt"
run benchmark score net:tapa@1ply net:tapa heuristic --set tapa --workers 1 --quiet --out "$out/$name-score.json" \
    > "$out/$name-score.txt"
run match net:backgammon gnubg:0 --games 400 --seed 3 --workers 1 --out "$out/$name-bg.json" > "$out/$name-bg.txt"
run match net:backgammon heuristic --games 200 --seed 2 --workers 1 --cube --out "$out/$name-cube.json" \
    > "$out/$name-cube.txt"
run match net:tapa heuristic --match-length 5 --matches 100 --seed 4 --workers 1 --out "$out/$name-mp.json" \
    > "$out/$name-mp.txt"
# Every shipped benchmark set scored by its variant's network and the heuristic (issue 62: the turn plans).
for variant in plakoto backgammon fevga narde; do
    run benchmark score "net:$variant" heuristic --set "$variant" --workers 1 --quiet \
        --out "$out/$name-score-$variant.json" > "$out/$name-score-$variant.txt"
done
# The running games' 2,000-game duel, every game recorded move for move.
run match net:fevga heuristic --games 2000 --seed 7 --workers 1 --record-games "$out/$name-fevga-games.json" \
    --out "$out/$name-fevga.json" > "$out/$name-fevga.txt"
run match net:tapa heuristic --games 2000 --seed 7 --workers 1 --record-games "$out/$name-tapa-games.json" \
    --out "$out/$name-tapa-rec.json" > "$out/$name-tapa-rec.txt"
