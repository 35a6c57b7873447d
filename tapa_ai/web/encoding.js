// The network input of a position: the `tapa-td` encoding, versions 1 to 5, written from
// docs/encoding.md (versions 1-3 from that page alone; version 4 from its section "Version 4: the running
// games"; version 5 from "Version 5: cascading doubles"). tests/test_web.py checks it against tests/data/encoding_vectors.json in the browser, every case
// and every version (the running games' feature cases in version 4), within 1e-6.
//
//   TapaEncoding.encode(position, version)  -> Float32Array(259 | 309 | 315 | 318 | 329), from position.turn's view
//
// The running games (fevga, narde: paths "parallel") need version 4, which reads them along their paths
// (O's own point q is points[(q + 11) % 24], a single checker closes its point, nothing is hit); versions
// 1-3 throw on them, as the Python encoders do. On the other variants version 4 is version 3 and three 0s.
// The rule sets whose doubles cascade (gulbara: rules.doubles "cascade") need version 5, which adds 11 columns
// read from position.turns and position.cascade (docs/rules.md 10.3); versions 1-4 throw on them. On the other
// rule sets version 5 is version 4 and eleven 0s.
//
// `position` is the JSON position of docs/rules.md section 7: {variant, points[24], off, bar?, turn, rules?}.
// Every value is computed in float64 and rounded once to float32 (the Float32Array does the rounding).
(function (root) {
  "use strict";

  const WIDTHS = { 1: 259, 2: 309, 3: 315, 4: 318, 5: 329 };
  const RUNNING_VERSION = 4; // the first version that encodes the running games
  const CASCADE_VERSION = 5; // the one version that encodes the rule sets whose doubles cascade
  const CASCADE_COLUMN = 318; // rules.cascades; cascade_now 319, 320; stage.number1..6 321..326; steps 327; remainder 328
  const OPTIONAL_FLAGS = ["doubles", "plain_double_turns"]; // "plain" and 3 where not given
  // The rule flags the encoding reads, per named variant (docs/encoding.md, "From a JSON position"). They stay here
  // because this file is also a frontend's encoder on its own, with no server to ask (docs/frontends.md: Node, a
  // page of one's own), and must encode a named position as tapa_ai/net/encoding.py does; the web board replaces
  // and extends them with the server's registry (defineVariants, from GET /v1/variants), so a variant added there
  // is encoded from its rules with no edit here.
  const VARIANT_FLAGS = {
    tapa: { contact: "pin", mother_points: 3, backgammons: true, paths: "opposite" },
    plakoto: { contact: "pin", mother_points: 2, backgammons: false, paths: "opposite" },
    backgammon: { contact: "hit", mother_points: 0, backgammons: true, paths: "opposite" },
    portes: { contact: "hit", mother_points: 0, backgammons: false, paths: "opposite" },
    fevga: { contact: "block", mother_points: 0, backgammons: false, paths: "parallel" },
    narde: { contact: "block", mother_points: 0, backgammons: false, paths: "parallel" },
    gulbara: { contact: "block", mother_points: 0, backgammons: false, paths: "parallel", doubles: "cascade",
      plain_double_turns: 3 },
  };

  // The rule flags of each variant of a registry: [{name, rules: {contact, mother_points, backgammons, paths, ...}}]
  // (GET /v1/variants' "variants"); a variant already known takes the registry's flags.
  function defineVariants(entries) {
    for (const entry of entries) {
      const rules = entry.rules || {}, flags = {};
      for (const key of ["contact", "mother_points", "backgammons", "paths"]) {
        if (!(key in rules)) throw new Error("variant " + JSON.stringify(entry.name) + ": its rules lack " + key);
        flags[key] = rules[key];
      }
      for (const key of OPTIONAL_FLAGS) if (key in rules) flags[key] = rules[key];
      VARIANT_FLAGS[entry.name] = flags;
    }
  }

  function flagsOf(position) {
    const base = VARIANT_FLAGS[position.variant];
    if (!base) throw new Error("unknown variant " + JSON.stringify(position.variant));
    const flags = Object.assign({}, base);
    const overrides = position.rules || {};
    for (const key of ["contact", "mother_points", "backgammons", "paths", ...OPTIONAL_FLAGS]) {
      if (key in overrides) flags[key] = overrides[key];
    }
    if (flags.doubles === undefined) flags.doubles = "plain";
    if (flags.plain_double_turns === undefined) flags.plain_double_turns = 3;
    if (flags.doubles !== "plain" && flags.doubles !== "cascade") {
      throw new Error("rules.doubles must be \"plain\" or \"cascade\", got " + JSON.stringify(flags.doubles));
    }
    if (flags.paths !== "opposite" && flags.paths !== "parallel") {
      throw new Error("rules.paths must be \"opposite\" or \"parallel\", got " + JSON.stringify(flags.paths));
    }
    if ((flags.paths === "parallel") !== (flags.contact === "block")) {
      throw new Error("rules: paths " + JSON.stringify(flags.paths) + " with contact " + JSON.stringify(flags.contact) +
        "; the running games pair paths \"parallel\" with contact \"block\", the others \"opposite\" with " +
        "\"pin\" or \"hit\"");
    }
    return flags;
  }

  // One stack string, bottom to top: {top: side on top or null, number: its checkers, under: pinned side or null}.
  function parseStack(stack) {
    if (stack.length === 0) return { top: null, number: 0, under: null };
    const top = stack[stack.length - 1];
    if (stack === top.repeat(stack.length)) return { top: top, number: stack.length, under: null };
    const rest = stack.slice(1);
    if (stack[0] !== top && rest === top.repeat(rest.length)) return { top: top, number: rest.length, under: stack[0] };
    throw new Error("not a legal stack: " + JSON.stringify(stack));
  }

  // Side S's own point p (1..24) is points[p - 1] for X and points[24 - p] for O; in the running games
  // (`parallel`: both sides travel the same way round) O's own point p is points[(p + 11) % 24].
  function ownStack(stacks, side, point, parallel) {
    if (side === "X") return stacks[point - 1];
    return parallel ? stacks[(point + 11) % 24] : stacks[24 - point];
  }

  // The 21 distinct rolls [a, b, how many of the 36 ordered rolls they stand for]: (a, b) and (b, a) reach the
  // same points (both orders of the dice are tried below), so each non-double counts twice.
  const ROLLS = [];
  for (let a = 1; a <= 6; a++) for (let b = a; b <= 6; b++) ROLLS.push([a, b, a === b ? 1 : 2]);

  // Marks in `mark` (with `stamp`) the points a checker on `source` reaches with roll (a, b) (version 2's
  // "reach"): one die; both dice when the first landing is open; a double up to four steps, each point passed
  // through open. The landing itself need not be open. `open[p]` (p = 1..24) says which points are open.
  function reach(source, a, b, open, mark, stamp) {
    if (a === b) {
      let point = source;
      for (let step = 0; step < 4; step++) {
        point -= a;
        if (point < 1) break;
        mark[point] = stamp;
        if (!open[point]) break;
      }
    } else {
      for (let order = 0; order < 2; order++) {
        const first = order === 0 ? a : b, second = order === 0 ? b : a;
        const landing = source - first;
        if (landing >= 1) {
          mark[landing] = stamp;
          if (open[landing] && landing - second >= 1) mark[landing - second] = stamp;
        }
      }
    }
  }

  // Version 2: the 25 exposure values of `defender` (its own points 1..24, then "any").
  function exposure(stacks, bar, defender) {
    const attacker = defender === "X" ? "O" : "X";
    // Everything in the attacker's own numbering: the defender's point q is the attacker's 25 - q.
    const open = new Uint8Array(25), targets = [], sources = [];
    for (let p = 1; p <= 24; p++) {
      const s = ownStack(stacks, attacker, p);
      const lone = s.top === defender && s.number === 1 && s.under === null; // exactly "S"
      if (lone) targets.push(p);
      open[p] = s.top !== defender || lone ? 1 : 0;
      if (s.top === attacker) sources.push(p);
    }
    if (bar[attacker] > 0) sources.splice(0, sources.length, 25); // from the bar only
    const hits = new Array(25).fill(0);
    let anyHit = 0;
    const mark = new Int32Array(26);
    let stamp = 0;
    for (const [a, b, weight] of ROLLS) {
      stamp++;
      for (const source of sources) reach(source, a, b, open, mark, stamp);
      let hitSome = false;
      for (const t of targets) if (mark[t] === stamp) { hits[t] += weight; hitSome = true; }
      if (hitSome) anyHit += weight;
    }
    const values = [];
    for (let q = 1; q <= 24; q++) values.push(hits[25 - q] / 36);
    values.push(anyHit / 36);
    return values;
  }

  // Version 3: escapes, prime and dance of `side`, in its own numbering (along its path when `parallel`).
  function contact(stacks, bar, side, allHome, parallel) {
    const other = side === "X" ? "O" : "X";
    const open = new Uint8Array(25), sources = [];
    for (let p = 1; p <= 24; p++) {
      const s = ownStack(stacks, side, p, parallel);
      // open: empty, the side on top, or exactly one opposing checker ("T"); in the running games (contact
      // "block") a single opposing checker closes its point, so open means no opposing checker there.
      open[p] = s.top !== other || (!parallel && s.number === 1 && s.under === null) ? 1 : 0;
      if (s.top === side) sources.push(p);
    }
    if (bar[side] > 0) sources.splice(0, sources.length, 25);
    if (sources.length === 0) return [0, 0, 0];
    const rear = Math.max.apply(null, sources);
    let beyond = rear; // land below the blockade's lowest point, or anywhere below the rearmost checker
    for (let p = Math.max(1, rear - 12); p < rear; p++) if (!open[p]) { beyond = p; break; }
    let escapes = 0, dance = 0;
    const mark = new Int32Array(26);
    let stamp = 0;
    for (const [a, b, weight] of ROLLS) {
      stamp++;
      reach(rear, a, b, open, mark, stamp);
      for (let p = 1; p < beyond; p++) if (mark[p] === stamp && open[p]) { escapes += weight; break; }
      if (!allHome) {
        let movable = false;
        for (const p of sources) {
          if ((p - a >= 1 && open[p - a]) || (p - b >= 1 && open[p - b])) { movable = true; break; }
        }
        if (!movable) dance += weight;
      }
    }
    let prime = 0, run = 0;
    for (let p = 1; p < rear; p++) {
      run = open[p] ? 0 : run + 1;
      if (run > prime) prime = run;
    }
    return [escapes / 36, Math.min(prime, 6) / 6, dance / 36];
  }

  function encode(position, version) {
    version = version === undefined ? 1 : version;
    const width = WIDTHS[version];
    if (!width) throw new Error("encoding version " + version + ": this encoder computes versions 1, 2, 3, 4, 5");
    const flags = flagsOf(position);
    const parallel = flags.paths === "parallel";
    const cascades = flags.doubles === "cascade";
    if (cascades && version < CASCADE_VERSION) {
      throw new Error("encoding version " + version + " cannot encode " + JSON.stringify(position.variant) +
        " (doubles cascade, doubles \"cascade\"): it needs version " + CASCADE_VERSION);
    }
    if (parallel && version < RUNNING_VERSION) {
      throw new Error("encoding version " + version + " cannot encode " + JSON.stringify(position.variant) +
        " (a running game, paths \"parallel\"): it needs version " + RUNNING_VERSION);
    }
    const pins = flags.contact === "pin";
    const motherRules = pins && flags.mother_points > 0;
    const mover = position.turn;
    if (mover !== "X" && mover !== "O") throw new Error("turn must be X or O");
    const opponent = mover === "X" ? "O" : "X";
    if (!Array.isArray(position.points) || position.points.length !== 24) throw new Error("points: want 24 stacks");
    const stacks = position.points.map(parseStack);
    const off = Object.assign({ X: 0, O: 0 }, position.off || {});
    const bar = Object.assign({ X: 0, O: 0 }, position.bar || {});
    const features = new Float32Array(width);
    const allHome = {};
    [mover, opponent].forEach(function (side, block) {
      const counts = new Array(25).fill(0);
      for (let p = 1; p <= 24; p++) {
        const s = ownStack(stacks, side, p, parallel);
        const free = s.top === side ? s.number : 0;
        const pinned = s.under === side ? 1 : 0;
        const base = 120 * block + 5 * (p - 1);
        features[base] = free >= 1 ? 1 : 0;
        features[base + 1] = free >= 2 ? 1 : 0;
        features[base + 2] = free >= 3 ? 1 : 0;
        features[base + 3] = Math.max(free - 3, 0) / 2;
        features[base + 4] = pinned;
        counts[p] = free + pinned;
      }
      const own24 = ownStack(stacks, side, 24, parallel);
      const scalars = 240 + 8 * block;
      features[scalars] = counts[24] / 15;
      if (motherRules) {
        features[scalars + 1] = own24.top === side && own24.number === 1 && own24.under === null ? 1 : 0;
        features[scalars + 2] = own24.under === side ? 1 : 0;
        features[scalars + 3] = counts[24] === 0 ? 1 : 0;
      }
      features[scalars + 4] = off[side] / 15;
      let pips = 25 * bar[side];
      let outside = 0;
      for (let p = 1; p <= 24; p++) {
        pips += p * counts[p];
        if (p >= 7) outside += counts[p];
      }
      features[scalars + 5] = pips / 360;
      features[scalars + 6] = bar[side] / 2;
      allHome[side] = bar[side] === 0 && outside === 0;
      features[scalars + 7] = allHome[side] ? 1 : 0;
    });
    features[256] = pins ? 1 : 0;
    features[257] = flags.backgammons ? 1 : 0;
    features[258] = flags.mother_points / 3;
    if (version >= 2 && !parallel) { // nothing can be hit in the running games: their exposure stays 0
      features.set(exposure(stacks, bar, mover), 259);
      features.set(exposure(stacks, bar, opponent), 284);
    }
    if (version >= 3) {
      features.set(contact(stacks, bar, mover, allHome[mover], parallel), 309);
      features.set(contact(stacks, bar, opponent, allHome[opponent], parallel), 312);
    }
    if (version >= 4 && parallel) { // 0 in the other variants
      features[315] = 1; // rules.parallel
      [mover, opponent].forEach(function (side, block) {
        // passed: a checker on the side's own points 1..11, or one borne off (docs/rules.md 8.4 a)
        let passed = off[side] > 0;
        for (let p = 1; p <= 11 && !passed; p++) passed = ownStack(stacks, side, p, true).top === side;
        features[316 + block] = passed ? 1 : 0;
      });
    }
    if (version >= 5 && cascades) { // 0 where doubles are plain
      features[CASCADE_COLUMN] = 1; // rules.cascades
      const turns = Object.assign({ X: 0, O: 0 }, position.turns || {});
      // cascade_now: the side has begun plain_double_turns turns (counted up to it): its doubles cascade now
      features[CASCADE_COLUMN + 1] = turns[mover] >= flags.plain_double_turns ? 1 : 0;
      features[CASCADE_COLUMN + 2] = turns[opponent] >= flags.plain_double_turns ? 1 : 0;
      const stage = position.cascade;
      if (stage) { // the pending stage the mover plays without rolling
        if (!(Number.isInteger(stage.number) && stage.number >= 1 && stage.number <= 6)) {
          throw new Error("cascade.number must be an integer 1..6, got " + JSON.stringify(stage.number));
        }
        const steps = stage.steps === undefined ? 4 : stage.steps;
        features[CASCADE_COLUMN + 2 + stage.number] = 1; // stage.number1 .. stage.number6
        features[CASCADE_COLUMN + 9] = steps / 4; // stage.steps
        features[CASCADE_COLUMN + 10] = stage.remainder ? 1 : 0; // stage.remainder
      }
    }
    return features;
  }

  const api = { encode: encode, flagsOf: flagsOf, defineVariants: defineVariants, WIDTHS: WIDTHS, VERSIONS: [1, 2, 3, 4, 5], RUNNING_VERSION: RUNNING_VERSION,
    CASCADE_VERSION: CASCADE_VERSION,
    numFeatures: (v) => WIDTHS[v] };
  if (typeof module !== "undefined" && module.exports) module.exports = api;
  else root.TapaEncoding = api;
})(typeof self !== "undefined" ? self : this);
