// The exported network, run in the page: the JSON model of GET /model/<variant>.json (docs/web.md), the MLP
// of docs/export.md ("layers hidden layers x @ W.T + b each followed by the activation, a final linear layer
// to K logits, a softmax"), the same arithmetic as tapa_ai/export/numpy_model.py: float32 weights, sums
// in float64.
//
//   const model = TapaModel.fromJSON(await (await fetch("/model/tapa.json")).json());
//   model.evaluate(features)        -> {probabilities: Float64Array(K), equity}   (features: Float32Array)
//   model.evaluatePosition(position) -> the same, encoding the position with TapaEncoding first
(function (root) {
  "use strict";

  function float32FromBase64(text) {
    const binary = atob(text);
    const bytes = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
    // The server writes little-endian float32; every browser this page runs on is little-endian, and the
    // DataView below makes sure of it anyway.
    const view = new DataView(bytes.buffer);
    const out = new Float32Array(bytes.length / 4);
    for (let i = 0; i < out.length; i++) out[i] = view.getFloat32(4 * i, true);
    return out;
  }

  // erf by the Chebyshev fit of Numerical Recipes (erfc, fractional error below 1.2e-7): only the "gelu"
  // activation needs it (the shipped models use relu).
  function erf(x) {
    const z = Math.abs(x);
    const t = 1 / (1 + 0.5 * z);
    const erfc = t * Math.exp(-z * z - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 +
      t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 +
      t * 0.17087277)))))))));
    return x >= 0 ? 1 - erfc : erfc - 1;
  }

  const ACTIVATIONS = {
    relu: (x) => (x > 0 ? x : 0),
    tanh: (x) => Math.tanh(x),
    sigmoid: (x) => 0.5 * (1 + Math.tanh(0.5 * x)),
    silu: (x) => x * 0.5 * (1 + Math.tanh(0.5 * x)),
    gelu: (x) => 0.5 * x * (1 + erf(x / Math.SQRT2)),
  };

  function Model(json) {
    if (json.format !== "tapa-ai-web-model") throw new Error("not a tapa-ai web model (format " + json.format + ")");
    const meta = json.metadata;
    this.metadata = meta;
    this.variant = meta.variant;
    this.encodingVersion = meta.encoding_version;
    this.numFeatures = meta.num_features;
    this.outcomeNames = meta.outcome_names;
    this.outcomePoints = meta.outcome_points;
    this.activation = ACTIVATIONS[meta.model.activation];
    if (!this.activation) throw new Error("unknown activation " + meta.model.activation);
    function readLayer(layer) {
      const weight = float32FromBase64(layer.weight);
      const bias = float32FromBase64(layer.bias);
      if (weight.length !== layer.in * layer.out || bias.length !== layer.out) throw new Error("layer sizes do not fit");
      // Kept transposed, (in, out): most inputs are 0, so the pass adds the columns of the non-zero ones.
      const columns = new Float32Array(weight.length);
      for (let o = 0; o < layer.out; o++) {
        for (let i = 0; i < layer.in; i++) columns[i * layer.out + o] = weight[o * layer.in + i];
      }
      return { in: layer.in, out: layer.out, columns: columns, bias: bias };
    }
    this.layers = json.layers.map(readLayer);
    // A race network (metadata.model.race_network): the positions with no contact left use these layers.
    this.raceLayers = json.race_layers ? json.race_layers.map(readLayer) : null;
    if (Boolean(meta.model.race_network) !== (this.raceLayers !== null)) throw new Error("race network missing or unexpected");
    for (const layers of this.raceLayers ? [this.layers, this.raceLayers] : [this.layers]) {
      if (layers[0].in !== this.numFeatures) throw new Error("first layer does not take the encoding's width");
      if (layers[layers.length - 1].out !== this.outcomeNames.length) throw new Error("last layer is not K wide");
    }
    const widest = Math.max.apply(null, this.layers.map((l) => l.out));
    this._a = new Float64Array(Math.max(widest, this.numFeatures));
    this._b = new Float64Array(Math.max(widest, this.numFeatures));
  }

  // No contact left (as tapa_ai.net.model.race_rows): each side's rearmost checker is its highest own point
  // with the free1 or pinned unit set (25 on the bar), and the two add up to 25 or less.
  function isRace(features) {
    let total = 0;
    let highest = 0;
    for (let side = 0; side < 2; side++) {
      let rearmost = 0;
      for (let point = 1; point <= 24; point++) {
        const base = side * 120 + (point - 1) * 5;
        if (features[base] > 0 || features[base + 4] > 0) rearmost = point;
      }
      if (features[240 + side * 8 + 6] > 0) rearmost = 25;
      total += rearmost;
      highest = Math.max(highest, rearmost);
    }
    // Version 4, a running game (rules.parallel, column 315): a race once both are on their points 1..12.
    if (features.length >= 318 && features[315] > 0) return highest <= 12;
    return total <= 25;
  }

  // features: Float32Array(numFeatures) -> {probabilities: Float64Array(K), equity} for the side to move.
  Model.prototype.evaluate = function (features) {
    if (features.length !== this.numFeatures) throw new Error("want " + this.numFeatures + " features, got " + features.length);
    let input = this._a, output = this._b;
    for (let i = 0; i < features.length; i++) input[i] = features[i];
    const layers = this.raceLayers && isRace(features) ? this.raceLayers : this.layers;
    const last = layers.length - 1;
    for (let index = 0; index <= last; index++) {
      const layer = layers[index], columns = layer.columns, width = layer.out;
      for (let o = 0; o < width; o++) output[o] = layer.bias[o];
      for (let i = 0; i < layer.in; i++) {
        const x = input[i];
        if (x === 0) continue;
        const start = i * width;
        for (let o = 0; o < width; o++) output[o] += columns[start + o] * x;
      }
      if (index < last) for (let o = 0; o < width; o++) output[o] = this.activation(output[o]);
      const swap = input; input = output; output = swap;
    }
    const k = this.outcomeNames.length;
    let top = -Infinity;
    for (let c = 0; c < k; c++) if (input[c] > top) top = input[c];
    const probabilities = new Float64Array(k);
    let total = 0;
    for (let c = 0; c < k; c++) { probabilities[c] = Math.exp(input[c] - top); total += probabilities[c]; }
    let equity = 0;
    for (let c = 0; c < k; c++) { probabilities[c] /= total; equity += probabilities[c] * this.outcomePoints[c]; }
    return { probabilities: probabilities, equity: equity };
  };

  Model.prototype.evaluatePosition = function (position) {
    return this.evaluate(globalThis.TapaEncoding.encode(position, this.encodingVersion));
  };

  // The same probabilities seen from the other side: classes 0-2 <-> 3-5, the draw stays (docs/encoding.md).
  function swapSides(probabilities) {
    const out = Float64Array.from(probabilities);
    for (let c = 0; c < 3; c++) { out[c] = probabilities[c + 3]; out[c + 3] = probabilities[c]; }
    return out;
  }

  const api = { fromJSON: (json) => new Model(json), swapSides: swapSides, erf: erf, isRace: isRace };
  if (typeof module !== "undefined" && module.exports) module.exports = api;
  else root.TapaModel = api;
})(typeof self !== "undefined" ? self : this);
