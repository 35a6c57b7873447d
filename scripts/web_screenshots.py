"""Screenshots of the web board in mid-game, the in-page model's speed and the page's weight (docs/web.md).

    python scripts/web_screenshots.py                 # writes docs/web/{tapa,plakoto,backgammon,fevga,narde,gulbara}.png
    python scripts/web_screenshots.py --out /tmp/shots --speed-ms 3000 --variants fevga

Starts ``tapa-ai serve``'s server in this process (with the shipped tapa model, so the page offers tapa's
n-ply bot), opens the page in headless Chromium (Debian's ``chromium`` and ``chromium-driver``, as
tests/test_web.py), lets the bot play both sides with fixed dice (``?seed=``) until a turn of yours where
the board shows what the variant is about (a pinned checker and a mother in tapa and plakoto, a checker on
the bar in backgammon, a game well under way in fevga and narde, a cascade's stage of yours in Gul Bara, with
the bot's last move marked), selects a
checker so that its targets light up (but in fevga and narde), and takes the picture. The speed is measured
in the page (``tapaWeb.benchmark``: encode and evaluate, one after another) on the same random positions the
tests compare with the engine, for every variant with a model in the page (``MODEL_VARIANTS``: all five).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tapa_ai.engine.http import make_server, serve_in_thread  # noqa: E402
from tapa_ai.engine.web_board import MODEL_VARIANTS, WEB_DIR, web_files  # noqa: E402

SEEDS = {"tapa": 11, "plakoto": 4, "backgammon": 2, "fevga": 3, "narde": 3, "gulbara": 3}
RUNNING = ("fevga", "narde", "gulbara")


def interesting(driver, variant: str) -> bool:
    """A turn worth a picture: a pin and a mother (tapa, plakoto) or a checker on the bar (backgammon)."""
    return driver.execute_script(
        "const s = tapaWeb.state, p = s.position;"
        "if (s.turns < 8) return false;"
        "if (arguments[0] === 'gulbara') return s.turns >= 10 && !!s.stage && !!s.moved;"
        "if (['fevga', 'narde'].includes(arguments[0])) return s.turns >= 16 && !!s.moved;"
        "if (arguments[0] === 'backgammon') return (p.bar.X + p.bar.O) > 0 || s.turns > 24;"
        "const mother = p.points[23].split('X').length === 2 || p.points[0].split('O').length === 2;"
        "return p.points.some(x => x.includes('X') && x.includes('O')) && mother && s.turns > 10;", variant)


def play_to_an_interesting_turn(driver, server, variant, seed, open_board, wait_for) -> bool:
    """Let the bot play both sides of the game of ``?seed=seed`` until an :func:`interesting` turn of X's
    (True), or the end of the game (False)."""
    from selenium.common.exceptions import ElementClickInterceptedException

    open_board(driver, server, variant=variant, seed=seed, delay=0)
    while True:
        wait_for(driver, "['human', 'over'].includes(document.body.dataset.phase)")
        if driver.execute_script("return document.body.dataset.phase") == "over":
            return False
        if interesting(driver, variant) and driver.find_elements("css selector", "#board rect.hit.source"):
            return True
        turn = driver.execute_script("return document.body.dataset.turns")
        try:
            driver.find_element("id", "bot-plays").click()
        except ElementClickInterceptedException:  # the game ended between the phase check and the click
            wait_for(driver, "document.body.dataset.phase === 'over'")
            return False
        wait_for(driver, f"document.body.dataset.turns !== '{turn}' || document.body.dataset.phase === 'over'")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "web", help="folder of the PNG files")
    parser.add_argument("--speed-ms", type=int, default=3000, help="how long each speed measurement runs")
    parser.add_argument("--variants", nargs="+", choices=list(SEEDS), default=list(SEEDS),
                        help="the variants to picture (default: all)")
    args = parser.parse_args(argv)

    sys.path.insert(0, str(ROOT / "tests"))
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    from test_web import CHROMEDRIVER, CHROMIUM, comparison_positions, open_board, wait_for

    server = make_server("127.0.0.1", 0, bot="net:checkpoints/tapa.pt", quiet=True)
    serve_in_thread(server)
    options = Options()
    options.binary_location = CHROMIUM
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--window-size=1300,900", "--hide-scrollbars"):
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    args.out.mkdir(parents=True, exist_ok=True)
    numbers: dict = {"speed": {}, "page_bytes": {}, "model_bytes": {}}
    try:
        for variant in args.variants:
            first_seed = SEEDS[variant]
            for seed in range(first_seed, first_seed + 30):  # the first game with such a turn
                if play_to_an_interesting_turn(driver, server, variant, seed, open_board, wait_for):
                    break
            else:
                raise SystemExit(f"{variant}: no interesting turn in 30 games")
            numbers.setdefault("seeds", {})[variant] = seed
            if variant not in RUNNING:  # the running games' picture keeps the bot's last move marked instead
                driver.find_element("css selector", "#board rect.hit.source").click()
            time.sleep(0.3)
            path = args.out / f"{variant}.png"
            driver.save_screenshot(str(path))
            print(f"{path}: turn {driver.execute_script('return tapaWeb.state.turns')}", file=sys.stderr)

            if variant not in MODEL_VARIANTS:
                continue  # no model in the page to measure
            positions, _ = comparison_positions(variant)
            result = driver.execute_async_script(
                "const done = arguments[arguments.length - 1];"
                "tapaWeb.benchmark(arguments[0], arguments[1], arguments[2]).then(done);",
                variant, positions, args.speed_ms)
            numbers["speed"][variant] = {"positions_per_s": round(result["perSecond"]),
                                         "positions": result["positions"], "seconds": round(result["seconds"], 2)}
        for name in web_files():
            numbers["page_bytes"][name] = (WEB_DIR / name).stat().st_size
        numbers["page_bytes"]["total"] = sum(numbers["page_bytes"].values())
        for variant in (v for v in args.variants if v in MODEL_VARIANTS):
            npz, text = server.models.files(variant)
            numbers["model_bytes"][variant] = {"json": len(text), "npz": len(npz)}
        numbers["browser"] = driver.capabilities.get("browserVersion")
    finally:
        driver.quit()
        server.shutdown()
        server.server_close()
    print(json.dumps(numbers, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
