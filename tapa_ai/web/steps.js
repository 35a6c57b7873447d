// Click-by-click moves: which single step a person may play next, found from the server's legal moves.
//
// The server's `legal_moves` answer lists every legal whole-turn move, one per resulting position, each
// with its steps in one playable order. A person may play the same move in another order (24/19 19/13 for
// the server's 24/18 18/13, or 6/1 before 8/2). To offer those orders too, this file plays single steps
// mechanically (docs/rules.md 2-4: a free checker lands on an open point, pins or hits a lone checker, the bar
// first, bearing off from the home board, the game ending at once) and offers a step only when some
// sequence through it ends on one of the server's resulting positions after the same number of steps. The
// rules stay the server's: a move made of clicks is sent to the server's `apply`, which plays it or refuses
// it with its reason.
//
//   const plan = new TapaSteps.Planner(position, dice, legalMoves);
//   plan.options()              -> [{from, to, die}, ...]   the steps that can come next (mover's numbering)
//   plan.destinations(from)     -> Map(to -> steps): where that checker can go by one die or several
//   plan.play(from, to)         -> true, or false when it is not one of the options
//   plan.undo(); plan.complete(); plan.text()   // "24/19 19/13"; "" for a pass
//   TapaSteps.otherView("23/17 22/17")          -> "2/8 3/8": the other side's numbering
//   TapaSteps.movedPoints("24/18 18/13")        -> {from: [24], to: [13]}: where checkers left and ended
//
// Points are in the mover's own numbering: 1..24, 25 the bar, 0 off.
//
// Gul Bara (docs/rules.md 10) is a running game whose doubles cascade: each stage of a cascade is a decision of its
// own, a Planner of its own made from the stage's position (its `cascade`: `steps` steps of `number`, fewer than four
// in a remainder stage) and the dice [number, number].
//
// The running games (fevga, narde, gulbara: docs/rules.md 8) are played the same way: both sides travel the same way round
// (the other side's point p is p + 12 or p - 12), a single checker closes a point, there is no bar, and the
// restrictions of 8.4 (leaving the start, the prime rule, Fevga's starting quarter) are checked after every
// step, as the server does; the server still has the last word on every move.
(function (root) {
  "use strict";

  const BAR = 25, OFF = 0;
  // Each variant's rules as the planner reads them ({pins, mother_points, backgammons, parallel, start_rule,
  // prime_rule, full_start_quarter_allowed}), from the server's registry (defineVariants, GET /v1/variants): none
  // are kept here. What stays in this file is how those rules play a step (docs/rules.md 2-4, 8), which the server
  // checks again on every move.
  const RULES = {};
  function defineVariants(entries) {
    for (const entry of entries) {
      const rules = entry.rules || {};
      RULES[entry.name] = { pins: rules.contact === "pin", mother_points: rules.mother_points,
        backgammons: rules.backgammons, parallel: rules.paths === "parallel", start_rule: rules.start_rule,
        prime_rule: rules.prime_rule, full_start_quarter_allowed: rules.full_start_quarter_allowed };
    }
  }
  const HEAD_DOUBLES = [6, 4, 3]; // Narde's first turn: two checkers may leave the head with 6-6, 4-4 or 3-3

  const other = (side) => (side === "X" ? "O" : "X");
  // Own point -> points[] index (docs/rules.md 1; 8.1 for the running games, `parallel`).
  const index = (side, point, parallel) => (side === "X" ? point - 1 : parallel ? (point <= 12 ? point + 11 : point - 13) :
    24 - point);
  // The other side's number of a side's point: 25 - p, or p + 12 / p - 12 in the running games.
  const otherPoint = (point, parallel) => (parallel ? (point <= 12 ? point + 12 : point - 12) : 25 - point);

  // `parallel`: the running games' numbering, carried by the state so every rule below reads the right point.
  function stateOf(position, parallel) {
    return {
      points: position.points.slice(),
      off: { X: (position.off || {}).X || 0, O: (position.off || {}).O || 0 },
      bar: { X: (position.bar || {}).X || 0, O: (position.bar || {}).O || 0 },
      parallel: !!parallel,
    };
  }

  function key(state) {
    return state.points.join(",") + "|" + state.off.X + "," + state.off.O + "|" + state.bar.X + "," + state.bar.O;
  }

  const stackOf = (state, side, point) => state.points[index(side, point, state.parallel)];

  // Closed to `side`: the other side on top of two or more checkers, or on top of one of `side`'s (RULES 3.2);
  // in the running games any opposing checker (8.2).
  function isClosed(state, side, point) {
    const stack = stackOf(state, side, point);
    if (state.parallel) return stack.length > 0 && stack[0] === other(side);
    return stack.length >= 2 && stack[stack.length - 1] === other(side);
  }

  const count = (stack, side) => stack.split(side).length - 1;

  // docs/rules.md 8.4: does the position after a step of `side` break one of the running games' restrictions?
  // `turn`: {head, mayLeave}, the checkers on the head when the turn began and how many may leave it (Narde).
  function breaksRestriction(state, side, rules, turn) {
    const mine = (p) => stackOf(state, side, p).includes(side);
    if (rules.start_rule === "head") {
      if (turn.head - count(stackOf(state, side, 24), side) > turn.mayLeave) return true;
    } else if (rules.start_rule === "runner") {
      let passed = state.off[side] > 0;
      for (let p = 1; p <= 11 && !passed; p++) passed = mine(p);
      if (!passed && 15 - count(stackOf(state, side, 24), side) > 1) return true;
    }
    if (rules.full_start_quarter_allowed === false) {
      let all = true;
      for (let p = 19; p <= 24 && all; p++) all = mine(p);
      if (all) return true;
    }
    if (rules.prime_rule) { // six in a row on the opponent's path with every opposing checker behind them
      const opponent = other(side);
      const held = [false];
      for (let q = 1; q <= 24; q++) held.push(stackOf(state, opponent, q).includes(side));
      for (let low = 1; low <= 19; low++) {
        if (!held.slice(low, low + 6).every(Boolean)) continue;
        let ahead = state.off[opponent] > 0;
        for (let q = 1; q < low && !ahead; q++) ahead = stackOf(state, opponent, q).includes(opponent);
        if (!ahead) return true;
      }
    }
    return false;
  }

  function hasFree(state, side, point) {
    const stack = stackOf(state, side, point);
    return stack.length > 0 && stack[stack.length - 1] === side;
  }

  function allHome(state, side) {
    if (state.bar[side] > 0) return false;
    for (let p = 7; p <= 24; p++) if (stackOf(state, side, p).includes(side)) return false;
    return true;
  }

  // RULES 3.3: an exact die, or a larger one from the highest point holding any checker of the side.
  function mayBearOff(state, side, point, die) {
    if (!allHome(state, side)) return false;
    if (die === point) return true;
    if (die < point) return false;
    for (let p = point + 1; p <= 6; p++) if (stackOf(state, side, p).includes(side)) return false;
    return true;
  }

  function singleSteps(state, side, die, rules, turn) {
    const steps = landingSteps(state, side, die);
    if (!rules || !rules.parallel) return steps;
    return steps.filter(([from, to]) => !breaksRestriction(playStep(state, side, from, to, false), side, rules, turn));
  }

  function landingSteps(state, side, die) {
    const steps = [];
    if (state.bar[side] > 0) { // every checker on the bar enters before anything else moves
      if (!isClosed(state, side, BAR - die)) steps.push([BAR, BAR - die]);
      return steps;
    }
    for (let p = 24; p >= 1; p--) {
      if (!hasFree(state, side, p)) continue;
      const target = p - die;
      if (target >= 1) {
        if (!isClosed(state, side, target)) steps.push([p, target]);
      } else if (mayBearOff(state, side, p, die)) {
        steps.push([p, OFF]);
      }
    }
    return steps;
  }

  function playStep(state, side, from, to, pins) {
    const next = { points: state.points.slice(), off: Object.assign({}, state.off), bar: Object.assign({}, state.bar),
      parallel: state.parallel };
    if (from === BAR) next.bar[side] -= 1;
    else { const i = index(side, from, state.parallel); next.points[i] = next.points[i].slice(0, -1); } // releases a pin
    if (to === OFF) next.off[side] += 1;
    else {
      const i = index(side, to, state.parallel);
      let stack = next.points[i];
      if (stack === other(side) && !pins) { next.bar[other(side)] += 1; stack = ""; } // a blot is hit
      next.points[i] = stack + side; // pin games: a lone checker stays below, pinned
    }
    return next;
  }

  function motherPinned(state, side) {
    const stack = stackOf(state, side, 24);
    return stack.length >= 2 && stack[0] === side && stack[stack.length - 1] === other(side);
  }

  // Did the step `mover` just played end the game (RULES 3.4, 3.5, 4)? Only whether, not how.
  function gameEnded(state, mover, rules) {
    if (rules.pins && rules.mother_points > 0) {
      if (motherPinned(state, mover) && motherPinned(state, other(mover))) return true;
      if (motherPinned(state, other(mover)) && !stackOf(state, mover, 24).includes(mover)) return true;
    }
    return state.off[mover] === 15;
  }

  function stepCount(text) {
    return text.trim() === "" ? 0 : text.trim().split(/\s+/).length;
  }

  function pointText(point) {
    return point === BAR ? "bar" : point === OFF ? "off" : String(point);
  }

  const stepsOf = (text) => text.trim().split(/\s+/).filter(Boolean).map((step) => step.split("/"));

  // A move text in the other side's numbering: point p is 25 - p (p + 12 or p - 12 in the running games,
  // `parallel`); bar and off stay.
  function otherView(text, parallel) {
    return stepsOf(text).map((words) => words.map((w) => (/^\d+$/.test(w) ? String(otherPoint(Number(w), parallel)) : w))
      .join("/")).join(" ");
  }

  // The points a move's checkers left and those they ended on (net over its steps: 24/18 18/13 is 24 -> 13).
  function movedPoints(text) {
    const net = new Map(), word = (w) => (w === "bar" ? BAR : w === "off" ? OFF : Number(w));
    for (const words of stepsOf(text)) {
      net.set(word(words[0]), (net.get(word(words[0])) || 0) - 1);
      net.set(word(words[words.length - 1]), (net.get(word(words[words.length - 1])) || 0) + 1);
    }
    const moved = { from: [], to: [] };
    net.forEach((n, point) => { if (n) moved[n < 0 ? "from" : "to"].push(point); });
    return moved;
  }

  function Planner(position, dice, legalMoves) {
    this.side = position.turn;
    if (!RULES[position.variant]) {
      throw new Error("TapaSteps: unknown variant " + JSON.stringify(position.variant) + " (TapaSteps.defineVariants " +
        "takes the server's variants, GET /v1/variants)");
    }
    this.rules = Object.assign({}, RULES[position.variant]);
    if (position.rules && "contact" in position.rules) this.rules.pins = position.rules.contact === "pin";
    if (position.rules && "paths" in position.rules) this.rules.parallel = position.rules.paths === "parallel";
    if (position.rules && "mother_points" in position.rules) this.rules.mother_points = position.rules.mother_points;
    for (const option of ["start_rule", "prime_rule", "full_start_quarter_allowed"]) {
      if (position.rules && option in position.rules) this.rules[option] = position.rules[option];
    }
    const parallel = !!this.rules.parallel;
    // A double is four steps; a stage of a cascade (Gul Bara, docs/rules.md 10.2-10.3: position.cascade, played with
    // dice [k, k]) is its `steps` steps of k, fewer than four for a remainder stage.
    const stage = position.cascade;
    if (stage && !(dice[0] === stage.number && dice[1] === stage.number)) {
      throw new Error("TapaSteps: the position is inside a cascade (" + stage.steps + " steps of " + stage.number +
        "): its dice are [" + stage.number + ", " + stage.number + "], not " + JSON.stringify(dice));
    }
    this.dice = stage ? new Array(stage.steps).fill(stage.number) :
      dice[0] === dice[1] ? [dice[0], dice[0], dice[0], dice[0]] : [dice[0], dice[1]];
    const start = stateOf(position, parallel);
    const head = count(stackOf(start, this.side, 24), this.side);
    this.turn = { head: head, mayLeave: head === 15 && dice[0] === dice[1] && HEAD_DOUBLES.includes(dice[0]) ? 2 : 1 };
    this.goals = new Map(); // resulting position and number of steps -> the server's move
    for (const move of legalMoves) this.goals.set(key(stateOf(move.position, parallel)) + "#" + stepCount(move.move), move);
    this.memo = new Map();
    this.history = [{ state: start, remaining: this.dice.slice(), step: null, ended: false }];
  }

  Planner.prototype.current = function () { return this.history[this.history.length - 1]; };
  Planner.prototype.played = function () { return this.history.slice(1).map((h) => h.step); };

  // The server's move these steps make, or null while they make none (yet).
  Planner.prototype.complete = function () {
    const now = this.current();
    return this.goals.get(key(now.state) + "#" + (this.history.length - 1)) || null;
  };

  // Can the steps from `state` (after `played` steps, `remaining` dice left) still end on a legal move?
  Planner.prototype._reaches = function (state, played, remaining, ended) {
    if (this.goals.has(key(state) + "#" + played)) return true;
    if (ended || remaining.length === 0) return false;
    const memoKey = key(state) + "#" + played + "#" + remaining.slice().sort().join("");
    if (this.memo.has(memoKey)) return this.memo.get(memoKey);
    let found = false;
    for (const die of new Set(remaining)) {
      const rest = remaining.slice();
      rest.splice(rest.indexOf(die), 1);
      for (const [from, to] of singleSteps(state, this.side, die, this.rules, this.turn)) {
        const next = playStep(state, this.side, from, to, this.rules.pins);
        if (this._reaches(next, played + 1, rest, gameEnded(next, this.side, this.rules))) { found = true; break; }
      }
      if (found) break;
    }
    this.memo.set(memoKey, found);
    return found;
  };

  // The steps that can come next: [{from, to, die}], one per (from, to), with the smallest die that works.
  Planner.prototype.options = function () {
    const now = this.current();
    if (now.ended || this.complete()) return [];
    const found = new Map();
    const dice = Array.from(new Set(now.remaining)).sort((a, b) => a - b);
    for (const die of dice) {
      const rest = now.remaining.slice();
      rest.splice(rest.indexOf(die), 1);
      for (const [from, to] of singleSteps(now.state, this.side, die, this.rules, this.turn)) {
        const id = from + "/" + to;
        if (found.has(id)) continue;
        const next = playStep(now.state, this.side, from, to, this.rules.pins);
        if (this._reaches(next, this.history.length, rest, gameEnded(next, this.side, this.rules))) {
          found.set(id, { from: from, to: to, die: die });
        }
      }
    }
    return Array.from(found.values());
  };

  // Where the checker on `from` can go next, by one die or by several in a row (the same checker, each step
  // playable): a Map from the point to the steps that take it there, the fewest first.
  Planner.prototype.destinations = function (from) {
    const found = new Map();
    const now = this.current();
    if (now.ended || this.complete()) return found;
    const walk = (state, at, remaining, path) => {
      const played = this.history.length - 1 + path.length;
      for (const die of new Set(remaining)) {
        const rest = remaining.slice();
        rest.splice(rest.indexOf(die), 1);
        for (const [start, to] of singleSteps(state, this.side, die, this.rules, this.turn)) {
          if (start !== at) continue;
          const next = playStep(state, this.side, start, to, this.rules.pins);
          const ended = gameEnded(next, this.side, this.rules);
          if (!this._reaches(next, played + 1, rest, ended)) continue;
          const steps = path.concat([{ from: start, to: to, die: die }]);
          if (!found.has(to) || found.get(to).length > steps.length) found.set(to, steps);
          if (!ended && to !== OFF) walk(next, to, rest, steps);
        }
      }
    };
    walk(now.state, from, now.remaining, []);
    return found;
  };

  Planner.prototype.play = function (from, to) {
    const option = this.options().find((o) => o.from === from && o.to === to);
    if (!option) return false;
    const now = this.current();
    const rest = now.remaining.slice();
    rest.splice(rest.indexOf(option.die), 1);
    const state = playStep(now.state, this.side, from, to, this.rules.pins);
    this.history.push({ state: state, remaining: rest, step: option, ended: gameEnded(state, this.side, this.rules) });
    return true;
  };

  Planner.prototype.undo = function () {
    if (this.history.length > 1) this.history.pop();
  };

  Planner.prototype.text = function () {
    return this.played().map((s) => pointText(s.from) + "/" + pointText(s.to)).join(" ");
  };

  // The position the steps played so far reach, as JSON (turn still the mover), for drawing.
  Planner.prototype.position = function (base) {
    const state = this.current().state;
    const out = Object.assign({}, base, { points: state.points, off: state.off });
    if ("bar" in base) out.bar = state.bar;
    return out;
  };

  const api = { Planner: Planner, BAR: BAR, OFF: OFF, stepCount: stepCount, pointText: pointText, otherView: otherView,
    otherPoint: otherPoint, movedPoints: movedPoints, RULES: RULES,
    defineVariants: defineVariants };
  if (typeof module !== "undefined" && module.exports) module.exports = api;
  else root.TapaSteps = api;
})(typeof self !== "undefined" ? self : this);
