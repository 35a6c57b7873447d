#!/usr/bin/env bash
# Everything the tests need, on a fresh machine (the first half of the README's test command; .ci/run runs it):
#   1. headless Chromium and its driver for the web board's browser tests (tests/test_web.py), and Node.js for
#      the JavaScript run outside a browser: installed with apt-get when missing and run as root; otherwise one
#      line says what to run (those tests skip without them, and fail under CI=true); and GNU Backgammon
#      (Debian's gnubg) for the match files' tests (tests/test_matchfiles_gnubg.py), the same way;
#   2. the project, editable, with its test extra (pytest, xdist, selenium, onnx, ray, ...), into the
#      `python` on PATH, the one that runs `python -m pytest`.
set -euo pipefail
cd "$(dirname "$0")/.."

chromium=${TAPA_AI_CHROMIUM:-/usr/bin/chromium}
chromedriver=${TAPA_AI_CHROMEDRIVER:-/usr/bin/chromedriver}
packages="chromium chromium-driver"
# Node.js runs the JavaScript of tapa_ai/web/ outside a browser (tests/test_levels_js.py, test_encoding_v4.py).
node=${TAPA_AI_NODE:-node}
command -v "$node" >/dev/null 2>&1 || packages="$packages nodejs"
# GNU Backgammon reads the match files we write and writes the ones we read (tests/test_matchfiles_gnubg.py).
gnubg=${TAPA_AI_GNUBG:-$(command -v gnubg || echo /usr/games/gnubg)}
[ -x "$gnubg" ] || packages="$packages gnubg"
if [ -x "$chromium" ] && [ -x "$chromedriver" ] && command -v "$node" >/dev/null 2>&1 && [ -x "$gnubg" ]; then
    :
elif [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "setup_tests: installing $packages with apt-get (the web board's browser tests, gnubg's match files)"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends $packages
else
    echo "setup_tests: no $chromium or $chromedriver, no node or no gnubg, so the browser tests will skip" \
         "(and the Node.js ones, and GNU Backgammon's): run" \
         "\`sudo apt-get install -y --no-install-recommends $packages\` (Debian/Ubuntu), or point" \
         "TAPA_AI_CHROMIUM / TAPA_AI_CHROMEDRIVER at them" >&2
fi

python -m pip install --quiet --disable-pip-version-check -e '.[test]'
