#!/usr/bin/env bash
# The measurements of docs/cube.md:
#   bash scripts/cube_report.sh [PART...]     PART: rates money matches models gnubg (default: all five)
# Output under docs/cube (CUBE_OUT=DIR to change), with models_<part>.txt naming the files measured; the
# rates part also writes tapa_ai/cube/result_rates.json (RATES_OUT=FILE to change), the package's data.
# Needs checkpoints/{tapa,plakoto,backgammon}.pt and, for gnubg, gnubg-nn (pip install -e '.[test]').
# On one core of a 2-core machine busy with two training runs: rates ~2.5 min a variant, money ~1 min a
# match (6), matches ~5 min a match (6), models ~14 min, gnubg ~2 min; 34 min for all but rates. (The
# .csv files beside the JSON records are not kept in docs/cube.) scripts/cube_tables.py prints the tables.
set -euo pipefail
out=${CUBE_OUT:-docs/cube}
parts=${*:-rates money matches models gnubg}
workers=${WORKERS:-1}
mkdir -p "$out"
net() { echo "net:checkpoints/$1.pt${2:-}"; }
# The files a part measures, named as docs/strength.md says (path, generation, sha256), in $out/models_<part>.txt.
models() {
  { echo "# models of: bash scripts/cube_report.sh $1 ($(date -u +%Y-%m-%d))"
    python -m tapa_ai.net.model_id checkpoints/tapa.pt checkpoints/plakoto.pt checkpoints/backgammon.pt
  } | tee "$out/models_$1.txt"
}
for part in $parts; do
  case $part in rates|money|matches|models|gnubg) models "$part" ;; esac
  case $part in
  rates)
    # Result kinds of cubeless self-play at 0-ply (20,000 games of each shipped net against itself, seed 11):
    # the rates each variant's match equity table is built from, written to tapa_ai/cube/result_rates.json
    # (with each net's sha256 and generation) and $out/selfplay_<variant>.json.
    python scripts/met_rates.py --workers "$workers" --records "$out" \
        --out "${RATES_OUT:-tapa_ai/cube/result_rates.json}" --quiet ;;
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
# docs/cube.md's measurement tables from the records, with the files they were measured with.
case " $parts " in *" money "*|*" matches "*|*" models "*) python scripts/cube_tables.py --records "$out" ;; esac
