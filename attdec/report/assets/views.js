/* attdec report: the time views (Utilization, Global, Compute Unit, Hotspot histogram, Counters), drawn
 * from each dispatch's "views" and "timeline" data (attdec/report/views.py, html.py). They register as
 * tabs in window.attdecTabs; report.js draws a tab when it is first shown and passes its helpers (api).
 * Every figure shown sits exact in a data-v attribute: the same numbers the command line prints.
 */
"use strict";
(function () {
  const CLASS_COLOURS = { VALU: "#2ca02c", VMEM: "#1f77b4", SCALAR: "#9467bd", LDS: "#e377c2", MFMA: "#ff7f0e", OTHER: "#7f7f7f" };
  const DISPATCH_COLOURS = ["#2f6fdb", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#17becf", "#8c564b", "#e377c2", "#bcbd22", "#7f7f7f"];
  const L = 130; // label gutter (px)

  function canvasIn(box, h) {
    const cv = document.createElement("canvas");
    box.append(cv);
    const w = box.clientWidth || 1000, r = window.devicePixelRatio || 1;
    cv.width = Math.round(w * r); cv.height = Math.round(h * r);
    cv.style.width = w + "px"; cv.style.height = h + "px";
    const ctx = cv.getContext("2d");
    ctx.setTransform(r, 0, 0, r, 0, 0);
    ctx.font = "10px system-ui, sans-serif";
    return { cv, ctx, w, h };
  }
  function axis(api, c, a, b, top) {
    const { ctx, w, h } = c;
    ctx.fillStyle = "#5f6b7a"; ctx.strokeStyle = "#eef0f3"; ctx.textAlign = "center";
    const ticks = api.niceTicks(a, b, Math.max(2, Math.floor((w - L) / 110)));
    let labels = ticks.map(api.human);
    if (labels.some((l, i) => i && l === labels[i - 1])) labels = ticks.map(api.exact); // a narrow range far from 0
    ticks.forEach((t, i) => {
      const x = L + ((t - a) / (b - a)) * (w - L - 8);
      ctx.beginPath(); ctx.moveTo(x, top); ctx.lineTo(x, h); ctx.stroke();
      ctx.fillText(labels[i], x, top - 5);
    });
    ctx.textAlign = "left";
  }
  const xOf = (c, a, b) => (t) => L + ((t - a) / (b - a)) * (c.w - L - 8);
  const tOf = (c, a, b) => (x) => a + ((x - L) / (c.w - L - 8)) * (b - a);
  const h2 = (api, title, sub) => api.el("h2", {}, title, sub ? api.el("span", { class: "sub", text: sub }) : null);
  const none = (api, sec, text) => sec.append(api.el("div", { class: "empty", text }));
  const model = (api, d) => d._tl || (d._tl = api.timelineModel(d));
  const laneName = (k) => `SE${k[0]} CU${k[1]} SIMD${k[2]} slot ${k[3]}${k[4] ? "'" : ""}`;
  // Wheel zooms around the pointer, drag pans, double-click shows [a, b] again; view = {a, b} is changed in
  // place and paint() redraws. Returns whether a drag is under way (hover then shows nothing).
  function zoomable(c, a, b, view, paint) {
    let drag = null;
    const T = (e) => tOf(c, view.a, view.b)(e.clientX - c.cv.getBoundingClientRect().left);
    c.cv.addEventListener("wheel", (e) => {
      e.preventDefault();
      const t = T(e), w = Math.min(b - a, Math.max((b - a) * 1e-6, (view.b - view.a) * Math.exp(e.deltaY * 0.0015)));
      const lo = Math.max(a, Math.min(t - (t - view.a) * (w / (view.b - view.a)), b - w));
      view.a = lo; view.b = lo + w; paint();
    }, { passive: false });
    c.cv.addEventListener("mousedown", (e) => { drag = { x: e.clientX, a: view.a, b: view.b }; c.cv.classList.add("drag"); });
    window.addEventListener("mouseup", () => { drag = null; c.cv.classList.remove("drag"); });
    c.cv.addEventListener("dblclick", () => { view.a = a; view.b = b; paint(); });
    c.cv.addEventListener("mousemove", (e) => {
      if (!drag) return;
      const w = drag.b - drag.a, lo = Math.max(a, Math.min(drag.a - ((e.clientX - drag.x) / (c.w - L - 8)) * w, b - w));
      view.a = lo; view.b = lo + w; paint();
    });
    return () => drag !== null;
  }

  // ---------------------------------------------------------------- Utilization
  function utilization(d, sec, api) {
    const U = d.views.utilization, classes = d.views.classes;
    if (!U) return none(api, sec, "No traced waves in this dispatch.");
    const busy = U.busy.map((per) => per.map((p) => (p ? api.unpack(p) : null))); // null: the class never ran there
    const nb = U.bins, a = U.t0, b = U.t0 + nb * U.q;
    const total = classes.map((_, k) => U.cycles.reduce((s, row) => s + row[k], 0));
    const all = total.reduce((s, v) => s + v, 0);
    sec.append(h2(api, "Utilization", `busy cycles (latency less stall) per instruction class on each traced SIMD, ${api.human(U.q)}-cycle bins; stall and idle time stays blank, so gaps mean stalled`),
      api.el("div", { class: "legend", id: "util-legend" }, classes.map((c, k) => api.el("span", { "data-class": c, "data-v": total[k] },
        api.swatch(CLASS_COLOURS[c]), `${c} ${api.human(total[k])} (${api.pct(all ? total[k] / all : 0)})`))));
    const box = api.el("div", { class: "canvasbox" });
    sec.append(box);
    const rowH = 5, band = classes.length * rowH + 6;
    function draw() {
      box.replaceChildren();
      const c = canvasIn(box, 24 + U.simds.length * band);
      axis(api, c, a, b, 18);
      const X = xOf(c, a, b), ctx = c.ctx;
      U.simds.forEach((k, i) => {
        const y0 = 22 + i * band;
        ctx.fillStyle = "#5f6b7a";
        ctx.fillText(`SE${k[0]} CU${k[1]} SIMD${k[2]}`, 4, y0 + band / 2 + 2);
        classes.forEach((cl, j) => {
          const row = busy[i][j], y = y0 + j * rowH;
          if (!row) return;
          ctx.fillStyle = CLASS_COLOURS[cl];
          for (let n = 0; n < nb; n++) {
            if (!row[n]) continue;
            ctx.globalAlpha = Math.min(1, 0.15 + row[n] / U.q);
            ctx.fillRect(X(a + n * U.q), y, Math.max(1, X(a + (n + 1) * U.q) - X(a + n * U.q)), rowH - 1);
          }
        });
        ctx.globalAlpha = 1;
      });
      c.cv.id = "util";
      c.cv.addEventListener("mousemove", (e) => {
        const r = c.cv.getBoundingClientRect(), i = Math.floor((e.clientY - r.top - 22) / band), n = Math.floor((tOf(c, a, b)(e.clientX - r.left) - a) / U.q);
        if (i < 0 || i >= U.simds.length || n < 0 || n >= nb || e.clientX - r.left < L) return api.hideTip();
        const k = U.simds[i];
        api.showTip(e, `<div class="m">SE${k[0]} CU${k[1]} SIMD${k[2]}, cycles ${api.exact(a + n * U.q)} – ${api.exact(a + (n + 1) * U.q)}</div>` +
          classes.map((cl, j) => `<div><span class="swatch" style="background:${CLASS_COLOURS[cl]}"></span>${cl}: ${api.exact(busy[i][j] ? busy[i][j][n] : 0)} busy cycles</div>`).join(""));
      });
      c.cv.addEventListener("mouseleave", api.hideTip);
    }
    api.onShow("utilization", draw);
    const cols = [{ label: "SIMD", get: (r) => r.name, cls: "mono" }].concat(classes.map((cl, j) => ({ label: cl, num: true, key: cl, get: (r) => r.cycles[j], fmt: api.human })),
      [{ label: "instructions", num: true, key: "hits", get: (r) => r.hits }]);
    const rows = U.simds.map((k, i) => ({ name: `SE${k[0]} CU${k[1]} SIMD${k[2]}`, key: k, cycles: U.cycles[i], hits: U.hits[i].reduce((s, v) => s + v, 0) }));
    sec.append(h2(api, "Busy cycles per SIMD", "latency less stall of each class's instructions: `attdec hotspots --by instruction --se S --cu C --simd N`'s rows summed"));
    const t = api.table(cols, rows, { rowAttrs: (r) => ({ "data-simd": r.key.join(",") }) });
    t.table.id = "util-table";
    sec.append(t);
  }

  // ---------------------------------------------------------------- Global
  function global(d, sec, api) {
    const all = api.data.dispatches.map((x, i) => ({ x, i })).filter(({ x }) => x.timeline);
    if (!all.length) return none(api, sec, "No traced waves.");
    // On the realtime clock when every dispatch has one (SEs and dispatches then line up, as with
    // `attdec timeline --clock realtime`), else in each trace's own cycles.
    const real = all.every(({ x }) => x.views.realtime);
    const times = all.map(({ x }) => (real ? [api.unpack(x.views.realtime.begin), api.unpack(x.views.realtime.end)] : null));
    let origin = Infinity;
    if (real) for (const [b] of times) for (const v of b) origin = Math.min(origin, v);
    const waves = []; // [dispatch index, lane key string, begin, end, seq]
    const keys = new Map();
    all.forEach(({ x, i }, j) => {
      const M = model(api, x);
      for (let w = 0; w < M.nW; w++) {
        const k = M.lanes[M.lane[w]].key.slice(0, 4), s = k.join(",");
        if (!keys.has(s)) keys.set(s, k);
        waves.push(real ? [i, s, times[j][0][w] - origin, times[j][1][w] - origin, M.seq[w]] : [i, s, M.begin[w], M.end[w], M.seq[w]]);
      }
    });
    sec.waves = waves; // what is drawn, for scripts and tests
    const unit = real ? "µs" : "cycles";
    const lanes = [...keys.entries()].sort((p, q) => p[1][0] - q[1][0] || p[1][1] - q[1][1] || p[1][2] - q[1][2] || p[1][3] - q[1][3]);
    const laneIx = new Map(lanes.map(([s], i) => [s, i]));
    let a = Infinity, b = -Infinity;
    for (const w of waves) { a = Math.min(a, w[2]); b = Math.max(b, w[3]); }
    const view = { a, b };
    const span = (i) => { let lo = Infinity, hi = -Infinity; for (const w of waves) if (w[0] === i) { lo = Math.min(lo, w[2]); hi = Math.max(hi, w[3]); } return [lo, hi]; };
    sec.append(h2(api, "Global view", `every traced wave of every dispatch on its SE / CU / SIMD / slot, coloured by dispatch; ${real ? "µs of the realtime clock from the first wave (SEs and dispatches aligned)" : "cycles as each trace gives them (no realtime samples to align them)"}; wheel to zoom, drag to pan, double-click for all, click a dispatch to zoom to it`),
      api.el("div", { class: "legend", id: "global-legend" }, all.map(({ x, i }) => api.el("span", { "data-dispatch": x.name, "data-v": waves.filter((w) => w[0] === i).length, style: "cursor:pointer",
        onclick: () => { const [lo, hi] = span(i), m = Math.max((hi - lo) * 0.05, 1e-9); view.a = Math.max(a, lo - m); view.b = Math.min(b, hi + m); paint(); } },
      api.swatch(DISPATCH_COLOURS[i % DISPATCH_COLOURS.length]), `${x.kernel || x.name} [${x.name}]: ${waves.filter((w) => w[0] === i).length} waves`))));
    const box = api.el("div", { class: "canvasbox lanes" });
    sec.append(box);
    const lh = Math.max(3, Math.min(12, Math.floor(640 / lanes.length)));
    let c = null;
    function paint() {
      const { ctx, w: cw, h: ch } = c;
      ctx.clearRect(0, 0, cw, ch);
      axis(api, c, view.a, view.b, 18);
      const X = xOf(c, view.a, view.b);
      lanes.forEach(([, k], li) => {
        if (lh >= 9 || li === 0 || lanes[li - 1][1][2] !== k[2]) { ctx.fillStyle = "#5f6b7a"; ctx.fillText(lh >= 9 ? laneName(k) : `SE${k[0]} CU${k[1]} SIMD${k[2]}`, 4, 22 + li * lh + Math.min(lh, 10) - 1); }
      });
      ctx.save(); ctx.beginPath(); ctx.rect(L, 0, cw - L, ch); ctx.clip();
      for (const w of waves) {
        if (w[3] < view.a || w[2] > view.b) continue;
        const y = 22 + laneIx.get(w[1]) * lh, x0 = X(w[2]), bw = X(w[3]) - x0;
        ctx.fillStyle = DISPATCH_COLOURS[w[0] % DISPATCH_COLOURS.length];
        ctx.fillRect(x0, y, Math.max(1, bw), lh - 1);
        if (bw >= 4) { ctx.fillStyle = "#1d2430"; ctx.fillRect(x0, y, 1, lh - 1); } // where a wave begins
      }
      ctx.restore();
      sec.dataset.range = `${view.a} ${view.b}`;
    }
    function draw() {
      box.replaceChildren();
      c = canvasIn(box, 26 + lanes.length * lh);
      c.cv.id = "global";
      c.cv.dataset.waves = waves.length;
      c.cv.dataset.lanes = lanes.length;
      const dragging = zoomable(c, a, b, view, paint);
      const T = (e) => tOf(c, view.a, view.b)(e.clientX - c.cv.getBoundingClientRect().left);
      c.cv.addEventListener("mousemove", (e) => {
        if (dragging()) return api.hideTip();
        const r = c.cv.getBoundingClientRect(), li = Math.floor((e.clientY - r.top - 22) / lh), t = T(e);
        if (li < 0 || li >= lanes.length || e.clientX - r.left < L) return api.hideTip();
        const tol = (view.b - view.a) / (c.w - L) * 2; // two pixels: a narrow wave can still be hovered
        const hit = waves.filter((w) => laneIx.get(w[1]) === li && w[2] - tol <= t && t <= w[3] + tol);
        const f = (v) => (real ? v.toFixed(3) : api.exact(v));
        api.showTip(e, `<div class="m">${laneName(lanes[li][1])}, ${f(t)} ${unit}</div>` + (hit.length ? hit.slice(0, 8).map((w) => {
          const x = api.data.dispatches[w[0]];
          return `<div>${api.esc(x.kernel || x.name)} [${api.esc(x.name)}] wave ${w[4]}: ${f(w[2])} – ${f(w[3])} ${unit}</div>`;
        }).join("") : "<div>(no wave)</div>"));
      });
      c.cv.addEventListener("mouseleave", api.hideTip);
      paint();
    }
    api.onShow("global", draw);
  }

  // ---------------------------------------------------------------- Compute Unit
  function computeUnit(d, sec, api) {
    if (!d.timeline) return none(api, sec, "No traced waves in this dispatch.");
    const M = model(api, d), tr = M.tracks.state;
    const fields = [["se", 0, "SE"], ["cu", 1, "CU"], ["simd", 2, "SIMD"], ["slot", 3, "slot"]];
    const pick = { se: "", cu: "", simd: "", slot: "", wave: "" };
    const selects = {};
    const options = (vals) => [api.el("option", { value: "" }, "all")].concat([...new Set(vals)].sort((x, y) => x - y).map((v) => api.el("option", { value: v }, String(v))));
    for (const [f, i, label] of fields) selects[f] = api.el("select", { id: "cu-" + f, "aria-label": label, onchange: (e) => { pick[f] = e.target.value; redraw(); } }, options(M.lanes.map((l) => l.key[i])));
    selects.wave = api.el("select", { id: "cu-wave", "aria-label": "wave", onchange: (e) => { pick.wave = e.target.value; redraw(); } }, options(Array.from(M.seq)));
    const legend = api.el("div", { class: "legend", id: "cu-legend" }, tr.names.map((n, i) => api.el("span", { "data-state": n }, api.swatch(api.STATE_COLOURS[i] || "#999"), n)));
    sec.append(h2(api, "Compute Unit", "each wave's life in its SIMD slot, coloured by wave state; choose SE / CU / SIMD / slot / wave as in RCV's selector; wheel to zoom, drag to pan, double-click for all"),
      api.el("div", { class: "toolbar" }, fields.map(([f, , label]) => api.el("label", {}, label + " ", selects[f])), api.el("label", {}, "wave ", selects.wave)),
      legend);
    const box = api.el("div", { class: "canvasbox lanes" }), holder = api.el("div");
    sec.append(box, h2(api, "Waves", "the rows of `attdec waves` with the same --se/--cu/--simd/--slot/--wave"), holder);
    const keep = (w) => {
      const k = M.lanes[M.lane[w]].key;
      return fields.every(([f, i]) => pick[f] === "" || k[i] === +pick[f]) && (pick.wave === "" || M.seq[w] === +pick.wave);
    };
    function draw() {
      const sel = [];
      for (let w = 0; w < M.nW; w++) if (keep(w)) sel.push(w);
      const laneList = [...new Set(sel.map((w) => M.lane[w]))].sort((x, y) => x - y);
      const li = new Map(laneList.map((l, i) => [l, i]));
      let a = Infinity, b = -Infinity;
      for (const w of sel) { a = Math.min(a, M.begin[w]); b = Math.max(b, M.end[w]); }
      box.replaceChildren();
      if (!sel.length) { box.append(api.el("div", { class: "empty", text: "No wave matches." })); return sel; }
      const lh = Math.max(4, Math.min(18, Math.floor(600 / laneList.length)));
      const c = canvasIn(box, 26 + laneList.length * lh), ctx = c.ctx, view = { a, b };
      c.cv.id = "cu-lanes";
      c.cv.dataset.waves = sel.length;
      function paint() {
        ctx.clearRect(0, 0, c.w, c.h);
        axis(api, c, view.a, view.b, 18);
        const X = xOf(c, view.a, view.b);
        laneList.forEach((l, i) => { ctx.fillStyle = "#5f6b7a"; if (lh >= 9 || i % Math.ceil(10 / lh) === 0) ctx.fillText(laneName(M.lanes[l].key), 4, 22 + i * lh + Math.min(lh, 10) - 1); });
        ctx.save(); ctx.beginPath(); ctx.rect(L, 0, c.w - L, c.h); ctx.clip();
        for (const w of sel) {
          if (M.end[w] < view.a || M.begin[w] > view.b) continue;
          const y = 22 + li.get(M.lane[w]) * lh;
          for (let r = Math.max(tr.off[w], api.upper(tr.start, view.a, tr.off[w], tr.off[w + 1]) - 1); r < tr.off[w + 1]; r++) {
            const s = tr.start[r], e = r + 1 < tr.off[w + 1] ? tr.start[r + 1] : M.end[w];
            if (s > view.b) break;
            ctx.fillStyle = api.STATE_COLOURS[tr.v[r]] || "#999";
            ctx.fillRect(X(s), y, Math.max(0.4, X(e) - X(s)), lh - 1);
          }
          ctx.fillStyle = "#1d2430";
          ctx.fillRect(X(M.begin[w]), y, 1, lh - 1);
        }
        ctx.restore();
      }
      const dragging = zoomable(c, a, b, view, paint);
      paint();
      c.cv.addEventListener("mousemove", (e) => {
        if (dragging()) return api.hideTip();
        const r = c.cv.getBoundingClientRect(), i = Math.floor((e.clientY - r.top - 22) / lh), t = tOf(c, view.a, view.b)(e.clientX - r.left);
        if (i < 0 || i >= laneList.length || e.clientX - r.left < L) return api.hideTip();
        const w = sel.find((x) => M.lane[x] === laneList[i] && M.begin[x] <= t && t <= M.end[x]);
        if (w == null) return api.showTip(e, `<div class="m">${laneName(M.lanes[laneList[i]].key)}</div><div>(no wave)</div>`);
        const ri = api.upper(tr.start, t, tr.off[w], tr.off[w + 1]) - 1;
        api.showTip(e, `<div class="m">${laneName(M.lanes[laneList[i]].key)} wave ${M.seq[w]}</div><div>${api.exact(M.begin[w])} – ${api.exact(M.end[w])}, ${M.ninst[w]} instructions, ${api.human(M.wstall[w])} stall</div>` +
          (ri >= tr.off[w] ? `<div><span class="swatch" style="background:${api.STATE_COLOURS[tr.v[ri]]}"></span>${tr.names[tr.v[ri]]} from ${api.exact(tr.start[ri])}${tr.q > 1 ? ` (${tr.q}-cycle grid)` : ""}</div>` : ""));
      });
      c.cv.addEventListener("mouseleave", api.hideTip);
      return sel;
    }
    function redraw() {
      const sel = draw();
      const rows = sel.map((w) => { const k = M.lanes[M.lane[w]].key; return { k, w }; });
      const cols = [["se", (r) => r.k[0]], ["cu", (r) => r.k[1]], ["simd", (r) => r.k[2]], ["slot", (r) => r.k[3]], ["wave", (r) => M.seq[r.w]],
        ["begin", (r) => M.begin[r.w]], ["end", (r) => M.end[r.w]], ["duration", (r) => M.end[r.w] - M.begin[r.w]],
        ["instructions", (r) => M.ninst[r.w]], ["stall", (r) => M.wstall[r.w]]].map(([label, get]) => ({ label, key: label, num: true, get }));
      const t = api.table(cols, rows, { sort: 5, dir: "asc", limit: 2000 });
      t.table.id = "cu-waves";
      holder.replaceChildren(t);
    }
    api.onShow("cu", redraw);
  }

  // ---------------------------------------------------------------- Hotspot histogram
  function histogram(d, sec, api) {
    const H = d.views.histogram;
    if (!H) return none(api, sec, "No executed instructions in this dispatch.");
    const lat = api.unpack(H.latency), stall = api.unpack(H.stall), hits = api.unpack(H.hits), nb = lat.length;
    const a = H.t0, b = H.t0 + nb * H.q;
    const sel = { lo: 0, hi: nb };
    const readout = api.el("div", { class: "cards", id: "hist-range" });
    sec.append(h2(api, "Hotspot histogram", `latency of the instructions issued in each ${api.human(H.q)}-cycle bin (its stall part in red); drag to select a clock range, double-click for all`),
      readout);
    const box = api.el("div", { class: "canvasbox" });
    sec.append(box);
    const sum = (arr) => { let s = 0; for (let i = sel.lo; i < sel.hi; i++) s += arr[i]; return s; };
    function card(k, key, v, x) {
      const c = api.el("div", { class: "card", "data-k": key, "data-v": v }, api.el("div", { class: "k", text: k }), api.el("div", { class: "v", text: api.human(v) }), x ? api.el("div", { class: "x", text: x }) : null);
      return c;
    }
    function show() {
      const l = sum(lat), s = sum(stall), n = sum(hits);
      readout.replaceChildren(
        card("range", "from", a + sel.lo * H.q, `to ${api.exact(a + sel.hi * H.q)} cycles (${sel.hi - sel.lo} of ${nb} bins)`),
        card("latency", "latency", l), card("stall", "stall", s, l ? `${api.pct(s / l)} of latency` : null), card("instructions", "hits", n));
      readout.dataset.lo = sel.lo; readout.dataset.hi = sel.hi;
    }
    function draw() {
      box.replaceChildren();
      const c = canvasIn(box, 220);
      c.cv.id = "hist";
      axis(api, c, a, b, 18);
      const X = xOf(c, a, b), ctx = c.ctx, top = 24, hh = 220 - top - 6;
      let peak = 1;
      for (let i = 0; i < nb; i++) peak = Math.max(peak, lat[i]);
      ctx.fillStyle = "#5f6b7a"; ctx.fillText(`${api.human(peak)} cycles`, 4, top + 8); ctx.fillText("latency", 4, top + hh / 2);
      if (sel.lo > 0 || sel.hi < nb) { ctx.fillStyle = "#eef3fb"; ctx.fillRect(X(a + sel.lo * H.q), top, X(a + sel.hi * H.q) - X(a + sel.lo * H.q), hh); }
      for (let i = 0; i < nb; i++) {
        const x0 = X(a + i * H.q), bw = Math.max(1, X(a + (i + 1) * H.q) - x0 - 1);
        const hl = (lat[i] / peak) * hh, hs = (stall[i] / peak) * hh;
        ctx.fillStyle = "#aec7e8"; ctx.fillRect(x0, top + hh - hl, bw, hl);
        ctx.fillStyle = "#d62728"; ctx.fillRect(x0, top + hh - hs, bw, hs);
      }
      const T = tOf(c, a, b), bin = (x) => Math.max(0, Math.min(nb, Math.round((T(x) - a) / H.q)));
      let drag = null;
      c.cv.addEventListener("mousedown", (e) => { drag = bin(e.clientX - c.cv.getBoundingClientRect().left); });
      c.cv.addEventListener("mouseup", (e) => {
        if (drag == null) return;
        const x = bin(e.clientX - c.cv.getBoundingClientRect().left);
        if (x !== drag) { sel.lo = Math.min(x, drag); sel.hi = Math.max(x, drag); show(); draw(); }
        drag = null;
      });
      c.cv.addEventListener("dblclick", () => { sel.lo = 0; sel.hi = nb; show(); draw(); });
      c.cv.addEventListener("mousemove", (e) => {
        const i = Math.floor((T(e.clientX - c.cv.getBoundingClientRect().left) - a) / H.q);
        if (i < 0 || i >= nb) return api.hideTip();
        api.showTip(e, `<div class="m">cycles ${api.exact(a + i * H.q)} – ${api.exact(a + (i + 1) * H.q)}</div><div>latency ${api.exact(lat[i])}, stall ${api.exact(stall[i])}, ${api.exact(hits[i])} instructions</div>`);
      });
      c.cv.addEventListener("mouseleave", api.hideTip);
    }
    sec.selectBins = (lo, hi) => { sel.lo = lo; sel.hi = hi; show(); draw(); }; // for scripts and tests
    show();
    api.onShow("histogram", draw);
  }

  // ---------------------------------------------------------------- Counters over time
  function counters(d, sec, api) {
    const V = d.views, U = V.utilization, s = d.summary;
    const cards = [];
    const card = (k, key, v, shown, x) => api.el("div", { class: "card", "data-k": key, "data-v": v }, api.el("div", { class: "k", text: k }), api.el("div", { class: "v", text: shown }), x ? api.el("div", { class: "x", text: x }) : null);
    if (V.cost != null) cards.push(card("average instruction cost", "cost", V.cost, V.cost.toFixed(2), "cycles of latency per executed instruction"));
    if (V.occupancy) cards.push(card("achieved occupancy", "occupancy", V.occupancy.mean, V.occupancy.mean.toFixed(2), `waves per SIMD, peak ${V.occupancy.peak} (attdec kernel)`));
    sec.append(h2(api, "Summary"), api.el("div", { class: "cards", id: "ctr-summary" }, cards));
    if (U) {
      const tot = V.classes.map((_, k) => U.cycles.reduce((a, row) => a + row[k], 0)), all = tot.reduce((a, v) => a + v, 0);
      sec.append(h2(api, "Utilisation by type", "share of busy cycles (latency less stall) per instruction class"),
        api.el("div", { class: "legend", id: "ctr-util" }, V.classes.map((c, k) => api.el("span", { "data-class": c, "data-v": tot[k] }, api.swatch(CLASS_COLOURS[c]), `${c} ${api.pct(all ? tot[k] / all : 0)}`))));
    }
    // occupancy per SE (the timeline's series) on the trace's x axis
    const occ = d.occupancy;
    const M = d.timeline ? model(api, d) : null;
    let a = M ? M.t0 : 0, b = M ? M.t1 : 1;
    const series = occ ? occ.series.map((o) => {
      const dt = api.unpack(o.t), t = new Float64Array(dt.length);
      let x = o.t0;
      for (let i = 0; i < dt.length; i++) { x += dt[i]; t[i] = x; }
      if (t.length) { a = Math.min(a, t[0]); b = Math.max(b, t[t.length - 1]); }
      return { se: o.se, t, c: o.c, peak: o.peak };
    }) : [];
    const timed = V.counters.rows.filter((r) => r.series).map((r) => {
      const t = api.unpack(r.series.t), v = api.unpack(r.series.v);
      if (t.length) { a = Math.min(a, t[0]); b = Math.max(b, t[t.length - 1]); }
      return { r, t, v };
    });
    const charts = [];
    function lineChart(id, title, lines, unit) { // lines: [{label, colour, t, v, total}]
      const box = api.el("div", { class: "canvasbox", id });
      sec.append(h2(api, title), api.el("div", { class: "legend", id: id + "-legend" }, lines.map((l) => api.el("span", { "data-v": l.total }, api.swatch(l.colour), l.label))), box);
      charts.push(() => {
        box.replaceChildren();
        const c = canvasIn(box, 130), X = xOf(c, a, b), ctx = c.ctx, top = 22, hh = 130 - top - 6;
        axis(api, c, a, b, 18);
        let peak = 1;
        for (const l of lines) for (const v of l.v) peak = Math.max(peak, v);
        ctx.fillStyle = "#5f6b7a"; ctx.fillText(`${api.human(peak)} ${unit}`, 4, top + 8); ctx.fillText("0", 4, top + hh);
        for (const l of lines) {
          ctx.strokeStyle = l.colour; ctx.lineWidth = 1.2; ctx.beginPath();
          for (let i = 0; i < l.t.length; i++) {
            const y = top + hh - (l.v[i] / peak) * hh, nx = i + 1 < l.t.length ? l.t[i + 1] : l.t[i];
            if (i) ctx.lineTo(X(l.t[i]), y); else ctx.moveTo(X(l.t[i]), y);
            ctx.lineTo(X(nx), y);
          }
          ctx.stroke();
        }
      });
    }
    if (series.length) lineChart("ctr-occ", "Occupancy per SE", series.map((o, k) => ({ label: `SE${o.se} (peak ${o.peak})`, colour: api.SE_COLOURS[k % api.SE_COLOURS.length], t: o.t, v: o.c })), "waves");
    timed.forEach(({ r, t, v }, k) => lineChart("ctr-series-" + k, `${r.name} (${r.block}, ${r.source})`, [{ label: `total ${api.exact(r.total)}`, colour: "#2f6fdb", t, v, total: r.total }], ""));
    // occupancy per dispatch, all dispatches of the page
    const rowsD = api.data.dispatches.filter((x) => x.views.occupancy).map((x) => ({ x, o: x.views.occupancy }));
    if (rowsD.length) {
      sec.append(h2(api, "Occupancy per dispatch", "achieved, from all CUs' wave start/end records (attdec kernel)"));
      const t = api.table([{ label: "dispatch", get: (r) => r.x.name, cls: "mono" }, { label: "kernel", get: (r) => r.x.kernel || "", cls: "mono" },
        { label: "mean waves / SIMD", num: true, key: "mean", get: (r) => r.o.mean, fmt: (v) => v.toFixed(2) },
        { label: "peak", num: true, key: "peak", get: (r) => r.o.peak }, { label: "waves", num: true, key: "waves", get: (r) => r.o.waves }], rowsD,
      { rowAttrs: (r) => ({ "data-dispatch": r.x.name }) });
      t.table.id = "ctr-occ-dispatch";
      sec.append(t);
    }
    const C = V.counters;
    sec.append(h2(api, "Counters", C.rows.length ? (C.time_resolved ? "time series above; totals below" : "one value per counter instance for the whole dispatch: no time axis") : ""));
    if (C.notes.length) sec.append(api.el("ul", { class: "notes" }, C.notes.map((n) => api.el("li", { text: n }))));
    if (C.rows.length) {
      const places = [...new Set(C.rows.flatMap((r) => r.per_se.map((p) => p[0] * 1000 + p[1])))].sort((x, y) => x - y); // xcc, se
      const multi = places.some((p) => p >= 1000);
      const cols = [{ label: "counter", key: "name", get: (r) => r.name, cls: "mono" }, { label: "block", get: (r) => r.block }, { label: "source", get: (r) => r.source },
        { label: "total", num: true, key: "total", get: (r) => r.total, fmt: api.exact }].concat(places.map((p) => ({
        label: multi ? `XCC${Math.floor(p / 1000)} SE${p % 1000}` : `SE${p % 1000}`, num: true, key: `xcc${Math.floor(p / 1000)}.se${p % 1000}`,
        get: (r) => (r.per_se.find((x) => x[0] * 1000 + x[1] === p) || [0, 0, 0])[2], fmt: api.exact })));
      const t = api.table(cols, C.rows, { rowAttrs: (r) => ({ "data-counter": r.name, "data-source": r.source }) });
      t.table.id = "ctr-table";
      sec.append(t);
    }
    api.onShow("counters", () => charts.forEach((f) => f()));
  }

  (window.attdecTabs = window.attdecTabs || []).push(
    { id: "utilization", label: "Utilization", draw: utilization },
    { id: "global", label: "Global", draw: global },
    { id: "cu", label: "Compute Unit", draw: computeUnit },
    { id: "histogram", label: "Histogram", draw: histogram },
    { id: "counters", label: "Counters", draw: counters });
})();
