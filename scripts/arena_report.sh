#!/usr/bin/env bash
# The measurements of docs/arena.md:
#   bash scripts/arena_report.sh [PART...]     PART: ladder search speed (default: all three)
# Output under docs/arena (ARENA_OUT=DIR to change), with models_<part>.txt naming the files measured (path,
# generation, sha256: docs/strength.md). Needs checkpoints/{tapa,plakoto,backgammon}.pt,
# gnubg-nn (pip install -e '.[test]') and matplotlib. On 2 idle cores: ladder ~15 min, search ~1.5 h
# (2-ply is ~10-30 decisions/s), speed ~5 min. Run `speed` on an otherwise idle machine.
set -euo pipefail
out=${ARENA_OUT:-docs/arena}
parts=${*:-ladder search speed}
mkdir -p "$out"
net() { echo "net:checkpoints/$1.pt${2:-}"; }
# The files a part measures, named as docs/strength.md says (path, generation, sha256), in $out/models_<part>.txt.
models() {
  { echo "# models of: bash scripts/arena_report.sh $1 ($(date -u +%Y-%m-%d))"
    python -m tapa_ai.net.model_id checkpoints/tapa.pt checkpoints/plakoto.pt checkpoints/backgammon.pt
  } | tee "$out/models_$1.txt"
}
for part in $parts; do
  case $part in ladder|search|speed) models "$part" ;; esac
  case $part in
  ladder)
    # Fixed bots and the shipped net at 0-ply: 1000 games (500 duplicate pairs) per pairing.
    for v in tapa plakoto backgammon; do
      extra=""
      [ "$v" = backgammon ] && extra="pubeval gnubg:0"
      tapa-ai tournament random runner heuristic $extra "$(net $v)" --variant $v --games 1000 --seed 1 \
          --quiet --out "$out/ladder_$v"
    done ;;
  search)
    # What search adds over the same net at 0-ply, and the 2-ply net against the best fixed bots.
    for v in tapa plakoto backgammon; do
      tapa-ai match "$(net $v @1ply)" "$(net $v)" --games 1000 --seed 2 --quiet --out "$out/search_${v}_1ply.json"
      tapa-ai match "$(net $v @2ply)" "$(net $v)" --games 200 --seed 3 --quiet --out "$out/search_${v}_2ply.json"
      opponents="heuristic"
      [ "$v" = backgammon ] && opponents="pubeval gnubg:0"
      for o in $opponents; do
        tapa-ai match "$(net $v @2ply)" "$o" --variant $v --games 200 --seed 4 --quiet \
            --out "$out/search_${v}_2ply_vs_${o/:/}.json"
      done
    done ;;
  speed)
    # Search speed (decisions/s at 0, 1, 2 ply) and arena throughput with 1 and 2 worker processes.
    python scripts/bench_search.py --seconds 10 --net tapa=checkpoints/tapa.pt --net plakoto=checkpoints/plakoto.pt \
        --net backgammon=checkpoints/backgammon.pt | tee "$out/search_speed.txt"
    for w in 1 2; do
      for v in tapa plakoto backgammon; do
        tapa-ai match heuristic heuristic --variant $v --games 10000 --workers $w --quiet --json \
            --out "$out/throughput_${v}_heuristic_w$w.json" > /dev/null
        tapa-ai match "$(net $v)" "$(net $v)" --games 20000 --workers $w --quiet --json \
            --out "$out/throughput_${v}_net_w$w.json" > /dev/null
      done
    done
    rm -f "$out"/throughput_*.csv   # per-game rows of self-matches: only the speed matters here
    ;;
  *) echo "unknown part $part (want: ladder search speed)" >&2; exit 2 ;;
  esac
done
