// levels.js: the levels of play of an exported model in JavaScript (docs/levels.md, docs/frontends.md).
//
// A level is a depth and a noise (points added to each move's value before the best is taken). This file
// computes the deterministic noise exactly as tapa_ai/bots/noise.py does (FNV-1a 32-bit of the position
// after the move seen from the side that moved, mulberry32, the Irwin-Hall sum of four uniforms), so that
// a 0-ply level played with a noise seed chooses the same moves here as the Python bot
// (`net:<variant>,level=NAME,noise_seed=SEED`). The levels themselves travel in the exported model's
// metadata (`metadata.levels`: name -> {plies, noise}).
//
// In a page: <script src="levels.js"></script> defines the global TapaLevels; in Node: require("./levels.js").
//
//   TapaLevels.levelMove(model, position, moves, "casual", 7)   // -> the index into moves the level plays
(function (root) {
  "use strict";

  const SIDES = ["X", "O"];

  // The position after a move (turn: the side that moved) as the 52 bytes of its mover-relative arrays:
  // board[24] (signed count on top, + the mover's), pinned[24] (+1 a mover's checker pinned under them,
  // -1 an opponent's), off[mover, opponent], bar[mover, opponent]; each int8 as its byte (n & 0xFF).
  function moverBytes(position) {
    const mover = position.turn;
    const side = SIDES.indexOf(mover);
    if (side < 0) throw new Error("position.turn must be 'X' or 'O'");
    // The running games' numbering (paths "parallel"): the variant's rule flags as the encoder knows them (its own
    // table, or the server's registry in the web board), else the position's own rules.
    const encoding = root.TapaEncoding || (typeof require === "function" ? require("./encoding.js") : null);
    const paths = encoding && encoding.flagsOf ? encoding.flagsOf(position).paths : (position.rules || {}).paths;
    const parallel = paths === "parallel";
    let points = position.points;
    if (side === 1) points = parallel ? points.slice(12).concat(points.slice(0, 12)) : points.slice().reverse();
    const bytes = new Uint8Array(52);
    for (let i = 0; i < 24; i++) {
      const stack = points[i] || "";
      if (!stack) continue;
      const top = stack[stack.length - 1];
      const mixed = stack[0] !== top;
      const count = mixed ? stack.length - 1 : stack.length;
      bytes[i] = (top === mover ? count : -count) & 0xff;
      if (mixed) bytes[24 + i] = (stack[0] === mover ? 1 : -1) & 0xff;
    }
    const opponent = SIDES[1 - side];
    const off = position.off || {};
    const bar = position.bar || {};
    bytes[48] = (off[mover] || 0) & 0xff;
    bytes[49] = (off[opponent] || 0) & 0xff;
    bytes[50] = (bar[mover] || 0) & 0xff;
    bytes[51] = (bar[opponent] || 0) & 0xff;
    return bytes;
  }

  function afterstateKey(position) {
    let h = 0x811c9dc5;
    for (const byte of moverBytes(position)) h = Math.imul(h ^ byte, 0x01000193) >>> 0;
    return h >>> 0;
  }

  // A draw of mean 0 and variance 1 from the key and the seed (0 .. 2**32 - 1).
  function noiseDraw(key, seed) {
    let state = (key ^ Math.imul(seed >>> 0, 2654435761)) >>> 0;
    let total = 0;
    for (let i = 0; i < 4; i++) {
      state = (state + 0x6d2b79f5) >>> 0;
      let t = Math.imul(state ^ (state >>> 15), state | 1) >>> 0;
      t = (t ^ ((t + Math.imul(t ^ (t >>> 7), t | 61)) >>> 0)) >>> 0;
      total += ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    }
    return (total - 2) * Math.sqrt(3);
  }

  // The mover's value of a move at 0 ply: its result's points if it ends the game, else minus the
  // opponent's equity before its roll (the network's view), as the Python bot values it without the
  // bear-off database (docs/frontends.md, "Choosing a move"). Where the position after the move names the
  // side that decides next (`next`, Gul Bara's cascades, docs/rules.md 10.3) that side's view is taken: the
  // mover's own equity where it plays the cascade's next stage (Evaluator.evaluate_next), minus the
  // opponent's where the opponent plays next (its roll, or a remainder stage).
  function moveValue(model, position, mover) {
    if (position.result) {
      const result = position.result;
      if (!result.winner) return 0;
      return (result.winner === mover ? 1 : -1) * result.points;
    }
    const next = position.next || (mover === "X" ? "O" : "X");
    const seen = Object.assign({}, position, { turn: next });
    delete seen.next;
    const equity = model.evaluatePosition(seen).equity;
    return next === mover ? equity : -equity;
  }

  // The index into `moves` (the legal moves of a roll, as the engine's legal_moves lists them: each
  // {move, position} with the position after it, turn still the mover) that the level `name` of the
  // model's metadata plays with the noise seed `seed`. Only 0-ply levels: a deeper one needs a search
  // (the engine's best_move with "level").
  function levelMove(model, position, moves, name, seed) {
    const levels = (model.metadata && model.metadata.levels) || {};
    const level = levels[name];
    if (!level) throw new Error(`unknown level ${JSON.stringify(name)}; this model's levels: ${Object.keys(levels).join(", ")}`);
    if (level.plies !== 0) throw new Error(`level ${name} searches ${level.plies} plies: ask the engine (best_move with "level")`);
    let best = -1, bestValue = -Infinity;
    moves.forEach((m, index) => {
      const after = m.position;
      let value = moveValue(model, after, position.turn);
      if (level.noise) value += level.noise * noiseDraw(afterstateKey(after), seed);
      if (value > bestValue) { best = index; bestValue = value; }
    });
    return best;
  }

  const api = { moverBytes: moverBytes, afterstateKey: afterstateKey, noiseDraw: noiseDraw, moveValue: moveValue,
                levelMove: levelMove };
  if (typeof module !== "undefined" && module.exports) module.exports = api;
  else root.TapaLevels = api;
})(typeof globalThis !== "undefined" ? globalThis : this);
