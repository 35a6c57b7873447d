#!/usr/bin/env bash
# The measurements of docs/cube.md:
#   bash scripts/cube_report.sh [PART...]     PART: rates money matches models gnubg (default: all five)
# Output under docs/cube (CUBE_OUT=DIR to change). Needs checkpoints/{tapa,plakoto,backgammon}.pt and, for
# gnubg, gnubg-nn (pip install -e '.[test]'). On one core of a busy 2-core machine: rates ~1 min,
# money ~1 min, matches ~4 min, models ~2 min, gnubg ~1 min. (The .csv files beside the JSON records are
# not kept in docs/cube.)
set -euo pipefail
out=${CUBE_OUT:-docs/cube}
parts=${*:-rates money matches models gnubg}
workers=${WORKERS:-1}
mkdir -p "$out"
net() { echo "net:checkpoints/$1.pt${2:-}"; }
for part in $parts; do
  case $part in
  rates)
    # Result kinds of cubeless self-play at 0-ply: the rates each variant's match equity table is built from.
    for v in tapa plakoto backgammon; do
      tapa-ai match "$(net $v)" "$(net $v)" --games 20000 --seed 11 --workers "$workers" --quiet \
          --out "$out/selfplay_$v.json"
    done ;;
  money)
    # Money play with the cube, 2000 games (1000 duplicate pairs) each: the net's cube against the heuristic
    # bot's passive cube (never doubles, always takes), the same net with the passive cube (the cubeless
    # baseline under the same rules), and the net against itself playing the passive cube.
    for v in tapa backgammon; do
      tapa-ai match "$(net $v)" heuristic --cube --games 2000 --seed 21 --workers "$workers" --quiet \
          --out "$out/money_${v}_net_vs_heuristic.json"
      tapa-ai match "$(net $v ,nocube)" heuristic --variant $v --cube --games 2000 --seed 21 --workers "$workers" \
          --quiet --out "$out/money_${v}_nocube_vs_heuristic.json"
      tapa-ai match "$(net $v)" "$(net $v ,nocube)" --cube --games 2000 --seed 22 --workers "$workers" --quiet \
          --out "$out/money_${v}_net_vs_nocube.json"
    done ;;
  matches)
    # 7-point matches, 2000 (1000 duplicate pairs) each: the same three pairings.
    for v in tapa backgammon; do
      tapa-ai match "$(net $v)" heuristic --match-length 7 --matches 2000 --seed 31 --workers "$workers" --quiet \
          --out "$out/match7_${v}_net_vs_heuristic.json"
      tapa-ai match "$(net $v ,nocube)" heuristic --variant $v --match-length 7 --matches 2000 --seed 31 \
          --workers "$workers" --quiet --out "$out/match7_${v}_nocube_vs_heuristic.json"
      tapa-ai match "$(net $v)" "$(net $v ,nocube)" --match-length 7 --matches 2000 --seed 32 --workers "$workers" \
          --quiet --out "$out/match7_${v}_net_vs_nocube.json"
    done ;;
  models)
    # The cube model against variants of itself: match-aware decisions against money decisions in 7-point
    # matches, and the cube life 0.68 against 0.4 and 1.0 in money play (4000 games each).
    for v in tapa backgammon; do
      tapa-ai match "$(net $v)" "$(net $v ,money_cube)" --match-length 7 --matches 2000 --seed 33 \
          --workers "$workers" --quiet --out "$out/match7_${v}_net_vs_money_cube.json"
      for x in 0.4 1.0; do
        tapa-ai match "$(net $v)" "$(net $v ,cube_life=$x)" --cube --games 4000 --seed 23 --workers "$workers" \
            --quiet --out "$out/money_${v}_net_vs_life$x.json"
      done
    done ;;
  gnubg)
    # Cube decisions against GNU Backgammon's on 400 positions x 4 scores x 2 cube states.
    python scripts/cube_vs_gnubg.py --positions 400 --seed 3 --out "$out/gnubg_agreement.json" > /dev/null
    rm -f "$out/gnubg_agreement.rows.json" ;;
  *) echo "unknown part $part (rates money matches models gnubg)" >&2; exit 2 ;;
  esac
done
rm -f "$out"/*.csv
