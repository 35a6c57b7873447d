#!/usr/bin/env bash
# The measurements of docs/arena.md, in one go (about an hour on 2 idle cores):
#   bash scripts/arena_report.sh [OUT_DIR]        (default docs/arena)
# Needs checkpoints/{tapa,plakoto,backgammon}.pt, gnubg-nn (pip install -e '.[test]') and matplotlib.
set -euo pipefail
out=${1:-docs/arena}
mkdir -p "$out"
for v in tapa plakoto backgammon; do
  extra=""
  [ "$v" = backgammon ] && extra="pubeval gnubg:0"
  # The ladder: fixed bots and the shipped net at 0-ply, 1000 games (500 duplicate pairs) per pairing.
  tapa-ai tournament random runner heuristic $extra net:checkpoints/$v.pt --variant $v --games 1000 --seed 1 \
      --quiet --out "$out/ladder_$v"
  # What search adds: 1-ply and 2-ply against the same net at 0-ply.
  tapa-ai match net:checkpoints/$v.pt@1ply net:checkpoints/$v.pt --games 1000 --seed 2 --quiet --out "$out/search_${v}_1ply.json"
  tapa-ai match net:checkpoints/$v.pt@2ply net:checkpoints/$v.pt --games 100 --seed 3 --quiet --out "$out/search_${v}_2ply.json"
done
# Search speed and arena throughput.
python scripts/bench_search.py --seconds 10 --net tapa=checkpoints/tapa.pt --net plakoto=checkpoints/plakoto.pt \
    --net backgammon=checkpoints/backgammon.pt | tee "$out/search_speed.txt"
for w in 1 2; do
  for v in tapa plakoto backgammon; do
    tapa-ai match heuristic heuristic --variant $v --games 2000 --workers $w --quiet --json --out "$out/throughput_${v}_heuristic_w$w.json" > /dev/null
    tapa-ai match net:checkpoints/$v.pt net:checkpoints/$v.pt --games 2000 --workers $w --quiet --json --out "$out/throughput_${v}_net_w$w.json" > /dev/null
  done
done
