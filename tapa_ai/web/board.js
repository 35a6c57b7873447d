// The board, drawn in SVG from X's side: X's points 1-6 bottom right, 7-12 bottom left, 13-18 top left,
// 19-24 top right; X moves 24 -> 1 and bears off bottom right, O the other way round (docs/rules.md 1).
// The running games (view.parallel: fevga, narde, docs/rules.md 8): both sides travel the same way, anticlockwise;
// X from its 24 (top right) to its home bottom right, O from X's 12 (its 24, bottom left) to X's 13-18 (its home,
// top left), so O bears off top left: a second tray is drawn there, and there is no bar. The corners are labelled.
//
//   TapaBoard.draw(svgElement, view)
//
// view: {position (JSON), dice: [a, b] or null, diceLeft: [dice not yet played], steps: a double's dice drawn (default
//        4; a Gul Bara cascade stage's steps, docs/rules.md 10.2), cube: value or null,
//        mother: bool (the variant has mothers), parallel: bool (a running game), sources/targets/hints/last: Sets of point ids, selected: id,
//        moved: {side, from, to: Sets of point ids} (the bot's last move, marked orange)}
// Point ids are X's point numbers 1..24, "bar" and "off"; every point, the bar and X's tray carry a
// transparent <rect class="hit" data-point="id"> on top, which is what the page listens to for clicks.
(function (root) {
  "use strict";

  const NS = "http://www.w3.org/2000/svg";
  const W = 760, H = 520;
  const LEFT = 20, POINT_W = 50, BAR_X = 320, BAR_W = 50, RIGHT = 370, TRAY_X = 690, TRAY_W = 50;
  const TOP = 20, BOTTOM = 500, POINT_H = 200, R = 20;
  const LEFT_TRAY_X = -40, LEFT_MARGIN = 60; // the running games' second tray (O's), left of the board

  function el(name, attrs, parent, text) {
    const node = document.createElementNS(NS, name);
    for (const k in attrs) node.setAttribute(k, attrs[k]);
    if (text !== undefined) node.textContent = text;
    if (parent) parent.appendChild(node);
    return node;
  }

  // Left x of X's point p and whether it is on the top half.
  function pointBox(p) {
    if (p <= 6) return { x: RIGHT + (6 - p) * POINT_W, top: false };
    if (p <= 12) return { x: LEFT + (12 - p) * POINT_W, top: false };
    if (p <= 18) return { x: LEFT + (p - 13) * POINT_W, top: true };
    return { x: RIGHT + (p - 19) * POINT_W, top: true };
  }

  // The centre of the k-th checker (0 = at the edge) of n on a column starting at `edge` going `dir`.
  function slot(k, n, edge, dir) {
    const spacing = n <= 5 ? 2 * R : (POINT_H - 2 * R) / (n - 1);
    return edge + dir * (R + k * spacing);
  }

  function checker(parent, cx, cy, side, extra) {
    const g = el("g", { class: "checker " + side + (extra.pinned ? " pinned" : "") + (extra.mother ? " mother" : "") }, parent);
    el("circle", { cx: cx, cy: cy, r: R - 1 }, g);
    el("circle", { cx: cx, cy: cy, r: R - 7, class: "inner" }, g);
    if (extra.pinned) {
      el("circle", { cx: cx, cy: cy, r: R + 1, class: "pin-ring" }, g);
      el("title", {}, g, side + " checker pinned under " + (side === "X" ? "O" : "X"));
    }
    if (extra.mother) el("text", { x: cx, y: cy + 5, class: "mother-mark" }, g, "M");
    if (extra.label) el("text", { x: cx, y: cy + 5, class: "count" }, g, extra.label);
    return g;
  }

  function draw(svg, view) {
    while (svg.firstChild) svg.removeChild(svg.firstChild);
    const parallel = !!view.parallel;
    const x0 = parallel ? -LEFT_MARGIN : 0, width = parallel ? W + LEFT_MARGIN : W;
    svg.setAttribute("viewBox", x0 + " 0 " + width + " " + H);
    svg.dataset.paths = parallel ? "parallel" : "opposite";
    const position = view.position;
    const has = (set, id) => set && set.has(id);
    const moved = view.moved || {};
    const MIDDLE = (TOP + BOTTOM) / 2;
    // Where each side bears off: X bottom right; O top right, or top left in the running games.
    const trays = { X: { x: TRAY_X, upper: false }, O: { x: parallel ? LEFT_TRAY_X : TRAY_X, upper: true } };

    el("rect", { x: x0, y: 0, width: width, height: H, rx: 10, class: "frame" }, svg);
    el("rect", { x: LEFT, y: TOP, width: 2 * 6 * POINT_W + BAR_W, height: BOTTOM - TOP, class: "felt" }, svg);
    el("rect", { x: BAR_X, y: TOP, width: BAR_W, height: BOTTOM - TOP, class: parallel ? "bar no-bar" : "bar" }, svg);
    el("rect", { x: TRAY_X, y: TOP, width: TRAY_W, height: BOTTOM - TOP, class: "tray" }, svg);
    el("line", { x1: TRAY_X, x2: TRAY_X + TRAY_W, y1: MIDDLE, y2: MIDDLE, class: "tray-line" }, svg);
    if (parallel) {
      el("rect", { x: LEFT_TRAY_X, y: TOP, width: TRAY_W, height: BOTTOM - TOP, class: "tray" }, svg);
      el("line", { x1: LEFT_TRAY_X, x2: LEFT_TRAY_X + TRAY_W, y1: MIDDLE, y2: MIDDLE, class: "tray-line" }, svg);
      // Each side's start and home corner: X starts on its 24 (top right) and goes home bottom right; O starts on
      // X's 12 (bottom left) and goes home top left.
      const right = RIGHT + 6 * POINT_W - 4, left = LEFT + 4;
      [["O's home ↑", left, MIDDLE - 8, "start", "home-O"], ["O's start ↓", left, MIDDLE + 16, "start", "start-O"],
        ["your start ↑", right, MIDDLE - 8, "end", "start-X"], ["your home ↓", right, MIDDLE + 16, "end", "home-X"]]
        .forEach(([text, x, y, anchor, id]) => el("text", { x: x, y: y, class: "corner-label", "text-anchor": anchor,
          "data-corner": id }, svg, text));
    }

    // Points (triangles) and their numbers (X's numbering).
    for (let p = 1; p <= 24; p++) {
      const box = pointBox(p);
      const edge = box.top ? TOP : BOTTOM, tip = box.top ? TOP + POINT_H : BOTTOM - POINT_H;
      const cls = "point " + (p % 2 ? "odd" : "even") + (has(view.last, p) ? " last" : "") +
        (has(view.hints, p) ? " hint" : "") + (has(view.targets, p) ? " target" : "") +
        (has(view.sources, p) ? " source" : "") + (view.selected === p ? " selected" : "") +
        (has(moved.from, p) ? " moved-from" : "") + (has(moved.to, p) ? " moved-to" : "");
      el("polygon", { points: box.x + "," + edge + " " + (box.x + POINT_W) + "," + edge + " " + (box.x + POINT_W / 2) + "," + tip,
        class: cls, "data-point": p }, svg);
      el("text", { x: box.x + POINT_W / 2, y: box.top ? TOP - 5 : BOTTOM + 15, class: "point-number" }, svg, String(p));
    }

    // Checkers, bottom of each stack at the edge: a pinned checker first, drawn with a ring, its pinners on it.
    for (let i = 0; i < 24; i++) {
      const stack = position.points[i];
      if (!stack) continue;
      const p = i + 1, box = pointBox(p);
      const edge = box.top ? TOP : BOTTOM, dir = box.top ? 1 : -1, cx = box.x + POINT_W / 2;
      const n = stack.length;
      for (let k = 0; k < n; k++) {
        const side = stack[k];
        const pinned = k === 0 && n > 1 && stack[0] !== stack[n - 1];
        // The mother: a side's single checker on its own 24-point (X's 24 is points[23], O's is points[0]).
        const own24 = side === "X" ? 23 : 0;
        const mother = view.mother && i === own24 && (stack.split(side).length - 1) === 1;
        const onTop = stack[0] !== stack[n - 1] ? n - 1 : n; // the top side's checkers here
        const label = k === n - 1 && n > 5 ? String(onTop) : undefined;
        checker(svg, cx, slot(k, n, edge, dir), side, { pinned: pinned, mother: mother, label: mother ? undefined : label });
      }
    }

    // The bar (backgammon): X's checkers on the upper half (X enters on O's home, top right), O's below.
    const bar = parallel ? { X: 0, O: 0 } : position.bar || { X: 0, O: 0 };
    [["X", TOP + 120, 1], ["O", BOTTOM - 120, -1]].forEach(function ([side, y0, dir]) {
      for (let k = 0; k < Math.min(bar[side], 3); k++) {
        checker(svg, BAR_X + BAR_W / 2, y0 - dir * k * 2 * R, side, { label: k === Math.min(bar[side], 3) - 1 && bar[side] > 1 ? String(bar[side]) : undefined });
      }
    });
    if (has(view.sources, "bar") || view.selected === "bar") {
      el("rect", { x: BAR_X + 2, y: TOP + 2, width: BAR_W - 4, height: (BOTTOM - TOP) / 2 - 4, class: "bar-mark" + (view.selected === "bar" ? " selected" : " source") }, svg);
    }

    // The bot's move from the bar or off the board: the side's half of the bar (X's on top) or of the tray (X's below).
    const half = (id, x, w, upper, cls) => el("rect", { x: x + 2, y: upper ? TOP + 2 : (TOP + BOTTOM) / 2 + 2, width: w - 4,
      height: (BOTTOM - TOP) / 2 - 4, class: cls, "data-point": id }, svg);
    if (has(moved.from, "bar")) half("bar", BAR_X, BAR_W, moved.side === "X", "bar-mark moved-from");
    if (has(moved.to, "off")) half("off", trays[moved.side].x, TRAY_W, trays[moved.side].upper, "tray-mark moved-to");

    // Borne-off trays: O's on top (O bears off top right; top left in the running games), X's below, one slab per
    // checker.
    [["O", TOP + 4, 1], ["X", BOTTOM - 4, -1]].forEach(function ([side, y0, dir]) {
      const count = position.off[side] || 0, x = trays[side].x;
      for (let k = 0; k < count; k++) {
        const y = dir > 0 ? y0 + k * 14 : y0 - (k + 1) * 14;
        el("rect", { x: x + 6, y: y, width: TRAY_W - 12, height: 12, rx: 3, class: "slab " + side }, svg);
      }
      el("text", { x: x + TRAY_W / 2, y: dir > 0 ? MIDDLE - 8 : MIDDLE + 20, class: "tray-count", "data-tray": side }, svg,
        side + " off " + count);
    });
    if (has(view.targets, "off")) {
      el("rect", { x: TRAY_X + 2, y: (TOP + BOTTOM) / 2 + 2, width: TRAY_W - 4, height: (BOTTOM - TOP) / 2 - 4, class: "tray-mark target" }, svg);
    }

    // Dice: on the mover's half (X right, O left); the dice already played are dimmed.
    if (view.dice) {
      const steps = view.steps || 4; // a double's steps: four, or a cascade stage's (a remainder may have fewer)
      const faces = view.dice[0] === view.dice[1] ? new Array(steps).fill(view.dice[0]) : view.dice.slice();
      const left = (view.diceLeft || faces).slice();
      const used = faces.map(function (d) { const at = left.indexOf(d); if (at >= 0) { left.splice(at, 1); return false; } return true; });
      const size = 36, gap = 10, total = faces.length * size + (faces.length - 1) * gap;
      const x0 = (position.turn === "X" ? RIGHT + 3 * POINT_W : LEFT + 3 * POINT_W) - total / 2;
      faces.forEach(function (d, k) {
        const g = el("g", { class: "die" + (used[k] ? " used" : ""), "data-die": d }, svg);
        const x = x0 + k * (size + gap), y = (TOP + BOTTOM) / 2 - size / 2;
        el("rect", { x: x, y: y, width: size, height: size, rx: 6 }, g);
        const pips = { 1: [[2, 2]], 2: [[1, 1], [3, 3]], 3: [[1, 1], [2, 2], [3, 3]], 4: [[1, 1], [1, 3], [3, 1], [3, 3]],
          5: [[1, 1], [1, 3], [2, 2], [3, 1], [3, 3]], 6: [[1, 1], [1, 2], [1, 3], [3, 1], [3, 2], [3, 3]] }[d];
        pips.forEach(([a, b]) => el("circle", { cx: x + a * size / 4, cy: y + b * size / 4, r: 3.5, class: "pip" }, g));
      });
    }

    // The cube (tapa, backgammon): centred on the bar.
    if (view.cube) {
      const g = el("g", { class: "cube" }, svg);
      el("rect", { x: BAR_X + 7, y: (TOP + BOTTOM) / 2 - 18, width: 36, height: 36, rx: 5 }, g);
      el("text", { x: BAR_X + 25, y: (TOP + BOTTOM) / 2 + 6 }, g, String(view.cube));
      el("title", {}, g, "cube value " + view.cube + " (centred)");
    }

    // Click areas, on top of everything.
    for (let p = 1; p <= 24; p++) {
      const box = pointBox(p);
      el("rect", { x: box.x, y: box.top ? TOP : BOTTOM - (BOTTOM - TOP) / 2, width: POINT_W, height: (BOTTOM - TOP) / 2,
        class: "hit" + (has(view.sources, p) ? " source" : "") + (has(view.targets, p) ? " target" : "") +
          (view.selected === p ? " selected" : ""), "data-point": p }, svg);
    }
    if (!parallel) {
      el("rect", { x: BAR_X, y: TOP, width: BAR_W, height: (BOTTOM - TOP) / 2, "data-point": "bar",
        class: "hit" + (has(view.sources, "bar") ? " source" : "") + (view.selected === "bar" ? " selected" : "") }, svg);
    }
    el("rect", { x: TRAY_X, y: (TOP + BOTTOM) / 2, width: TRAY_W, height: (BOTTOM - TOP) / 2, "data-point": "off",
      class: "hit" + (has(view.targets, "off") ? " target" : "") }, svg);
  }

  root.TapaBoard = { draw: draw };
})(typeof self !== "undefined" ? self : this);
