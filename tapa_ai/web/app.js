// The web board's game: you play X against the bot (O). docs/web.md describes it.
//
// One source of rules: the server's engine (`/v1/start`, `/v1/legal_moves`, `/v1/apply`, and `/v1/best_move`
// for the n-ply bot). The numbers shown and the 0-ply bot's choices come from the exported network running
// in this page (model.js, encoding.js), evaluating every legal resulting position.
//
// URL parameters (for reproducible games and the tests): variant (or a preset rotation's name, "tavli" or "tabla":
// that rotation's match), rotation (any rotation's match: a preset's name or the games, comma-separated,
// "tapa,fevga"; the server's GET v1/rotation-met gives its games, rules and table), length (match
// points), strength (plies, or a fixed bot of the server: heuristic, runner, random), level (a level of play, below),
// seed (the dice), noise_seed (the levels' noise; default the seed), delay (ms before the bot's move is played,
// default 700), mode (play or study, below). A value the page cannot use, or a name it does not know, is said in a
// notice above the board, naming the parameter, the value and what was used instead (docs/web.md).
//
// Play and study (docs/web.md "Play and study"): in play mode the analysis panel keeps the best move, the equities
// and the chances hidden while the game goes on (Show the analysis asks for those of the turn; Analyse rates the game
// once it is over); study mode shows them all along. Play is the default with a level below world-class, study
// otherwise; the Mode list or ?mode= chooses.
//
// Forced moves: a roll of yours with one legal move (or none) is played for you, the note "forced: ..." in the
// message and the log, as the terminal game does.
//
// Levels of play (docs/levels.md; "Level" in the header): where the model of the variant carries its calibrated
// levels (metadata.levels), the bot may play one. A 0-ply level (beginner to expert) plays in the page with levels.js:
// the network's value of each move plus the level's noise, a deterministic draw from the game's noise seed (the
// noise_seed parameter, default the dice's seed, plus the game's number less 1) and the position after the move, so
// the same seeds replay the same game, and the move is the Python bot's `net:<variant>,level=NAME,noise_seed=SEED`
// (bear-offs valued by the network). World-class (2 plies) asks the server's best_move with "level". In a
// rotation's match the level plays at the score: the values are match-winning chances and the noise is in the match-winning
// chance of a point there, as Bot.choose_at_score adds it.
//
// A rotation's match (docs/rules.md 9 and 10.4; "Tavli match (...)" and "Tabla match (...)" in the variant list,
// the server's preset rotations, and "Rotation match (...)" for a ?rotation= of other games): a match to N points
// of games rotating variants (Tavli: Portes, Plakoto, Fevga; Tabla: Backgammon, Gul Bara, Tapa), no cube, each
// game played with its own variant's rules, drawing and model; the first game opens with an opening roll, the
// winner of each game opens the next, a draw scores nothing. The bot plays by the score: each outcome class is
// valued by the rotation's match equity table (GET model/<rotation>-met.json, v1/rotation-met?rotation=...), as
// the engine's Bot.choose_at_score does, and the panel shows match-winning chances.
//
// A variant without a model (a server started without one for it) is played all the same: the bot is one of the
// server's fixed bots (`/v1/bot_move`), and the analysis panel says why it has no numbers.
//
// Every game is recorded as it is played (opening roll, moves, result), in the `tapa-ai/games` form that
// `tapa-ai analyse` reads (docs/analysis.md): "Save game" downloads the match so far, and "Analyse" sends a
// finished game to the server's `/v1/analyse` and shows each move's error and each roll's luck.
(function () {
  "use strict";

  // The family (docs/rules.md section 6), as the server publishes it: GET v1/variants (tapa_ai/engine/web_board.py
  // variants_json, from the registry tapa_ai/rules/options.py REGISTRY), loaded once before anything needs it
  // (loadVariants). The page keeps no list of its own: the Variant menu, each variant's rules and the preset rotations
  // are read from that answer, so a new entry of the registry is on the page with no edit here. VARIANTS[name]:
  // {title, rules (every rule option), cube, mothers, opening, nextOpener, parallel, model (the network that plays
  // it: its own or, Portes, backgammon's; null where the registry names none: the page then asks for no model
  // and the server's fixed bots play), points (its outcome classes' points), top (the outcome it scores above a
  // gammon, "backgammon or mother", "mother", "backgammon", or null where it has none: Portes counts a backgammon
  // as a gammon, the running games have none), draws}. The chances line lists only the outcomes it scores.
  let VARIANTS = {};
  // The preset rotations (docs/rules.md 9, 10.4; tapa_ai/rules/rotations.py ROTATIONS), by name, and the URL's
  // ?rotation= of other games as "custom" (loadRotationParameter): {title, games (the variants in turn), rules (each
  // game's options changed from its variant's: no cube), met (where its match equity table is), data (the rotation
  // as Rotation.to_data writes it: a preset's name, or the list of games), label (its match in words: "Tabla
  // match", "Rotation match")}. Game n (from 1) of a match is games[(n - 1) % games.length]
  // (tapa_ai/flow/rotation.py).
  let ROTATIONS = {};
  const titleOf = (variant) => (VARIANTS[variant] || {}).title || variant;
  const rotationOf = () => (S.match.rotation ? ROTATIONS[S.match.rotation] : null);
  const rotationIndex = (number) => (number - 1) % rotationOf().games.length;
  const rotationVariant = (number) => rotationOf().games[rotationIndex(number)];
  // "Tabla match", "Rotation match" (a custom rotation, Rotation.match_name): a rotation's match in words; its menu
  // entry adds the games' titles.
  const matchName = (name) => (ROTATIONS[name] && ROTATIONS[name].label) ||
    name.charAt(0).toUpperCase() + name.slice(1) + " match";
  const rotationLabel = (name) => matchName(name) + " (" + ROTATIONS[name].games.map(titleOf).join(", ") + ")";
  const FIXED_BOTS = ["heuristic", "runner", "random"]; // the server's bots that need no model (bot_move)
  const LEVEL_NAMES = ["beginner", "casual", "intermediate", "advanced", "expert", "world-class"]; // docs/levels.md
  const MODES = ["play", "study"]; // docs/web.md "Play and study"
  // The mode when none was chosen (?mode=, the Mode list): play with a level below world-class, else study.
  const defaultMode = () => ($("level").value && $("level").value !== "world-class" ? "play" : "study");
  const studyMode = () => $("mode").value === "study";
  const HUMAN = "X", BOT = "O";
  const other = (side) => (side === "X" ? "O" : "X");
  const $ = (id) => document.getElementById(id);

  const params = new URLSearchParams(location.search);
  // -- the URL's parameters: each checked, a mistake said on the page (#url-notice), never silently replaced --
  const URL_PARAMETERS = ["variant", "rotation", "length", "strength", "level", "seed", "noise_seed", "delay", "mode"];
  const MAX_MATCH_LENGTH = 25; // the match equity tables' reach (tapa_ai/cube/met.py MAX_MATCH_LENGTH)
  const MAX_SEED = 4294967295; // the dice's and the levels' seeds are 32-bit
  const urlNotices = [];
  // A value quoted in a notice, bounded as tapa_ai/quoting.py quotes one: its first 40 characters and its length.
  const quote = function (value) {
    const text = String(value);
    return text.length <= 40 ? JSON.stringify(text) : JSON.stringify(text.slice(0, 40)) + "... (" +
      text.length.toLocaleString("en") + " characters)";
  };
  const urlNotice = (name, value, why, used) => urlNotices.push("URL parameter " + name + "=" + quote(value) + " " +
    why + ": " + used + ".");
  for (const name of new Set(params.keys())) {
    if (!URL_PARAMETERS.includes(name)) {
      urlNotices.push("URL parameter " + quote(name) + " is not one the board reads (" + URL_PARAMETERS.join(", ") +
        "): ignored.");
    } else if (params.getAll(name).length > 1) {
      urlNotice(name, params.getAll(name).slice(1).join(", "), "is given " + params.getAll(name).length + " times",
        "the first, " + quote(params.get(name)) + ", is used");
    }
  }
  // A whole number from 0 to MAX_SEED, or null (said in the notice, `fallback` used).
  function seedParameter(name, fallbackText) {
    if (!params.has(name)) return null;
    const text = params.get(name);
    if (/^\d{1,10}$/.test(text) && Number(text) <= MAX_SEED) return Number(text);
    urlNotice(name, text, "is not a whole number from 0 to " + MAX_SEED, fallbackText + " is used instead");
    return null;
  }
  const askedVariant = params.get("variant");
  const variantNoticeAt = urlNotices.length; // its notice, once the variants are known (checkVariantParameter)
  let askedDelay = 700;
  if (params.has("delay")) {
    const text = params.get("delay");
    if (/^\d+(\.\d+)?$/.test(text) && Number(text) <= 60000) askedDelay = Number(text);
    else urlNotice("delay", text, "is not a number of milliseconds from 0 to 60000", "700 is used instead");
  }
  const S = {
    variant: null, // the variant of the game (checkVariantParameter sets the first from the URL)
    met: null, // the rotation's match equity table (model/<rotation>-met.json), once its match has loaded it
    delay: askedDelay,
    health: null,
    models: {},
    game: 0, // bumped by every new game: answers that arrive for an older game are dropped
    phase: "loading",
    position: null, dice: null, legal: null, ranked: null, chances: null, plan: null, selected: null,
    hints: null, lastMove: null, moved: null, log: [], cube: 1,
    match: { length: 1, score: { X: 0, O: 0 }, lastWinner: null, over: false, rotation: null },
    games: [], // the records of this match's games (tapa-ai/games), the current one last
    analysis: null, // the server's analysis of the last finished game
    rolls: 0, // the dice rolled since the page loaded (two a roll): a cascade's stages roll none
    stage: null, // the cascade stage being played (Gul Bara, docs/rules.md 10.2; stageOf), or null
  };

  // -- dice: a seeded generator (mulberry32), so ?seed=N replays the same dice ----------------------
  function makeRandom(seed) {
    let a = seed >>> 0;
    return function () {
      a = (a + 0x6d2b79f5) >>> 0;
      let t = a;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
  }
  const randomSeed = crypto.getRandomValues(new Uint32Array(1))[0];
  const askedSeed = seedParameter("seed", "the random seed " + randomSeed);
  const seed = askedSeed === null ? randomSeed : askedSeed;
  const random = makeRandom(seed);
  const botRandom = makeRandom(seed ^ 0x5bd1e995); // the seeds of the fixed bots' tie-breaks: the dice stay the same
  const die = () => { S.rolls++; return 1 + Math.floor(random() * 6); };
  // The levels' noise seed of game n of the match (from 1): the noise_seed parameter (default the dice's seed) + n - 1.
  const askedNoiseSeed = seedParameter("noise_seed", "the dice's seed, " + seed + ",");
  const noiseSeedBase = askedNoiseSeed === null ? seed : askedNoiseSeed;
  const gameNoiseSeed = (number) => ((noiseSeedBase || 0) + number - 1) >>> 0;

  // -- the server ----------------------------------------------------------------------------------
  class ServerError extends Error {}

  async function api(command, body) {
    const response = await fetch("v1/" + command, {
      method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
    });
    const answer = await response.json();
    if (!response.ok) throw new ServerError(answer.error || response.status + " " + response.statusText);
    return answer;
  }

  // A mistake the page explains in full itself: shown as it is, with no "Error:" before it.
  class PageError extends Error {}

  // The family from the server (GET v1/variants), once, before the page needs any of it: fills VARIANTS and
  // ROTATIONS, tells the encoder and the step planner each variant's rules, and lists the variants (and the preset
  // rotations' matches) in the Variant menu by their titles. An older server without it: one PageError saying so.
  async function loadVariants() {
    let response = null, answer = null;
    try {
      response = await fetch("v1/variants");
      answer = await response.json();
    } catch (error) {
      answer = null;
    }
    if (!response || !response.ok || !answer || !Array.isArray(answer.variants)) {
      const why = !response ? "no answer" : !response.ok ? response.status + " " + ((answer && answer.error) ||
        response.statusText) : "not a list of variants";
      throw new PageError("This server does not publish its variants (GET /v1/variants: " + why + "): it is an " +
        "older tapa-ai serve than this page. Start the board with this version's tapa-ai serve.");
    }
    const tables = {};
    answer.variants.forEach(function (entry, n) {
      const lacks = ["name", "title", "rules", "outcomes"].filter((key) => !entry || !entry[key]).concat(
        entry && entry.outcomes ? ["names", "points", "scored"].filter((key) => !Array.isArray(entry.outcomes[key])) : []);
      if (lacks.length) {
        throw new PageError("The server's variants (GET /v1/variants) are not in the form this page reads: entry " +
          (n + 1) + " lacks " + lacks.join(", ") + ".");
      }
    });
    for (const entry of answer.variants) {
      const rules = entry.rules, outcomes = entry.outcomes, names = outcomes.names, above = names[2];
      tables[entry.name] = {
        title: entry.title, summary: entry.summary, rules: rules, cube: rules.cube, mothers: rules.mother_points > 0,
        opening: rules.opening, nextOpener: rules.next_game_opener, parallel: rules.paths === "parallel",
        model: entry.model || null, points: outcomes.points, draws: !!entry.draws,
        top: above && outcomes.scored.includes(above) ? above.replace(/^win_/, "").replace(/_/g, " ") : null,
      };
    }
    VARIANTS = tables;
    ROTATIONS = {};
    for (const [name, rotation] of Object.entries(answer.rotations || {})) {
      if (VARIANTS[name] || !rotation || !Array.isArray(rotation.games) || !rotation.games.length ||
        !rotation.games.every((game) => VARIANTS[game])) continue; // a rotation of games this page cannot play
      ROTATIONS[name] = { title: rotation.title, games: rotation.games.slice(),
        rules: rotation.games.map((game, n) => (Array.isArray(rotation.rules) && rotation.rules[n]) || {}),
        met: String(rotation.met || "/model/" + name + "-met.json").replace(/^\//, ""), data: name,
        label: matchName(name) };
    }
    TapaEncoding.defineVariants(answer.variants);
    TapaSteps.defineVariants(answer.variants);
    const menu = $("variant");
    menu.replaceChildren(...Object.keys(VARIANTS).map((name) => new Option(VARIANTS[name].title, name)));
    for (const name of Object.keys(ROTATIONS)) menu.appendChild(new Option(rotationLabel(name), name));
  }

  // The URL's ?rotation= (a preset's name or the games, comma-separated): the server reads it (GET
  // v1/rotation-met?rotation=...: the rotation's games, each game's rules and its match equity table); a preset
  // (named, or by its games) is its own entry of the Variant menu, any other rotation is added to it as "custom",
  // "Rotation match (Tapa, Fevga)". The entry's key, or null: no ?rotation=, or one the server refuses (its one line
  // in S.rotationWhy, said in the URL's notice once the game played instead is known).
  const CUSTOM_ROTATION = "custom"; // Rotation.name of a rotation that is not a preset
  async function loadRotationParameter() {
    if (!params.has("rotation")) return null;
    const found = await loadRotation(params.get("rotation"));
    if (found.why) S.rotationWhy = found.why;
    return found.key || null;
  }

  // A rotation by its text (a preset's name or the games, comma-separated), read by the server (GET
  // v1/rotation-met?rotation=...): {key} (a preset's entry, or "custom", added to the Variant menu), or {why} in one
  // line. The URL's ?rotation= and the rotation of an opened match file both come here.
  async function loadRotation(text) {
    let response = null, answer = null;
    try {
      response = await fetch("v1/rotation-met?rotation=" + encodeURIComponent(text));
      answer = await response.json();
    } catch (error) {
      answer = null;
    }
    if (!response || !response.ok || !answer || answer.format !== "tapa-ai-rotation-met" ||
      !Array.isArray(answer.games) || !answer.games.length) {
      return { why: answer && answer.error ? answer.error : !response ? "no answer from GET /v1/rotation-met" :
        !response.ok ? "GET /v1/rotation-met: " + response.status + " " + response.statusText :
        "GET /v1/rotation-met: not a rotation's match equity table (an older tapa-ai serve)" };
    }
    const unknown = answer.games.filter((game) => !VARIANTS[game]);
    if (unknown.length) {
      return { why: "the board does not know the game" + (unknown.length > 1 ? "s " : " ") + unknown.join(", ") };
    }
    if (ROTATIONS[answer.name] && answer.name !== CUSTOM_ROTATION) { // a preset: its own entry (its table by its path)
      metLoading[answer.name] = Promise.resolve(answer);
      return { key: answer.name };
    }
    const rules = answer.games.map((game, n) => (Array.isArray(answer.rules) && answer.rules[n]) ||
      (VARIANTS[game].cube ? { cube: false, crawford: false } : {})); // an older server's answer: no cube
    ROTATIONS[CUSTOM_ROTATION] = { title: answer.title, games: answer.games.slice(), rules: rules,
      met: "v1/rotation-met?rotation=" + encodeURIComponent(text), data: answer.rotation, label: "Rotation match" };
    metLoading[CUSTOM_ROTATION] = Promise.resolve(answer);
    const entry = Array.from($("variant").options).find((o) => o.value === CUSTOM_ROTATION);
    if (entry) entry.textContent = rotationLabel(CUSTOM_ROTATION);
    else $("variant").appendChild(new Option(rotationLabel(CUSTOM_ROTATION), CUSTOM_ROTATION));
    return { key: CUSTOM_ROTATION };
  }

  // The URL's variant, checked against the server's variants (its notice in the URL's order); the first game's.
  // `rotation`: the URL's ?rotation= entry (loadRotationParameter), which is played whatever ?variant= says.
  function checkVariantParameter(rotation) {
    const names = Object.keys(VARIANTS), rotations = Object.keys(ROTATIONS);
    if (rotation) {
      if (askedVariant !== null) {
        urlNotices.splice(variantNoticeAt, 0, "URL parameter variant=" + quote(askedVariant) + " is not used: " +
          "rotation=" + quote(params.get("rotation")) + " chooses the game, the " + rotationLabel(rotation) + ".");
      }
      S.match.rotation = rotation;
      S.variant = rotationVariant(1);
      return;
    }
    if (askedVariant !== null && !VARIANTS[askedVariant] && !ROTATIONS[askedVariant]) {
      urlNotices.splice(variantNoticeAt, 0, "URL parameter variant=" + quote(askedVariant) + " is not a game of the " +
        "board (" + names.concat(rotations).join(", ") + "): " + names[0] + " is played instead.");
    }
    S.match.rotation = ROTATIONS[askedVariant] ? askedVariant : null;
    S.variant = VARIANTS[askedVariant] ? askedVariant : S.match.rotation ? rotationVariant(1) : names[0];
  }

  // The model that plays a variant: its own, or (portes) that of the variant of the same board game; a variant
  // whose registry entry names no model (model null) is named by itself in the page's notes.
  const modelVariant = (variant) => (VARIANTS[variant] || {}).model || variant;

  // A model of another variant of the same board game playing `variant`: shown every position as one of its own
  // variant (the rule flags it was trained with), its outcome classes valued with `variant`'s points.
  function playedAs(model, variant) {
    const played = Object.create(model);
    played.outcomePoints = VARIANTS[variant].points;
    played.evaluatePosition = function (position) {
      const shown = Object.assign({}, position, { variant: model.variant });
      return this.evaluate(globalThis.TapaEncoding.encode(shown, this.encodingVersion));
    };
    return played;
  }

  async function loadModel(variant) {
    if (VARIANTS[variant] && !VARIANTS[variant].model) { // no network plays it: nothing to fetch (no 404 to log)
      throw new ServerError("the server's registry names no model for " + variant + " (GET /v1/variants: model null)");
    }
    if (!S.models[variant]) {
      S.models[variant] = (async function () {
        const response = await fetch("model/" + modelVariant(variant) + ".json");
        const answer = await response.json();
        if (!response.ok) throw new ServerError(answer.error || "no model for " + variant);
        const model = TapaModel.fromJSON(answer);
        return modelVariant(variant) === variant ? model : playedAs(model, variant);
      })();
      S.models[variant].catch(() => { delete S.models[variant]; });
    }
    return S.models[variant];
  }

  // A rotation's match equity table (GET model/<rotation>-met.json, or v1/rotation-met?rotation=... for the URL's
  // ?rotation=; tapa_ai/engine/web_board.py rotation_met_json), loaded once each.
  const metLoading = {};
  async function loadRotationMet(name) {
    if (!ROTATIONS[name]) throw new ServerError("no rotation " + name + " on this server (GET /v1/variants)");
    if (!metLoading[name]) {
      metLoading[name] = (async function () {
        const response = await fetch(ROTATIONS[name].met);
        const answer = await response.json();
        if (!response.ok) throw new ServerError(answer.error || "no " + matchName(name) + " equity table");
        if (answer.format !== "tapa-ai-rotation-met") throw new ServerError("not a rotation's match equity table");
        return answer;
      })();
      metLoading[name].catch(() => { delete metLoading[name]; });
    }
    return metLoading[name];
  }

  // What each of the model's outcome classes is worth to `side` in game `context.game` of a rotation's match to
  // `context.length` at `context.score`, as match-winning chances (RotationMatchEquityTable.class_values): a win by p
  // points leads to the next game opened by the side, p points nearer; a loss to the next game opened by the
  // opponent; a draw to the next game opened by an opening roll.
  function rotationClassValues(met, points, side, context) {
    const table = met.table, next = context.game % met.games.length; // the rotation index of the next game
    const away = context.length - context.score[side], opponentAway = context.length - context.score[other(side)];
    return points.map(function (value) {
      const size = Math.round(Math.abs(value));
      if (value > 0) return table[0][next][Math.max(away - size, 0)][opponentAway];
      if (value < 0) return table[1][next][away][Math.max(opponentAway - size, 0)];
      return table[2][next][away][opponentAway];
    });
  }

  // The current game's context in its rotation's match (the engine protocol's "rotation_match": rotation, length,
  // score, game), or null.
  function rotationContext() {
    if (!S.match.rotation || !S.games.length) return null;
    return { rotation: rotationOf().data, length: S.match.length, score: { X: S.match.score.X, O: S.match.score.O },
      game: S.games.length };
  }

  // The class values of `side` at the score of this rotation's match, or null (no rotation, no table, no model).
  function scoreValues(side) {
    const context = rotationContext();
    return context && S.met && S.model ? rotationClassValues(S.met, S.model.outcomePoints, side, context) : null;
  }

  // The expected value of outcome probabilities under class values.
  function worth(probabilities, values) {
    let total = 0;
    for (let k = 0; k < values.length; k++) total += probabilities[k] * values[k];
    return total;
  }

  // -- values --------------------------------------------------------------------------------------
  // A bear-off (no contact left): every checker on its own home board or off, none on the bar or pinned. The
  // engine's bots value these with the bear-off database; this page shows the network's value and marks them.
  function isBearoff(position) {
    // The databases are exact only where doubles are plain (docs/bearoff.md): under cascading doubles (Gul Bara)
    // the engine's bots value a bear-off by the network too, so it is not marked.
    const known = VARIANTS[position.variant] || {};
    const doubles = (position.rules && position.rules.doubles) || (known.rules && known.rules.doubles) || "plain";
    if (doubles === "cascade") return false;
    const bar = position.bar || { X: 0, O: 0 };
    if (bar.X || bar.O) return false;
    const oHome = (VARIANTS[position.variant] || {}).parallel ? 12 : 18; // O's 1-6: points[12..17], or [18..23]
    let x = 0, o = 0;
    for (let i = 0; i < 24; i++) {
      const stack = position.points[i];
      if (!stack) continue;
      if (stack.includes("X") && stack.includes("O")) return false;
      if (stack[0] === "X") { if (i >= 6) return false; x += stack.length; }
      else { if (i < oHome || i >= oHome + 6) return false; o += stack.length; }
    }
    return x > 0 && o > 0;
  }

  // The exact outcome of a finished game from `side`'s view, in the model's classes.
  function exactOutcome(model, result, side) {
    const probabilities = new Float64Array(model.outcomeNames.length);
    if (result.kind === "draw") probabilities[6] = 1;
    else {
      const level = { single: 0, gammon: 1, backgammon: 2, mother: 2 }[result.kind];
      probabilities[result.winner === side ? level : level + 3] = 1;
    }
    let equity = 0;
    probabilities.forEach((p, k) => { equity += p * model.outcomePoints[k]; });
    return { probabilities: probabilities, equity: equity, exact: true, bearoff: false };
  }

  // The side to move's chances before it rolls.
  function evaluateBeforeRoll(model, position) {
    const value = model.evaluatePosition(position);
    return { probabilities: value.probabilities, equity: value.equity, exact: false, bearoff: isBearoff(position) };
  }

  // Every legal move valued for the mover at 0 plies: its resulting position with the opponent to roll,
  // read back from the mover's side (docs/export.md: "evaluate its afterstate from the opponent's view and
  // negate the equity"). In Gul Bara the position after a move names who decides next (`next`, docs/rules.md
  // 10.3; nextDecision): inside a cascade the mover itself, whose next stage is valued from its own view, as the
  // engine's Evaluator.evaluate_next does. Best first; ties keep the server's order. With `values` (a rotation's match: what each outcome
  // class is worth to the mover at the score) each move also gets its match-winning chance, `mwc`, the sum of
  // p_k * values_k, and the moves are ranked by it (Bot.choose_at_score at 0 plies).
  function rank(model, moves, values) {
    const ranked = moves.map(function (move, order) {
      const mover = move.position.turn;
      let value;
      if (move.position.result) value = exactOutcome(model, move.position.result, mover);
      else {
        const after = nextDecision(move.position);
        const seen = model.evaluatePosition(after);
        value = after.turn === mover ?
          { probabilities: seen.probabilities, equity: seen.equity, exact: false, bearoff: isBearoff(after) } :
          { probabilities: TapaModel.swapSides(seen.probabilities), equity: -seen.equity, exact: false,
            bearoff: isBearoff(after) };
      }
      if (values) value.mwc = worth(value.probabilities, values);
      return Object.assign({ move: move.move, position: move.position, order: order }, value);
    });
    if (values) ranked.sort((a, b) => b.mwc - a.mwc || a.order - b.order);
    else ranked.sort((a, b) => b.equity - a.equity || a.order - b.order);
    return ranked;
  }

  // -- Gul Bara's cascading doubles (docs/rules.md 10.2-10.3) ---------------------------------------------------
  // The position a move leads to keeps `turn` set to its mover; the server adds `next` (Gul Bara) where the side
  // that decides next may be the mover again (inside a cascade) and sets `turns` and `cascade` for that decision.
  // The position of the next decision: `turn` the side named by `next` (else the mover's opponent), `next` dropped.
  function nextDecision(after) {
    const following = Object.assign({}, after, { turn: after.next || other(after.turn) });
    delete following.next;
    return following;
  }

  // A rule option of `position`: its own rules' override, else its variant's, else `fallback` (the options the
  // registry leaves out at their defaults: plain_double_turns 3, cascade_remainder "lost").
  function ruleOption(position, name, fallback) {
    const own = position.rules || {}, rules = (VARIANTS[position.variant] || {}).rules || {};
    return name in own ? own[name] : name in rules ? rules[name] : fallback;
  }

  // The cascade stage the side to move of `position` plays with `dice`, or null where it plays an ordinary roll:
  // {number, steps, remainder, later: the numbers of the stages after it, rolled: the stage is the roll's own}. A
  // position inside a cascade carries its stage (position.cascade, dice [number, number], no roll); a double rolled
  // once the side has begun plain_double_turns turns (position.turns, counted before this roll) starts one.
  function stageOf(position, dice) {
    if (ruleOption(position, "doubles", "plain") !== "cascade") return null;
    const later = (number) => [1, 2, 3, 4, 5, 6].filter((k) => k > number);
    const stage = position.cascade;
    if (stage) {
      return { number: stage.number, steps: stage.steps, remainder: !!stage.remainder, later: later(stage.number),
        rolled: false };
    }
    const turns = (position.turns || {})[position.turn] || 0;
    if (!dice || dice[0] !== dice[1] || turns < ruleOption(position, "plain_double_turns", 3)) return null;
    return { number: dice[0], steps: 4, remainder: false, later: later(dice[0]), rolled: true };
  }

  // The stage in words: "cascade: 4s now, then 5s, 6s"; "cascade: 3 steps of 4s now (O's unplayed steps), then
  // 5s, 6s"; "cascade: 6s now, the last stage".
  function stageText(stage, mover) {
    const now = (stage.steps < 4 ? stage.steps + " step" + (stage.steps === 1 ? "" : "s") + " of " : "") +
      stage.number + "s now" + (stage.remainder ? " (" + other(mover) + "'s unplayed steps)" : "");
    return (stage.remainder ? "cascade remainder: " : "cascade: ") + now +
      (stage.later.length ? ", then " + stage.later.map((k) => k + "s").join(", ") : ", the last stage");
  }

  // Gul Bara's line under the board: the stage being played, else each side's turns toward its cascades.
  function cascadeInfo() {
    const position = S.position;
    if (!position || ruleOption(position, "doubles", "plain") !== "cascade") return "";
    if (S.stage && S.phase !== "over") return stageText(S.stage, position.turn);
    const plain = ruleOption(position, "plain_double_turns", 3), turns = position.turns || {};
    const side = (s) => s + " " + Math.min(turns[s] || 0, plain) + (turns[s] >= plain ? " (its doubles cascade)" : "");
    return "doubles cascade from a side's turn " + (plain + 1) + " on; turns begun: " + side("X") + ", " + side("O");
  }

  // -- game flow -----------------------------------------------------------------------------------
  const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

  function setPhase(phase) {
    S.phase = phase;
    document.body.dataset.phase = phase;
  }

  function serverPlies() {
    return S.health && S.health.variant === modelVariant(S.variant) ? S.health.bot : null;
  }

  function strength() {
    const plies = Number($("strength").value);
    return plies > 0 && serverPlies() ? plies : 0;
  }

  // The server's fixed bot chosen (heuristic, runner, random), or null.
  function fixedBot() {
    const name = $("strength").value;
    return FIXED_BOTS.includes(name) && serverFixedBots().includes(name) ? name : null;
  }

  function serverFixedBots() {
    return (S.health && S.health.fixed_bots) || [];
  }

  const parallel = () => !!(VARIANTS[S.variant] || {}).parallel;

  async function newMatch() {
    const rotation = ROTATIONS[$("variant").value] ? $("variant").value : null;
    const length = Math.min(Math.max(Math.round(Number($("match-length").value)) || 1, 1), MAX_MATCH_LENGTH);
    S.match = { length: length, score: { X: 0, O: 0 }, lastWinner: null, over: false, rotation: rotation, winner: null };
    if (S.met && S.met.name !== rotation) S.met = null;
    S.games = [];
    S.openNote = null;
    S.openedGame = null;
    await newGame(true);
  }

  // -- the game record (tapa-ai/games, docs/analysis.md) ---------------------------------------------------------
  // The bot in words: "heuristic, server", "2-ply, server", "0-ply, in the page".
  // `plain`: a level by its name and depth only, for a player (play mode); the record keeps the noise seed.
  function botName(plain) {
    const level = activeLevel();
    if (level) {
      return level.name + " level, " + (level.plies > 0 ? level.plies + "-ply, server" : "0-ply, in the page") +
        (level.noise && !plain ? ", noise seed " + level.seed : "");
    }
    if (fixedBot()) return fixedBot() + ", server";
    const plies = strength();
    return plies > 0 ? plies + "-ply, server" : "0-ply, in the page";
  }

  function botLabel() {
    return "the bot (" + botName() + ")";
  }

  function currentRecord() {
    return S.games.length ? S.games[S.games.length - 1] : null;
  }

  function recordEvent(event) {
    const game = currentRecord();
    if (game) game.history.push(event);
  }

  // The record of the given games (default: every game of the match so far), as `tapa-ai analyse` reads it.
  function gameRecord(games) {
    return { format: "tapa-ai/games", version: 1, variant: S.variant, source: "the web board", players: {},
      games: JSON.parse(JSON.stringify(games || S.games)) };
  }

  // A rotation's match as one file (docs/web.md, format tapa-ai/rotation-match): the rotation (as Rotation.to_data
  // writes it: a preset's name, or the list of games of a custom one), its length, score and winner, and each game
  // with its variant, its players, the score before it and its history and result as in tapa-ai/games (one game of
  // it, with "variant": that game's, is a tapa-ai/games record that tapa-ai analyse reads).
  function rotationRecord() {
    return { format: "tapa-ai/rotation-match", version: 1, source: "the web board", rotation: rotationOf().data,
      length: S.match.length, score: { X: S.match.score.X, O: S.match.score.O }, winner: S.match.winner || null,
      players: { X: "human", O: botLabel() }, games: JSON.parse(JSON.stringify(S.games)) };
  }

  function saveGame() {
    if (!S.games.length || !S.games[0].history.length) return;
    const record = S.match.rotation ? rotationRecord() : gameRecord();
    const blob = new Blob([JSON.stringify(record, null, 1) + "\n"], { type: "application/json" });
    const link = document.createElement("a");
    link.href = URL.createObjectURL(blob);
    link.download = S.match.rotation ? (S.match.rotation === CUSTOM_ROTATION ? "rotation" : S.match.rotation) +
      "-match.json" : S.variant + "-game.json";
    document.body.appendChild(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(link.href), 1000);
    if (S.match.rotation) {
      showMessage("Saved " + link.download + ": the " + matchName(S.match.rotation) + " to " + S.match.length + ", " + S.games.length + " game" +
        (S.games.length > 1 ? "s" : "") + ", score X " + S.match.score.X + " – O " + S.match.score.O + ".");
      return;
    }
    showMessage("Saved " + link.download + ": " + S.games.length + " game" + (S.games.length > 1 ? "s" : "") +
      " (tapa-ai analyse " + link.download + " rates it).");
  }

  function analysisAvailable() {
    return !!serverPlies();
  }

  async function analyseGame() {
    const game = currentRecord();
    if (!game || !game.result || S.phase !== "over" || !analysisAvailable()) return;
    const which = S.game;
    $("game-over").hidden = true;
    $("analyse").disabled = true;
    showMessage("Analysing game " + game.number + " on the server…");
    try {
      const answer = await api("analyse", { record: gameRecord([game]), positions: false });
      if (which !== S.game) return;
      S.analysis = answer;
      showMessage("Game " + game.number + " analysed by " + answer.bot + " at " + answer.plies + " ply" +
        (answer.plies === 1 ? "" : "s") + ": see the panel.");
    } catch (error) {
      if (which !== S.game) return;
      showMessage((error instanceof ServerError ? "The server says: " : "Error: ") + error.message, true);
    }
    render();
  }

  // A game's state in the page set afresh for `variant` (a new game, or an opened file's last game).
  function resetGame(variant) {
    $("game-over").hidden = true;
    setPhase("loading");
    S.variant = variant;
    document.body.dataset.variant = S.variant;
    document.body.dataset.mode = S.match.rotation ? "rotation" : "single";
    document.body.dataset.rotation = S.match.rotation || "";
    Object.assign(S, { position: null, dice: null, legal: null, ranked: null, chances: null, plan: null,
      selected: null, hints: null, lastMove: null, moved: null, log: [], cube: 1, cubeOwner: null, analysis: null,
      modelWhy: "", opener: null, opened: "", forced: null, stage: null });
  }

  async function newGame(first) {
    const game = ++S.game;
    resetGame(S.match.rotation ? rotationVariant(S.games.length + 1) : $("variant").value);
    S.noiseSeed = gameNoiseSeed(S.games.length + 1); // this game's noise seed for the levels
    const entry = { number: S.games.length + 1, players: { X: "human", O: botLabel() },
      match_length: S.match.length > 1 ? S.match.length : 0, score: { X: S.match.score.X, O: S.match.score.O },
      history: [], result: null };
    if (S.match.rotation) entry.variant = S.variant;
    S.games.push(entry);
    updateStrengthChoices();
    showMessage("Loading the " + S.variant + " model…");
    render();
    try {
      if (!(await loadGameModels(game))) return;
      const rules = gameRules();
      let opener, dice;
      // A rotation's match: the winner of the last game opens the next, whatever its variant (docs/rules.md 9).
      if (!first && (rules.nextOpener === "winner" || S.match.rotation) && S.match.lastWinner) {
        opener = S.match.lastWinner;
        dice = [die(), die()];
        S.opened = opener + " opens: the winner of the last game";
        addLog(opener + " won the last game and opens this one.");
      } else {
        let x, o;
        do { x = die(); o = die(); } while (x === o);
        opener = x > o ? "X" : "O";
        S.opened = opener + " opens: won the opening roll " + x + "-" + o;
        recordEvent({ action: "opening", dice: [x, o] });
        if (rules.opening === "use-opening-dice") {
          dice = opener === "X" ? [x, o] : [o, x];
          addLog("Opening roll: X " + x + ", O " + o + ": " + opener + " plays " + dice.join("-") + ".");
        } else {
          dice = [die(), die()];
          addLog("Opening roll: X " + x + ", O " + o + ": " + opener + " starts and rolls " + dice.join("-") + ".");
        }
      }
      S.opener = opener;
      if (S.match.rotation) {
        addLog(rotationGameTitle() + ".");
        if (!S.met) addLog("No " + matchName(S.match.rotation) + " equity table from the server (" +
          (S.metWhy || "not loaded") + "): the bot plays as in money play.");
      }
      const request = { variant: S.variant, turn: opener };
      const changed = S.match.rotation ? rotationOf().rules[rotationIndex(S.games.length)] : {};
      if (Object.keys(changed).length) request.rules = changed; // the rotation's game: no cube
      const start = await api("start", request);
      if (game !== S.game) return;
      S.position = start.position;
      await startTurn(game, dice);
    } catch (error) {
      failed(error);
    }
  }

  // The current game's match equity table (a rotation's match) and model, loaded; the level said in the log. False
  // when another game began meanwhile.
  async function loadGameModels(game) {
    if (S.match.rotation && !S.met) {
      try {
        S.met = await loadRotationMet(S.match.rotation);
      } catch (error) { // an older server: the bot plays as in money play, and the panel says so
        if (!(error instanceof ServerError)) throw error;
        S.metWhy = error.message;
      }
      if (game !== S.game) return false;
    }
    let model = null;
    try {
      model = await loadModel(S.variant);
      S.modelWhy = "";
    } catch (error) { // no model for this variant: play on with the server's fixed bots, say so in the panel
      if (!(error instanceof ServerError) || !serverFixedBots().length) throw error;
      S.modelWhy = error.message;
    }
    if (game !== S.game) return false;
    S.model = model;
    updateStrengthChoices();
    const record = currentRecord();
    if (record && record !== S.openedGame) record.players.O = botLabel(); // an opened game keeps its file's players
    if (!model) showMessage("No " + S.variant + " model in this page: the bot is " + botName() + ".");
    const level = activeLevel();
    if (level && !studyMode()) {
      addLog("The bot plays the " + level.name + " level (" + (level.plies > 0 ? level.plies + " plies on the server" :
        "0-ply in the page") + ").");
    } else if (level) {
      addLog("The bot plays the " + level.name + " level: " + (level.plies > 0 ? level.plies + " plies on the server" :
        "0-ply in the page" + (level.noise ? ", noise " + level.noise + " with noise seed " + level.seed : ", no noise")) +
        ".");
    } else if ($("level").value && S.levelWhy) addLog("No " + $("level").value + " level here: " + S.levelWhy + ".");
    return true;
  }

  async function startTurn(game, dice) {
    S.clicks = []; // dice played by each click of this turn, for Undo
    S.turns = (S.turns || 0) + 1;
    document.body.dataset.turns = S.turns; // a new number for every turn: the tests wait on it
    S.dice = dice;
    S.stage = stageOf(S.position, dice); // a Gul Bara cascade's stage (docs/rules.md 10.2), or null
    S.plan = null; S.selected = null; S.hints = null;
    const mover = S.position.turn;
    // The roll in words; a cascade's stage after its first is played with no roll, its dice the stage's number.
    const stage = S.stage, note = stage ? " (" + stageText(stage, mover) + ")" : "";
    const rolled = (who, verb) => (stage && !stage.rolled ? who + " play" + (who === "You" ? "" : "s") + " " +
      dice.join("-") + " with no roll" : who + " " + verb + " " + dice.join("-")) + note;
    const answer = await api("legal_moves", { position: S.position, dice: dice });
    if (game !== S.game) return;
    S.legal = answer.moves;
    S.values = scoreValues(mover); // a rotation's match: what each outcome class is worth to the mover at the score
    S.ranked = S.model ? rank(S.model, S.legal, S.values) : null;
    S.chances = S.model ? evaluateBeforeRoll(S.model, S.position) : null;
    if (S.chances && S.values) S.chances.mwc = worth(S.chances.probabilities, S.values);
    const pass = S.legal.length === 1 && S.legal[0].move === "";
    // An opened file's note (openMatch) leads the message until your first turn's message has shown it.
    const opened = S.openNote ? S.openNote + " " : "";
    if (mover === HUMAN) S.openNote = null;
    const bot = opened + (!S.moved ? "" : S.moved.text ? "The bot played " + S.moved.text + " (your numbering; orange on the board). " :
      "The bot could not move. ");
    if (mover === HUMAN && S.legal.length === 1) {
      // A forced move (one legal move) or a pass: played for you after a pause, as the terminal does, and said.
      const only = S.legal[0], turn = S.turns;
      setPhase("busy");
      S.forced = pass ? "" : only.move;
      showMessage(bot + rolled("You", "rolled") + (pass ? ": no legal move, you pass." : ": forced: " + only.move +
        " (your only legal move), played for you."));
      render();
      await sleep(S.delay); // the bot's pause (?delay=, default 700 ms): long enough to see the roll and the note
      if (game === S.game && S.turns === turn) finishMove(game, only.move, only.position, HUMAN);
      return;
    }
    const forced = S.forced ? "Forced: " + S.forced + " (your only legal move), played for you. " : "";
    S.forced = null;
    if (mover === HUMAN) {
      S.plan = new TapaSteps.Planner(S.position, dice, S.legal);
      setPhase("human");
      showMessage(bot + rolled("You", "rolled") + ". Click a checker, then a green point (or type the move).");
      render();
    } else {
      setPhase("bot");
      showMessage(opened + forced + rolled("The bot", "rolled") + (pass ? ": no legal move, it passes." : "."));
      render();
      const move = await chooseMove(game);
      if (game !== S.game) return;
      await sleep(S.delay);
      if (game !== S.game) return;
      finishMove(game, move.move, move.position, BOT);
    }
  }

  // The bot's move: the page's 0-ply choice, or the server's n-ply best_move; with a level, the level's move. A hint
  // (`hint` true) is the best move at the level's depth, without noise.
  async function chooseMove(game, hint) {
    const level = activeLevel();
    if (level && level.plies > 0) {
      const request = { position: S.position, dice: S.dice };
      if (hint) request.plies = level.plies;
      else Object.assign(request, { level: level.name, noise_seed: level.seed });
      if (rotationContext()) request.rotation_match = rotationContext();
      const answer = await api("best_move", request);
      return { move: answer.move, position: answer.position, equity: answer.equity, plies: answer.plies,
        mwc: answer.match_winning_chance, level: hint ? null : level.name };
    }
    if (level) {
      if (hint) return Object.assign({ plies: 0 }, S.ranked[0]);
      return Object.assign({ plies: 0, level: level.name }, levelChoice(S.model, S.position, S.legal, S.ranked,
        S.values, level));
    }
    const fixed = fixedBot();
    if (fixed) {
      const answer = await api("bot_move", { bot: fixed, position: S.position, dice: S.dice,
        seed: Math.floor(botRandom() * 2147483647) });
      return { move: answer.move, position: answer.position, bot: fixed };
    }
    const plies = strength();
    if (plies > 0) {
      const request = { position: S.position, dice: S.dice, plies: plies };
      if (rotationContext()) request.rotation_match = rotationContext(); // ranked by the match-winning chance at the score
      const answer = await api("best_move", request);
      return { move: answer.move, position: answer.position, equity: answer.equity, plies: answer.plies,
        mwc: answer.match_winning_chance };
    }
    return Object.assign({ plies: 0 }, S.ranked[0]);
  }

  // A decision played (a roll's move, or a Gul Bara cascade's stage): recorded, logged and drawn; then the next
  // decision: the game's end, the side the server names next (`next`, docs/rules.md 10.3: the mover itself inside
  // its cascade, which plays its next stage with no roll; the opponent's remainder stage, with no roll), else the
  // opponent, who rolls.
  function finishMove(game, text, after, side) {
    if (game !== S.game) return;
    recordEvent({ action: "move", side: side, dice: S.dice.slice(), move: text }); // a stage: dice [k, k]
    // The bot's move in your numbering too, as in the terminal; on the board until your next action.
    const yours = side === BOT && text ? TapaSteps.otherView(text, parallel()) : "";
    const forced = side === HUMAN && text && S.legal && S.legal.length === 1 ? " (forced: your only legal move)" : "";
    const stage = S.stage, played = TapaSteps.stepCount(text);
    addLog(side + " " + S.dice.join("-") + (stage ? " (" + (stage.remainder ? "cascade remainder" : "cascade") +
      ", " + stage.number + "s)" : "") + ": " + (text === "" ? "no move (pass)" : text) +
      (yours ? " (on your board: " + yours + ")" : "") + forced);
    // The bot's stages in a row (a cascade) are marked together: the earlier ones stay until your next action.
    const earlier = side === BOT && S.moved && S.moved.side === BOT ? S.moved : null;
    const moved = TapaSteps.movedPoints(text), ids = (points) => new Set(points.map((p) => pointToId(p === TapaSteps.BAR ||
      p === TapaSteps.OFF ? p : side === "X" ? p : TapaSteps.otherPoint(p, parallel()))));
    S.moved = side !== BOT ? null : !earlier ? { side: side, text: yours, from: ids(moved.from), to: ids(moved.to) } :
      { side: side, text: [earlier.text, yours].filter(Boolean).join(", then "),
        from: new Set([...earlier.from, ...ids(moved.from)]), to: new Set([...earlier.to, ...ids(moved.to)]) };
    S.lastMove = earlier && S.lastMove ? S.lastMove : new Set();
    for (const step of text.split(/\s+/).filter(Boolean)) {
      for (const word of step.split("/")) {
        if (/^\d+$/.test(word)) S.lastMove.add(side === "X" ? Number(word) : TapaSteps.otherPoint(Number(word), parallel()));
      }
    }
    S.plan = null; S.selected = null; S.hints = null;
    if (after.result) {
      S.position = after;
      gameOver(after.result);
      return;
    }
    S.position = nextDecision(after); // turns and cascade as the server set them for the next decision
    const next = S.position.turn, following = S.position.cascade;
    if (stage && played < stage.steps) {
      addLog(side + " played " + played + " of the " + stage.steps + " steps of " + stage.number + "s: the " +
        (stage.remainder ? "remainder" : "cascade") + " stops" + (following && following.remainder && next !== side ?
          "; " + next + " plays the unplayed steps before its roll." : ", the rest is lost."));
    }
    setPhase("busy");
    // A cascade's next stage (or a remainder stage) is played with the stage's number and no roll.
    startTurn(game, following ? [following.number, following.number] : [die(), die()]).catch(failed);
  }

  function gameOver(result) {
    setPhase("over");
    const record = currentRecord();
    if (record) record.result = { winner: result.winner, kind: result.kind, points: result.points };
    if (S.match.rotation && result.kind === "draw") { // docs/rules.md 9: nothing scored, the rotation moves on
      addLog("A draw in a " + matchName(S.match.rotation) + " scores nothing; the next game opens with an opening " +
        "roll.");
    }
    const match = S.match;
    let title, text;
    if (result.kind === "draw") {
      title = "A draw";
      text = "Both mothers are pinned: nobody scores.";
      match.lastWinner = null;
    } else {
      const points = result.points * (S.cube || 1); // the cube's value: 1 but in a game opened from a file
      match.score[result.winner] += points;
      match.lastWinner = result.winner;
      const who = result.winner === HUMAN ? "You win" : "The bot wins";
      const kind = { single: "a single game", gammon: "a gammon", backgammon: "a backgammon",
        mother: result.winner === HUMAN ? "by pinning the bot's mother" : "by pinning your mother" }[result.kind];
      title = who + " " + kind;
      text = (result.winner === HUMAN ? "X" : "O") + " scores " + points + (points === 1 ? " point." : " points.");
    }
    match.over = match.score.X >= match.length || match.score.O >= match.length;
    if (match.over) match.winner = match.score.X >= match.length ? "X" : "O";
    if (match.rotation) {
      const named = matchName(match.rotation);
      text += " Score: X " + match.score.X + ", O " + match.score.O + " (" + named + " to " + match.length + ").";
      if (match.over) {
        text += match.winner === HUMAN ? " You win the " + named + "!" : " The bot wins the " + named + ".";
        addLog("The " + named + " is over: " + (match.winner === HUMAN ? "you win" : "the bot wins") + " " +
          Math.max(match.score.X, match.score.O) + "–" + Math.min(match.score.X, match.score.O) + ".");
      } else {
        text += " Next: " + nextGameText() + ".";
      }
    } else if (match.length > 1) {
      text += " Score: X " + match.score.X + ", O " + match.score.O + " (match to " + match.length + ").";
      if (match.over) text += match.score.X > match.score.O ? " You win the match!" : " The bot wins the match.";
    }
    addLog("Game over: " + title.toLowerCase() + ".");
    $("game-over-title").textContent = title;
    $("game-over-text").textContent = text;
    $("next-game").textContent = match.over ? (match.rotation ? "New " + matchName(match.rotation) : "New game") :
      match.rotation ? "Next game: " + titleOf(rotationVariant(S.games.length + 1)) : "Next game";
    $("analyse-over").disabled = !analysisAvailable();
    $("analyse-over").title = analysisAvailable() ? "" : analyseHelp();
    $("analyse-over-why").textContent = analysisAvailable() ? "" : analyseHelp();
    S.summary = title;
    $("game-over").hidden = false;
    showMessage(title + ". " + text);
    render();
  }

  function failed(error) {
    setPhase("error");
    showMessage((error instanceof ServerError ? "The server says: " : error instanceof PageError ? "" : "Error: ") +
      error.message, true);
    if (!(error instanceof ServerError) && !(error instanceof PageError)) console.error(error);
    render();
  }

  // -- your moves ----------------------------------------------------------------------------------
  const idToPoint = (id) => (id === "bar" ? TapaSteps.BAR : id === "off" ? TapaSteps.OFF : Number(id));
  const pointToId = (p) => (p === TapaSteps.BAR ? "bar" : p === TapaSteps.OFF ? "off" : p);

  function onBoardClick(event) {
    const hit = event.target.closest("[data-point]");
    if (!hit || S.phase !== "human" || !S.plan) return;
    S.moved = null; // your next action: the bot's move is no longer marked
    const point = idToPoint(hit.dataset.point);
    const options = S.plan.options();
    const left = S.plan.current().remaining.join(", ");
    if (S.selected !== null) {
      const path = S.plan.destinations(S.selected).get(point);
      if (path) {
        for (const step of path) S.plan.play(step.from, step.to); // one die after another
        S.clicks.push(path.length);
        S.selected = null;
        S.hints = null;
        const done = S.plan.complete();
        showMessage(done ? "Move " + (S.plan.text() || "(pass)") + " is complete: press Done, or Undo." :
          "Played " + S.plan.text() + "; dice left: " + S.plan.current().remaining.join(", ") + ".");
      } else if (point === S.selected) {
        S.selected = null;
        showMessage("Choose a checker.");
      } else if (options.some((o) => o.from === point)) {
        S.selected = point;
        showMessage("Now click a green point.");
      } else {
        showMessage(TapaSteps.pointText(S.selected) + "/" + TapaSteps.pointText(point) +
          " is not a legal step now (dice left: " + left + ").", true);
      }
    } else if (options.some((o) => o.from === point)) {
      S.selected = point;
      showMessage("Now click a green point.");
    } else if (options.length) {
      showMessage("No checker on " + TapaSteps.pointText(point) + " can move now (dice left: " + left + ").", true);
    }
    render();
  }

  async function submitMove(text) {
    if (S.phase !== "human") return;
    S.moved = null;
    const game = S.game;
    setPhase("busy");
    try {
      const answer = await api("apply", { position: S.position, dice: S.dice, move: text });
      if (game !== S.game) return;
      setPhase("human");
      $("typed").value = "";
      finishMove(game, answer.move, answer.position, HUMAN);
    } catch (error) {
      if (game !== S.game) return;
      setPhase("human");
      if (error instanceof ServerError) showMessage("Move " + JSON.stringify(text) + " refused: " + error.message, true);
      else failed(error);
    }
  }

  async function hint() {
    if (S.phase !== "human") return;
    S.moved = null;
    const game = S.game;
    try {
      const move = await chooseMove(game, true);
      if (game !== S.game) return;
      S.hints = new Set();
      for (const step of move.move.split(/\s+/).filter(Boolean)) {
        for (const word of step.split("/")) if (/^\d+$/.test(word)) S.hints.add(Number(word));
      }
      const value = move.mwc !== undefined && move.mwc !== null ? " (match-winning chance " + percent(move.mwc) + ")" :
        move.equity === undefined ? "" : " (equity " + signed(move.equity) + ")";
      const by = move.bot ? move.bot + " (server)" : move.plies + "-ply" + (move.plies ? " (server)" : " (this page's network)");
      showMessage("Hint, " + by + ": " + (move.move || "no move (pass)") + value + ".");
      render();
    } catch (error) {
      failed(error);
    }
  }

  async function botPlaysForYou() {
    if (S.phase !== "human") return;
    S.moved = null;
    const game = S.game;
    try {
      const move = await chooseMove(game);
      if (game === S.game && S.phase === "human") finishMove(game, move.move, move.position, HUMAN);
    } catch (error) {
      failed(error);
    }
  }

  // -- Open: a match file (GNU Backgammon's SGF, the .mat text) or a saved record, read by the server ---------------
  // The page reads the file's text and sends it to the server's read_match (tapa_ai/engine/match_file_command.py):
  // the project's one reader of match files and records replays it through the rules and answers the games as this
  // page's own record (what Save game writes) and where the match stands. The page then shows the match: the
  // variant or rotation, the length, the score, S.games the file's games; a finished last game is followed by the
  // next game at that score (a finished match is said), an unfinished one goes on from its last position.
  const MAX_REQUEST_BYTES = 65536; // the server's limit on a request (tapa_ai/engine/protocol.py MAX_REQUEST_BYTES)
  const SGF_SKIPPED = new Set(["A", "DA", "MR", "GS", "LU", "C"]); // what the reader skips: gnubg's analysis, comments

  // An SGF text without the properties the reader skips (gnubg's analysis takes 99% of an analysed match's file):
  // sent when the whole text is over the server's limit. Values are read whole (escapes `\]` included), so nothing
  // inside one is taken for a property.
  function stripSgfAnalysis(text) {
    const token = /(\[(?:[^\]\\]|\\[\s\S])*\])|([A-Za-z]+)|([\s\S])/g;
    let out = "", dropping = false;
    for (const m of text.matchAll(token)) {
      if (m[1] !== undefined) { if (!dropping) out += m[1]; }
      else if (m[2] !== undefined) { dropping = SGF_SKIPPED.has(m[2]); if (!dropping) out += m[2]; }
      else if (!/\s/.test(m[3])) { dropping = false; out += m[3]; }
      else if (!dropping) out += m[3];
    }
    return out;
  }

  // A game under way that opening a file would replace: begun (a move played) and not over.
  function gameInProgress() {
    const record = currentRecord();
    return !!record && !record.result && record.history.some((e) => e.action === "move") &&
      !["over", "stopped", "error"].includes(S.phase);
  }

  // What the page cannot play of the server's answer, in words (null: it can), and the rotation's key.
  async function openedRotation(answer) {
    if (answer.rotation === null || answer.rotation === undefined) {
      return VARIANTS[answer.variant] ? { key: null } : { why: "the board has no variant " + answer.variant };
    }
    const data = answer.rotation;
    if (typeof data === "string" && ROTATIONS[data]) return { key: data };
    if (Array.isArray(data) && data.every((g) => typeof g === "string")) {
      const preset = Object.keys(ROTATIONS).find((name) => name !== CUSTOM_ROTATION &&
        ROTATIONS[name].games.join(",") === data.join(","));
      if (preset) return { key: preset };
      const found = await loadRotation(data.join(","));
      return found.why ? { why: "its rotation " + data.join(", ") + " cannot be played here: " + found.why } : found;
    }
    return { why: "its rotation " + JSON.stringify(data).slice(0, 80) + " is not one the board plays" };
  }

  async function openFile(file) {
    if (!file) return;
    let text;
    try {
      text = await file.text();
    } catch (error) {
      showMessage("Cannot open " + file.name + ": the browser could not read it (" + error.message + ").", true);
      return;
    }
    const size = (body) => new Blob([JSON.stringify(body)]).size;
    let body = { name: file.name, text: text };
    if (size(body) > MAX_REQUEST_BYTES && /^\ufeff?\s*\(/.test(text)) body.text = stripSgfAnalysis(text);
    if (size(body) > MAX_REQUEST_BYTES) {
      showMessage("Cannot open " + file.name + ": it is " + size(body).toLocaleString("en") + " bytes to send, more " +
        "than the " + MAX_REQUEST_BYTES.toLocaleString("en") + " the server reads in one request.", true);
      return;
    }
    showMessage("Opening " + file.name + "…");
    let answer, rotation;
    try {
      answer = await api("read_match", body);
    } catch (error) {
      showMessage("Cannot open " + file.name + ": " + (error instanceof ServerError ? "the server says: " : "") +
        error.message, true);
      return;
    }
    if (gameInProgress() && !window.confirm("Replace the game in progress by the match of " + file.name +
      "? (Save game keeps it first.)")) {
      showMessage("Not opened: " + file.name + " would replace the game in progress, which goes on.");
      return;
    }
    try { // after the question: a custom rotation replaces the page's "custom" entry
      rotation = await openedRotation(answer);
    } catch (error) {
      rotation = { why: error.message };
    }
    if (rotation.why) {
      showMessage("Cannot open " + file.name + ": " + rotation.why + ".", true);
      return;
    }
    try {
      await openMatch(answer, rotation.key, file.name);
    } catch (error) {
      failed(error);
    }
  }

  // The opened match in words: "Opened match3.sgf: backgammon match to 3, 2 games, score X 1 – O 2."
  function openedText(answer, name) {
    const games = answer.games + " game" + (answer.games === 1 ? "" : "s");
    const what = S.match.rotation ? matchName(S.match.rotation) + " to " + answer.length :
      answer.length ? answer.variant + " match to " + answer.length : answer.variant + " games (no match length)";
    return "Opened " + name + ": " + what + ", " + games + ", score X " + answer.score.X + " – O " +
      answer.score.O + ".";
  }

  async function openMatch(answer, rotation, name) {
    const game = ++S.game;
    const last = answer.game, length = Math.min(Math.max(answer.length, 1), MAX_MATCH_LENGTH);
    const money = !answer.length; // a money session or single games: the page plays single games
    $("variant").value = rotation || answer.variant;
    setMatchLength(length);
    labelLengths();
    S.match = { length: length, score: money ? { X: 0, O: 0 } : { X: answer.score.X, O: answer.score.O },
      lastWinner: last.over && last.result ? last.result.winner : null, over: answer.match_over,
      rotation: rotation, winner: answer.winner };
    S.met = null; // the rotation's table, loaded again (a "custom" rotation may be another list of games)
    S.games = JSON.parse(JSON.stringify(answer.record.games));
    S.openedGame = null;
    let note = openedText(answer, name);
    if (last.over && answer.next && !money) { // the next game at that score, as tapa-ai play --load goes on
      note += " Game " + answer.next.number + " begins" + (answer.next.crawford ? " (the Crawford game)" : "") + ".";
      const started = newGame(false);
      if (answer.next.crawford) currentRecord().crawford = true;
      S.openNote = note;
      addLog(note);
      await started;
      return;
    }
    resetGame(last.variant);
    S.noiseSeed = gameNoiseSeed(S.games.length);
    S.openedGame = currentRecord();
    S.position = last.position;
    S.cube = last.cube.value;
    S.cubeOwner = last.cube.owner;
    updateStrengthChoices();
    if (last.over) {
      note += answer.match_over ? " The match is over: " + answer.winner + " won it " +
        Math.max(answer.score.X, answer.score.O) + "–" + Math.min(answer.score.X, answer.score.O) +
        ". New game starts a new match." : " Its games are single games: New game starts a new one.";
      S.match.over = true;
      S.summary = last.result && last.result.winner ? last.result.winner + " won game " + last.number + " of the file (" +
        last.result.kind + ")" : "game " + last.number + " of the file";
      addLog(note);
      setPhase("over");
      showMessage(note);
      render();
      return;
    }
    const where = last.phase === "move" ? last.turn + " to move with " + last.dice.join("-") :
      last.phase === "roll" ? last.turn + " to roll" : "";
    const cube = gameRules().cube && last.cube.value > 1 ? ", cube " + last.cube.value +
      (last.cube.owner ? " owned by " + last.cube.owner : "") : "";
    const crawford = last.crawford ? ", the Crawford game" : "";
    if (!where) { // a double waits for its answer: the page plays no cube
      note += " Game " + last.number + " stops here: " + last.turn + " is to take or pass a double, and the board " +
        "does not play the cube. New game starts a new match.";
      addLog(note);
      setPhase("stopped");
      showMessage(note);
      render();
      return;
    }
    note += " Game " + last.number + " goes on from its last position (" + where + cube + crawford + ").";
    addLog(note);
    S.openNote = note;
    showMessage(note);
    render();
    if (!(await loadGameModels(game))) return;
    if (S.match.rotation) addLog(rotationGameTitle() + ".");
    await startTurn(game, last.phase === "move" ? last.dice.slice() : [die(), die()]);
  }

  // -- drawing -------------------------------------------------------------------------------------
  const percent = (p) => (100 * p).toFixed(1) + "%";
  const signed = (x) => (x >= 0 ? "+" : "") + x.toFixed(3);

  function showMessage(text, error) {
    const box = $("message");
    box.textContent = text;
    box.classList.toggle("error", !!error);
  }

  function addLog(text) {
    S.log.push(text);
    const item = document.createElement("li");
    item.textContent = text;
    $("log").appendChild(item);
    $("log").scrollTop = $("log").scrollHeight;
  }

  function pips(position, side) {
    let total = 25 * ((position.bar || {})[side] || 0);
    position.points.forEach(function (stack, i) {
      // O's own number of points[i]: 24 - i, or in the running games i - 11 (i >= 12) and i + 13 (docs/rules.md 8.1).
      const own = side === "X" ? i + 1 : parallel() ? (i >= 12 ? i - 11 : i + 13) : 24 - i;
      for (const letter of stack) if (letter === side) total += own;
    });
    return total;
  }

  // Which bots can play this variant: the page's network (when it loaded), the server's model searching n plies
  // (for its own variant), the server's fixed bots (any variant). A choice that cannot play falls back to the
  // page's network, else the heuristic.
  function updateStrengthChoices() {
    const available = !!serverPlies(), fixed = serverFixedBots(), modelMissing = S.modelWhy && !S.model;
    for (const option of $("strength").options) {
      if (option.value === "0") {
        option.disabled = !!modelMissing;
        option.title = modelMissing ? "no " + S.variant + " model: " + S.modelWhy : "the exported network, in this page";
      } else if (FIXED_BOTS.includes(option.value)) {
        option.disabled = !fixed.includes(option.value);
        option.title = option.disabled ? "this server has no fixed bots (an older tapa-ai serve)" :
          "the server's " + option.value + " bot (no model needed)";
      } else {
        option.disabled = !available;
        option.title = available ? "the server's model searches " + option.value + " plies" : modelHelp("an n-ply");
      }
    }
    const chosen = $("strength").selectedOptions[0];
    if (!chosen || chosen.disabled) {
      $("strength").value = !modelMissing ? "0" : fixed.includes("heuristic") ? "heuristic" : "0";
    }
    updateLevelChoices();
  }

  // -- levels of play (docs/levels.md) --------------------------------------------------------------
  // The calibrated levels of the model playing this game (its metadata's: name -> {plies, noise}), or null.
  function modelLevels() {
    const levels = S.model && S.model.metadata && S.model.metadata.levels;
    return levels && LEVEL_NAMES.every((name) => levels[name]) ? levels : null;
  }

  // Why no level can be played in this game ("" when one can, or while the model loads).
  function noLevelsWhy() {
    if (!S.model) return S.modelWhy ? "no " + S.variant + " model in this page" : "";
    if (modelLevels()) return "";
    const net = modelVariant(S.variant);
    return net + "'s model has no calibrated levels (docs/levels.md)";
  }

  // Why a level deeper than 0 ply cannot play here ("" when the server can search it).
  function deepLevelWhy() {
    return serverPlies() ? "" : "world-class searches 2 plies on the server, which has no " + modelVariant(S.variant) +
      " model: " + modelHelp("the world-class").replace(/ bot$/, " level");
  }

  // The level the bot plays: {name, plies, noise, seed} (seed: this game's noise seed), or null (none chosen, or the
  // model has no levels). World-class without the server's model: expert plays instead (the note says so).
  function activeLevel() {
    const levels = modelLevels();
    let name = $("level").value;
    if (!name || !levels || !levels[name]) return null;
    if (levels[name].plies > 0 && deepLevelWhy()) name = "expert";
    const level = levels[name];
    return { name: name, plies: level.plies, noise: level.noise, seed: S.noiseSeed === undefined ? gameNoiseSeed(1) : S.noiseSeed };
  }

  // The Level list and its one-line note: disabled with the reason where the model has no levels; world-class
  // disabled with the reason where the server has no model of the variant. A level sets the bot: the Bot list is
  // disabled while one plays.
  function updateLevelChoices() {
    const select = $("level"), why = noLevelsWhy(), deep = deepLevelWhy();
    S.levelWhy = why;
    select.disabled = !!why;
    select.title = why ? "no levels: " + why : "a level of play (docs/levels.md): the network with noise on its move " +
      "values, or searching 2 plies";
    const worldClass = select.querySelector("option[value='world-class']");
    worldClass.disabled = !!deep;
    worldClass.title = deep || "the server's model searching 2 plies, no noise";
    const level = activeLevel(), chosen = select.value;
    $("strength").disabled = !!level;
    $("strength").title = level ? "the " + level.name + " level sets the bot: choose Level none to choose the bot here" :
      "";
    $("strength-why").textContent = level ? "set by the level" : "";
    $("strength-why").title = $("strength").title;
    let note = "", details = "";
    if (why) note = "No levels: " + why + ".";
    else if (level && level.name !== chosen) note = deep + "; expert plays.";
    else if (level && level.plies > 0) note = level.name + ": " + level.plies + " plies on the server.";
    else if (level) {
      note = level.name + ": 0-ply in the page.";
      details = level.name + ": 0-ply in the page, " + (level.noise ? "noise " + level.noise + ", noise seed " +
        level.seed + " (game " + S.games.length + ")" : "no noise") + ".";
    }
    // The level's internals (its noise, the game's noise seed) in study mode; in play mode its name and depth, the
    // internals in the tooltip.
    $("level-note").textContent = details && studyMode() ? details : note;
    $("level-note").title = details;
    $("level-note").dataset.seed = level ? String(level.seed) : "";
  }

  // The move a 0-ply level plays (docs/levels.md): the network's value of each move plus the level's noise (a
  // deterministic draw from the level's seed and the position after the move), the best taken: levels.js's
  // levelMove, the Python bot's `net:<variant>,level=NAME,noise_seed=SEED,nobearoff` choice. At a rotation's match score
  // (`values`: what each outcome class is worth to the mover) the values are the match-winning chances and the noise
  // is in the match-winning chance of a point there, half a single win's value minus a single loss's, as the Python
  // bot's choose_at_score adds it. `ranked`: rank(model, moves, values); the answer is one of its entries.
  function levelChoice(model, position, moves, ranked, values, level) {
    let index = -1;
    if (!values) {
      index = TapaLevels.levelMove(model, position, moves, level.name, level.seed);
    } else {
      const scale = 0.5 * (values[0] - values[3]); // WIN_SINGLE, LOSE_SINGLE
      let best = -Infinity;
      for (const m of ranked.slice().sort((a, b) => a.order - b.order)) { // ties: the first, as levelMove
        let value = m.mwc;
        if (level.noise) value += level.noise * scale * TapaLevels.noiseDraw(TapaLevels.afterstateKey(m.position), level.seed);
        if (value > best) { best = value; index = m.order; }
      }
    }
    return ranked.find((m) => m.order === index);
  }

  // How to get a server model for this variant, for the greyed-out choices.
  function modelHelp(what) {
    return "start tapa-ai serve --bot net:checkpoints/" + modelVariant(S.variant) + ".pt for " + what + " " + S.variant +
      " bot";
  }

  function render() {
    const position = S.position;
    $("log").replaceChildren(...S.log.map((t) => Object.assign(document.createElement("li"), { textContent: t })));
    if (!position) {
      $("board").replaceChildren();
      return;
    }
    const rules = gameRules();
    const shown = S.plan ? S.plan.position(position) : position;
    const view = { position: shown, dice: S.phase === "over" ? null : S.dice, cube: rules.cube ? S.cube : null,
      steps: S.stage ? S.stage.steps : 4,
      mother: rules.mothers, parallel: !!rules.parallel, last: S.lastMove, moved: S.moved, hints: S.hints, selected: S.selected === null ? null : pointToId(S.selected) };
    if (S.plan) {
      view.diceLeft = S.plan.current().remaining;
      const options = S.phase === "human" ? S.plan.options() : [];
      view.sources = new Set(options.map((o) => pointToId(o.from)));
      if (S.selected !== null) view.targets = new Set(Array.from(S.plan.destinations(S.selected).keys()).map(pointToId));
    }
    TapaBoard.draw($("board"), view);
    document.body.dataset.turn = position.turn;

    for (const side of ["X", "O"]) {
      $("player-" + side).textContent = (side === HUMAN ? "X (you)" : "O (bot)") + " · " + pips(shown, side) +
        " pips · " + shown.off[side] + " off" + (position.turn === side && S.phase !== "over" ? " · to move" : "");
    }
    const score = S.match.rotation ? matchName(S.match.rotation) + " to " + S.match.length + ": X " + S.match.score.X + " – O " +
      S.match.score.O : S.match.length > 1 ? "match to " + S.match.length + ": X " + S.match.score.X + " – O " +
      S.match.score.O : "single game";
    $("score").textContent = score + (rules.cube ? " · cube " + S.cube + (S.cubeOwner ? " (" + S.cubeOwner + " owns it)" : "") : "");
    renderRotation();
    $("dice-text").textContent = !S.dice || S.phase === "over" ? "" : S.stage && !S.stage.rolled ? position.turn +
      " plays " + S.dice.join("-") + " (no roll)" : position.turn + " rolled " + S.dice.join("-");
    const cascade = cascadeInfo();
    $("cascade-info").textContent = cascade;
    $("cascade-info").hidden = !cascade;
    $("cascade-info").dataset.stage = S.stage && S.phase !== "over" ? String(S.stage.number) : "";

    const human = S.phase === "human";
    $("undo").disabled = !human || !S.plan || S.plan.history.length === 1;
    $("done").disabled = !human || !S.plan || !S.plan.complete() || S.legal.length === 1 && S.legal[0].move === "";
    for (const id of ["typed", "play-typed", "hint", "bot-plays"]) $(id).disabled = !human;
    $("save-game").disabled = !S.games.length || !S.games[0].history.length;
    const record = currentRecord();
    $("analyse").disabled = S.phase !== "over" || !record || !record.result || !analysisAvailable();
    $("analyse").title = analysisAvailable() ? "each move's error and each roll's luck, by the server's model" :
      analyseHelp();
    $("analyse-why").textContent = !analysisAvailable() ? analyseHelp() : S.phase !== "over" ? "once the game is over" : "";
    renderAnalysis();
    renderGameAnalysis();
  }

  // -- a rotation's match (Tavli, Tabla) ----------------------------------------------------------------
  function rotationGameTitle() {
    return "Game " + S.games.length + " of the " + matchName(S.match.rotation) + ": " + titleOf(S.variant);
  }

  // The current game's rules as the page plays them: its variant's, with no cube in a rotation's match.
  function gameRules() {
    const rules = VARIANTS[S.variant];
    return S.match.rotation && rules ? Object.assign({}, rules, { cube: false }) : rules;
  }

  // The next game of the rotation and who opens it (the winner of this game; an opening roll after a draw).
  function nextGameText() {
    const number = S.games.length + 1, name = titleOf(rotationVariant(number));
    const record = currentRecord(), result = record && record.result;
    const opener = !result ? "opened by the winner of this game" : result.kind === "draw" ?
      "opened by an opening roll (this game was drawn)" : "opened by " + (result.winner === HUMAN ? "X (you)" : "O (the bot)");
    return "game " + number + ", " + name + ", " + opener;
  }

  function renderRotation() {
    const box = $("rotation-info");
    box.hidden = !S.match.rotation;
    if (!S.match.rotation) return;
    const match = S.match;
    let text = rotationGameTitle() + "." + (S.opened ? " " + S.opened + "." : "");
    if (match.over) {
      text += " The match is over: " + (match.winner === HUMAN ? "you win" : "the bot wins") + " " +
        match.score[match.winner] + "–" + match.score[other(match.winner)] + ".";
    } else {
      text += " Next: " + nextGameText() + ".";
    }
    box.textContent = text;
    box.dataset.game = String(S.games.length);
    box.dataset.variant = S.variant;
  }

  function analyseHelp() {
    return "start tapa-ai serve --bot net:" + modelVariant(S.variant) + "@1ply to analyse " + S.variant + " games";
  }

  // The server's analysis of a finished game: the players' totals, then every move (docs/web.md).
  function renderGameAnalysis() {
    const answer = S.analysis, section = $("game-analysis");
    section.hidden = !answer;
    if (!answer) return;
    const players = $("analysis-players").tBodies[0], moves = $("analysis-moves").tBodies[0];
    players.replaceChildren();
    moves.replaceChildren();
    const cells = function (row, texts, numeric) {
      texts.forEach(function (text, c) {
        const cell = row.insertCell();
        cell.textContent = text;
        if (numeric(c)) cell.className = "num";
      });
    };
    for (const p of answer.players) {
      cells(players.insertRow(), [p.player, String(p.moves), p.error_rate_mp.toFixed(1), String(p.errors),
        String(p.blunders), signed(p.luck)], (c) => c > 0);
    }
    const marks = { "": "", error: "?", blunder: "??" };
    for (const turn of answer.games[0].turns) {
      const row = moves.insertRow();
      if (turn.action !== "move") { // a cube action (games of tapa-ai play): rated by cubeful equities
        if (turn.mark) row.className = turn.mark;
        cells(row, [String(turn.index), turn.side, "", turn.action, !turn.rated ? "(not rated)" :
          turn.best === turn.action ? "=" : turn.best.replace("_", " "), turn.rated ? turn.error_mp.toFixed(1) : "",
          "", turn.rated ? marks[turn.mark] : ""], (c) => c === 5);
        continue;
      }
      if (turn.mark) row.className = turn.mark;
      cells(row, [String(turn.index), turn.side, turn.dice.join("-"), turn.move || "(no move)",
        turn.forced ? "(forced)" : turn.best === turn.move ? "=" : turn.best || "(no move)",
        turn.forced ? "-" : turn.error_mp.toFixed(1), signed(turn.luck), marks[turn.mark]], (c) => c >= 5);
    }
    $("game-analysis-note").textContent = "Game " + answer.games[0].number + ", analysed by " + answer.bot + " at " +
      answer.plies + " ply" + (answer.plies === 1 ? "" : "s") + " on the server: error, the millipoints (mp) a move " +
      "loses against the best move (= the move played is the best; ? over " + answer.thresholds.error_mp +
      " mp, ?? over " + answer.thresholds.blunder_mp + " mp); luck, the points the roll gained over the average " +
      "roll. Cubeless equities (docs/analysis.md).";
  }

  function renderAnalysis() {
    const chances = S.chances, model = S.model;
    const bar = $("chances"), body = $("moves").tBodies[0];
    bar.replaceChildren();
    body.replaceChildren();
    const empty = !chances || !model || S.phase === "over";
    // Play mode: no best move, equity or chances while the game goes on, unless asked for this turn.
    const hide = !empty && !studyMode() && S.revealed !== S.turns;
    $("chances").hidden = $("moves").hidden = empty || hide; // no empty bar and table: at the end, one line instead
    $("reveal").hidden = !hide;
    if (hide) {
      $("chances-label").textContent = "";
      $("chances-legend").textContent = "";
      $("analysis-side").textContent = "";
      $("analysis-note").textContent = "Play mode: the best move, the equities and the chances stay hidden during " +
        "the game. Show the analysis of this turn asks for them, the Mode list's study shows them all along" +
        (analysisAvailable() ? ", and Analyse rates the whole game once it is over." : ".");
      $("model-info").textContent = modelInfo(model);
      $("measure").disabled = false;
      return;
    }
    if (empty) {
      $("chances-label").textContent = "";
      $("chances-legend").textContent = "";
      $("analysis-side").textContent = "";
      // Without a model for the variant: why the panel is empty, and what plays instead.
      const noModel = !S.model && S.modelWhy ? "No chances or move values here: " + S.modelWhy + ". The bot is " +
        botName() + "." : "";
      $("analysis-note").textContent = S.phase !== "over" ? noModel : "Game over: " + S.summary.toLowerCase() + "." +
        (analysisAvailable() ? " Analyse the game for each move's error and each roll's luck." : "") +
        (noModel ? " " + noModel : "");
      if (noModel) $("model-info").textContent = "Model: none for " + S.variant + ".";
      $("measure").disabled = !S.model;
      return;
    }
    $("measure").disabled = false;
    const mover = S.position.turn, p = chances.probabilities, top = VARIANTS[S.variant].top;
    $("analysis-side").textContent = "(" + mover + " to move)";
    const atScore = chances.mwc !== undefined;
    $("chances-label").textContent = mover + "'s chances before " + (S.stage && !S.stage.rolled ? "this stage" :
      "the roll") + ", equity " + signed(chances.equity) +
      (chances.bearoff ? " †" : "") + (atScore ? " · match-winning chance " + percent(chances.mwc) + " at X " +
      S.match.score.X + " – O " + S.match.score.O + " (to " + S.match.length + ")" : "");
    $("moves-value").textContent = atScore ? "match win" : "equity";
    // Only the outcomes the variant scores: without a top class its probability counts as a gammon (Portes: a
    // backgammon scores as one; the running games' models never see one); without draws there is no draw.
    const rules = VARIANTS[S.variant], draw = rules.draws && p.length > 6 ? p[6] : 0;
    const gammon = rules.top ? [p[1], p[4]] : [p[1] + p[2], p[4] + p[5]];
    const parts = [["win-top", rules.top ? p[2] : null], ["win-gammon", gammon[0]], ["win-single", p[0]],
      ["draw", rules.draws ? draw : null], ["lose-single", p[3]], ["lose-gammon", gammon[1]],
      ["lose-top", rules.top ? p[5] : null]].filter((part) => part[1] !== null);
    for (const [name, value] of parts) {
      const div = document.createElement("div");
      div.className = "c-" + name;
      div.style.width = (100 * value) + "%";
      div.title = name.replace("-", " ") + " " + percent(value);
      bar.appendChild(div);
    }
    const win = p[0] + p[1] + p[2];
    const detail = (g, t) => " (" + (top ? "gammon or more " + percent(g + t) + ", " + top + " " + percent(t) :
      "gammon " + percent(g + t)) + ")";
    $("chances-legend").textContent = "win " + percent(win) + detail(p[1], p[2]) +
      (rules.draws ? " · draw " + percent(draw) : "") + " · lose " + percent(p[3] + p[4] + p[5]) + detail(p[4], p[5]);
    const best = atScore ? S.ranked[0].mwc : S.ranked[0].equity;
    S.ranked.slice(0, 8).forEach(function (move, k) {
      const row = body.insertRow();
      if (k === 0) row.className = "best";
      const mark = move.exact ? " =" : move.bearoff ? " †" : "";
      const value = atScore ? percent(move.mwc) : signed(move.equity);
      const diff = k === 0 ? "" : atScore ? (100 * (move.mwc - best)).toFixed(2) + "%" : (move.equity - best).toFixed(3);
      const cells = [String(k + 1), (move.move || "(no move)") + mark, value, diff,
        percent(move.probabilities[0] + move.probabilities[1] + move.probabilities[2])];
      cells.forEach(function (text, c) {
        const cell = row.insertCell();
        cell.textContent = text;
        if (c >= 2) cell.className = "num";
      });
    });
    $("analysis-note").textContent = S.ranked.length + " legal moves with " + S.dice.join("-") + ", valued for " + mover +
      " at 0 plies by the network in this page" + (atScore ? ", ranked by " + mover + "'s match-winning chance at the " +
      "score (each outcome valued by the " + matchName(S.match.rotation) + " equity table)" : S.match.rotation ? " (no " +
      matchName(S.match.rotation) + " equity " +
      "table: valued as in money play)" : "") + ". † a bear-off: the engine's bots value it with the bear-off " +
      "database instead; = the game ends, exact.";
    $("model-info").textContent = modelInfo(model);
  }

  function modelInfo(model) {
    const meta = model.metadata;
    return "Model: " + meta.variant + ", " + Number(meta.training_games).toLocaleString("en") +
      " training games, " + meta.model.layers + "×" + meta.model.hidden + " " + meta.model.activation +
      ", encoding v" + meta.encoding_version + (meta.source_checkpoint ? ", from " + meta.source_checkpoint : "") + ".";
  }

  // -- speed ---------------------------------------------------------------------------------------
  // Positions encoded and evaluated per second by the page's model (the legal resulting positions of this
  // turn, over and over, for at least `ms` milliseconds).
  function benchmark(model, positions, ms) {
    let count = 0;
    const t0 = performance.now();
    let elapsed = 0;
    while (elapsed < ms || count < 200) {
      for (const position of positions) model.evaluatePosition(position);
      count += positions.length;
      elapsed = performance.now() - t0;
    }
    return { positions: count, seconds: elapsed / 1000, perSecond: count / (elapsed / 1000) };
  }

  function afterstates() {
    if (!S.legal) return [S.position];
    return S.legal.filter((m) => !m.position.result).map((m) => nextDecision(m.position));
  }

  function measure() {
    if (!S.model) return;
    const positions = afterstates();
    const result = benchmark(S.model, positions.length ? positions : [S.position], 1000);
    $("speed").textContent = Math.round(result.perSecond).toLocaleString("en") + " positions/s (encode + evaluate, " +
      S.variant + " model, encoding v" + S.model.encodingVersion + ", " + result.positions + " positions in " +
      result.seconds.toFixed(2) + " s)";
    return result;
  }

  // -- start ---------------------------------------------------------------------------------------
  async function init() {
    await loadVariants();
    checkVariantParameter(await loadRotationParameter());
    if (S.rotationWhy) {
      urlNotice("rotation", params.get("rotation"), "is not a rotation the board can play (" + S.rotationWhy + ")",
        (S.match.rotation ? "the " + rotationLabel(S.match.rotation) : titleOf(S.variant)) + " is played instead");
    }
    $("variant").value = S.match.rotation || S.variant;
    const defaultLength = S.match.rotation ? 5 : 1;
    if (params.has("length")) {
      const text = params.get("length"), length = Number(text);
      if (!/^\d{1,9}$/.test(text)) {
        urlNotice("length", text, "is not a whole number of points from 1 to " + MAX_MATCH_LENGTH,
          lengthText(defaultLength) + " is played instead");
        setMatchLength(defaultLength);
      } else if (length < 1 || length > MAX_MATCH_LENGTH) {
        const used = Math.min(Math.max(length, 1), MAX_MATCH_LENGTH);
        urlNotice("length", text, "is outside 1 to " + MAX_MATCH_LENGTH + " points (the match equity table's reach)",
          lengthText(used) + " is played instead");
        setMatchLength(used);
      } else setMatchLength(length);
    } else setMatchLength(defaultLength);
    labelLengths();
    $("board").addEventListener("click", onBoardClick);
    $("new-game").addEventListener("click", () => newMatch());
    $("variant").addEventListener("change", function () {
      if (ROTATIONS[$("variant").value] && $("match-length").value === "1") setMatchLength(5);
      labelLengths();
      newMatch();
    });
    $("match-length").addEventListener("change", () => newMatch());
    $("undo").addEventListener("click", function () {
      if (S.phase !== "human" || !S.plan) return;
      S.moved = null;
      for (let n = S.clicks.pop() || 1; n > 0; n--) S.plan.undo(); // the last click's steps
      S.selected = null;
      showMessage(S.plan.history.length > 1 ? "Undone: " + S.plan.text() + " played so far." : "Undone: nothing played yet.");
      render();
    });
    $("done").addEventListener("click", () => { if (S.plan && S.plan.complete()) submitMove(S.plan.text()); });
    $("typed-form").addEventListener("submit", function (event) {
      event.preventDefault();
      submitMove($("typed").value);
    });
    $("hint").addEventListener("click", hint);
    $("bot-plays").addEventListener("click", botPlaysForYou);
    $("next-game").addEventListener("click", () => (S.match.over ? newMatch() : newGame(false)));
    $("close-summary").addEventListener("click", () => { $("game-over").hidden = true; });
    $("measure").addEventListener("click", measure);
    $("save-game").addEventListener("click", saveGame);
    $("open-game").addEventListener("click", () => $("open-file").click());
    $("open-file").addEventListener("change", function () {
      const file = $("open-file").files[0];
      openFile(file).finally(() => { $("open-file").value = ""; }); // the same file may be opened again
    });
    $("analyse").addEventListener("click", analyseGame);
    $("analyse-over").addEventListener("click", analyseGame);
    $("strength").addEventListener("change", () => showMessage("Bot: " + $("strength").selectedOptions[0].textContent + "."));
    if (params.has("level")) {
      if (LEVEL_NAMES.includes(params.get("level"))) $("level").value = params.get("level");
      else urlNotice("level", params.get("level"), "is not a level of play (" + LEVEL_NAMES.join(", ") + ")",
        "no level (the Bot choice) is played instead");
    }
    if (params.has("mode")) {
      if (MODES.includes(params.get("mode"))) {
        $("mode").value = params.get("mode");
        S.modeChosen = true;
      } else urlNotice("mode", params.get("mode"), "is not a mode (play, study)", defaultMode() + " mode is used instead");
    }
    if (!S.modeChosen) $("mode").value = defaultMode();
    $("level").addEventListener("change", function () {
      if (!S.modeChosen) $("mode").value = defaultMode();
      updateLevelChoices();
      const record = currentRecord();
      if (record && !record.result) record.players.O = botLabel();
      showMessage("Bot: " + (studyMode() ? botName() : botName(true)) + ".");
      render();
    });
    $("mode").addEventListener("change", function () {
      S.modeChosen = true;
      updateLevelChoices();
      showMessage(studyMode() ? "Study mode: the analysis panel shows the best move, the equities and the chances." :
        "Play mode: the best move, the equities and the chances stay hidden during the game (Show the analysis " +
        "asks for them).");
      render();
    });
    $("reveal").addEventListener("click", function () {
      S.revealed = S.turns;
      render();
    });
    try {
      const response = await fetch("health");
      S.health = await response.json();
    } catch (error) {
      S.health = null;
    }
    updateStrengthChoices();
    if (params.has("strength")) {
      const text = params.get("strength"), options = Array.from($("strength").options);
      const asked = options.find((o) => o.value === text);
      if (!asked) {
        urlNotice("strength", text, "is not a bot of the list (" + options.map((o) => o.value).join(", ") + ")",
          "the " + $("strength").selectedOptions[0].textContent + " bot plays instead");
      } else if (asked.disabled) {
        urlNotice("strength", text, "cannot play here (" + asked.title + ")", "the " +
          $("strength").selectedOptions[0].textContent + " bot plays instead");
      } else $("strength").value = asked.value;
    }
    showUrlNotices();
    await newMatch();
  }

  // The URL's mistakes, above the board (hidden when there are none).
  function showUrlNotices() {
    const box = $("url-notice"), list = document.createElement("ul");
    for (const text of urlNotices) list.appendChild(Object.assign(document.createElement("li"), { textContent: text }));
    box.replaceChildren(list);
    box.hidden = !urlNotices.length;
  }

  function lengthText(length) {
    return length === 1 && !S.match.rotation ? "a single game" : "a match to " + length + (length === 1 ? " point" : " points");
  }

  // A match length of the list, added to it when it is not there (?length=N: any 1..25).
  function setMatchLength(value) {
    const length = Math.round(Number(value));
    if (!(length >= 1 && length <= MAX_MATCH_LENGTH)) return;
    const select = $("match-length");
    if (!Array.from(select.options).some((o) => Number(o.value) === length)) {
      const option = document.createElement("option");
      option.value = String(length);
      option.textContent = length + " points";
      const after = Array.from(select.options).find((o) => Number(o.value) > length);
      select.insertBefore(option, after || null);
    }
    select.value = String(length);
  }

  // A rotation's match to 1 is a match, not a single game.
  function labelLengths() {
    const one = $("match-length").querySelector("option[value='1']");
    if (one) one.textContent = ROTATIONS[$("variant").value] ? "1 point" : "single game";
  }

  // The class values of `side` at a rotation's match `context` ({rotation (default "tavli"), length, score, game}).
  async function contextValues(model, side, context) {
    const met = await loadRotationMet(context.rotation || "tavli");
    return rotationClassValues(met, model.outcomePoints, side, context);
  }

  // For the tests and for curious readers (the browser console): the page's state, encoder and model.
  window.tapaWeb = {
    state: S,
    get variants() { return VARIANTS; }, // the page's table of the server's variants (loadVariants)
    get rotations() { return ROTATIONS; }, // the server's preset rotations as the page reads them (loadVariants)
    seed: seed, // the dice's seed (the seed parameter, else a random one)
    api: api,
    encode: (position, version) => Array.from(TapaEncoding.encode(position, version)),
    evaluate: async function (variant, positions) {
      const model = await loadModel(variant);
      return positions.map(function (position) {
        const value = model.evaluatePosition(position);
        return { probabilities: Array.from(value.probabilities), equity: value.equity, bearoff: isBearoff(position) };
      });
    },
    benchmark: async function (variant, positions, ms) { return benchmark(await loadModel(variant), positions, ms); },
    measure: measure,
    isBearoff: isBearoff,
    record: gameRecord,
    rotationRecord: rotationRecord,
    open: openFile, // for the console: tapaWeb.open(new File([text], "match.mat")) opens a file as the Open button does
    // The page's 0-ply choice in a rotation's match: the legal moves of `position` with `dice` (from the server),
    // ranked by the match-winning chance at `context` ({rotation, length, score: {X, O}, game}; rotation, a key of
    // tapaWeb.rotations: a preset's name, or "custom" for the URL's ?rotation=; default "tavli") as the bot ranks
    // them; without `context`, as in money play.
    rankAtScore: async function (position, dice, context) {
      const model = await loadModel(position.variant);
      const values = context ? await contextValues(model, position.turn, context) : null;
      const answer = await api("legal_moves", { position: position, dice: dice });
      return rank(model, answer.moves, values).map((m) => ({ move: m.move, position: m.position, equity: m.equity,
        mwc: m.mwc === undefined ? null : m.mwc, probabilities: Array.from(m.probabilities) }));
    },
    // For the tests: end the current game now with `result` ({winner, kind, points}, as the server's), as if its last
    // move had; a draw is {winner: null, kind: "draw", points: 0}. Answers still on their way are dropped.
    endGame: function (result) {
      if (!S.position || S.phase === "over") return false;
      S.game++;
      S.position = Object.assign({}, S.position, { result: result });
      gameOver(result);
      return true;
    },
    // For the tests: go on from `position` (a position of this game's variant, its side to move to play) with `dice`,
    // as if the game had reached it (the record's history then does not replay). Answers on their way are dropped.
    turnAt: function (position, dice) {
      if (!S.position || S.phase === "over" || position.variant !== S.variant) return false;
      const game = ++S.game;
      Object.assign(S, { position: position, moved: null, lastMove: null, forced: null });
      setPhase("busy");
      startTurn(game, dice.slice()).catch(failed);
      return true;
    },
    // The page's 0-ply ranking of `moves` (the server's legal moves: {move, position}) by the model `modelJson` (a JSON
    // model, GET model/<variant>.json's form), as in money play: [{move, equity, probabilities}], best first. Gul Bara:
    // a move followed by the mover's own stage is valued from the mover's view (nextDecision).
    rankWith: function (modelJson, moves) {
      return rank(TapaModel.fromJSON(modelJson), moves, null).map((m) => ({ move: m.move, equity: m.equity,
        probabilities: Array.from(m.probabilities) }));
    },
    classValues: async function (variant, side, context) {
      const model = await loadModel(variant);
      return contextValues(model, side, context);
    },
    analyse: analyseGame,
    // The move a 0-ply level `name` of the model plays in `position` with `dice` and the noise seed `seed` (at the
    // rotation's match `context` when given, else as in money play): the same function the bot plays with.
    levelMove: async function (position, dice, name, seed, context) {
      const model = await loadModel(position.variant);
      const values = context ? await contextValues(model, position.turn, context) : null;
      const answer = await api("legal_moves", { position: position, dice: dice });
      const levels = model.metadata.levels || {};
      if (!levels[name] || levels[name].plies) throw new Error("no 0-ply level " + name + " in the " + position.variant + " model");
      const level = { name: name, plies: levels[name].plies, noise: levels[name].noise, seed: seed };
      const chosen = levelChoice(model, position, answer.moves, rank(model, answer.moves, values), values, level);
      return { move: chosen.move, position: chosen.position, equity: chosen.equity,
        mwc: chosen.mwc === undefined ? null : chosen.mwc };
    },
    ready: null,
  };
  window.tapaWeb.ready = init().catch(failed);
})();
