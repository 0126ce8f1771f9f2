/* attdec report: the views of a self-contained page (hand-written, no library, no network).
 *
 * The data is the JSON in #attdec-data (attdec/report/html.py builds it). Numeric columns arrive as
 * {d: "u1|u2|u4|i4|f8", b: base64 little-endian bytes}. Every view is drawn from one dispatch entry;
 * the dispatch selector redraws them all. Exact figures sit in data-v attributes next to the rounded
 * ones shown, so that tests (and users' scripts) can read them from the DOM.
 */
"use strict";
(function () {
  const started = performance.now();
  const DATA = JSON.parse(document.getElementById("attdec-data").textContent);
  const STALL_TYPES = DATA.stall_types;
  const tip = document.getElementById("tip");

  // ---------------------------------------------------------------- helpers
  function el(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v == null || v === false) continue;
      if (k === "class") e.className = v;
      else if (k === "text") e.textContent = v;
      else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, v === true ? "" : v);
    }
    for (const k of kids.flat()) if (k != null) e.append(k instanceof Node ? k : document.createTextNode(String(k)));
    return e;
  }
  function esc(s) {
    return String(s).replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]);
  }
  function human(n) {
    const a = Math.abs(n);
    if (a < 1000) return Number.isInteger(n) ? String(n) : n.toFixed(1);
    if (a < 1e6) return (n / 1e3).toFixed(1) + "K";
    if (a < 1e9) return (n / 1e6).toFixed(2) + "M";
    return (n / 1e9).toFixed(2) + "G";
  }
  const pct = (x) => (100 * x).toFixed(1) + "%";
  const exact = (n) => Math.round(n).toLocaleString("en");
  let prefix = ""; // common directory of the current dispatch's source paths, not repeated on every row
  const short = (p) => (prefix && typeof p === "string" ? p.split(prefix + "/").join("") : p);
  const hex = (n) => "0x" + Number(n).toString(16);
  const KINDS = { u1: Uint8Array, u2: Uint16Array, u4: Uint32Array, i4: Int32Array, f8: Float64Array };
  function unpack(p) {
    const s = atob(p.b);
    const bytes = new Uint8Array(s.length);
    for (let i = 0; i < s.length; i++) bytes[i] = s.charCodeAt(i);
    return new KINDS[p.d](bytes.buffer);
  }
  function upper(arr, x, lo, hi) { // first index in [lo, hi) with arr[i] > x
    while (lo < hi) { const m = (lo + hi) >> 1; if (arr[m] > x) hi = m; else lo = m + 1; }
    return lo;
  }
  function showTip(ev, html) {
    tip.innerHTML = html;
    tip.hidden = false;
    const r = tip.getBoundingClientRect();
    let x = ev.clientX + 14, y = ev.clientY + 14;
    if (x + r.width > innerWidth - 4) x = ev.clientX - r.width - 14;
    if (y + r.height > innerHeight - 4) y = ev.clientY - r.height - 14;
    tip.style.left = Math.max(4, x) + "px";
    tip.style.top = Math.max(4, y) + "px";
  }
  const hideTip = () => { tip.hidden = true; };

  // Colours by index: stall types in attdec's STALL_TYPES order, wave states and instruction
  // categories by the official decoder's enum values (their names come with the data).
  const TYPE_COLOURS = ["#d62728", "#ff7f0e", "#bcbd22", "#9467bd", "#8c564b", "#e377c2", "#1f77b4",
    "#17becf", "#2ca02c", "#98df8a", "#aec7e8", "#c5b0d5", "#c49c94", "#7f7f7f"];
  const STATE_COLOURS = ["#eeeeee", "#c9ced6", "#2ca02c", "#ff9f1c", "#d62728"];
  const CATEGORY_COLOURS = ["#eeeeee", "#17becf", "#aec7e8", "#1f77b4", "#6baed6", "#e377c2", "#2ca02c",
    "#9467bd", "#c5b0d5", "#ff9f1c", "#8c564b", "#c49c94", "#bcbd22"];
  const SE_COLOURS = ["#2f6fdb", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#17becf", "#8c564b", "#e377c2"];
  const typeColour = (t) => TYPE_COLOURS[STALL_TYPES.indexOf(t)] || "#7f7f7f";
  const heat = (f) => `rgba(var(--heat), ${(0.08 + 0.8 * Math.min(1, Math.max(0, f))).toFixed(3)})`;
  const swatch = (c) => el("span", { class: "swatch", style: `background:${c}` });

  // ---------------------------------------------------------------- sortable table
  // cols: {label, get(row), num, fmt(v, row) -> string|Node, title, heat(row) -> 0..1, cls}
  function table(cols, rows, opts = {}) {
    const limit = opts.limit || 5000;
    let sortCol = opts.sort == null ? -1 : opts.sort, dir = opts.dir || "desc";
    const thead = el("thead", {}, el("tr", {}, cols.map((c, i) => el("th", {
      class: (c.num ? "n" : "") + (c.nosort ? " nosort" : ""), title: c.title,
      onclick: c.nosort ? null : () => { dir = sortCol === i && dir === "desc" ? "asc" : "desc"; sortCol = i; body(); },
    }, c.label))));
    const tbody = el("tbody");
    const t = el("table", { class: "t" + (opts.cls ? " " + opts.cls : "") }, thead, tbody);
    let shown = rows;
    function body() {
      shown = rows.slice();
      if (sortCol >= 0) {
        const g = cols[sortCol].get, s = dir === "asc" ? 1 : -1;
        shown.sort((a, b) => {
          const x = g(a), y = g(b);
          return (typeof x === "number" && typeof y === "number" ? x - y : String(x).localeCompare(String(y))) * s;
        });
      }
      thead.querySelectorAll("th").forEach((th, i) => {
        if (i === sortCol) th.setAttribute("data-dir", dir);
        else th.removeAttribute("data-dir");
      });
      const frag = document.createDocumentFragment();
      for (const r of shown.slice(0, limit)) {
        const tr = el("tr", opts.rowAttrs ? opts.rowAttrs(r) : {});
        for (const c of cols) {
          const v = c.get(r);
          const shownV = c.fmt ? c.fmt(v, r) : v;
          const td = el("td", { class: (c.num ? "n" : "") + (c.cls ? " " + c.cls : "") }, shownV);
          if (c.num) td.dataset.v = v;
          if (c.key) td.dataset.k = c.key;
          if (c.heat) { const h = c.heat(r); if (h > 0) td.style.background = heat(h); }
          tr.append(td);
        }
        frag.append(tr);
      }
      tbody.replaceChildren(frag);
      if (opts.after) opts.after(tbody);
    }
    body();
    t.setRows = (r) => { rows = r; body(); };
    const box = el("div", { class: "wrap" }, t);
    if (rows.length > limit) box.append(el("div", { class: "muted", text: `showing ${limit} of ${rows.length} rows` }));
    box.table = t;
    return box;
  }

  // ---------------------------------------------------------------- page frame
  const app = document.getElementById("app");
  // Other asset scripts run before this one and register tabs: {id, label, draw(d, section, api)}.
  const PLUGINS = window.attdecTabs || [];
  const TABS = [["overview", "Overview"], ["hotspots", "Hotspots"], ["source", "Source"], ["isa", "ISA"], ["timeline", "Timeline"]]
    .concat(PLUGINS.map((t) => [t.id, t.label]));
  let current = -1, activeTab = "overview";
  const sections = {};
  const onShow = {};
  const pending = {}; // tab -> draws it; a tab is drawn when first shown, so a big listing does not slow the page
  const targets = {}; // view -> what a selection can ask of it once drawn (isa: select, jump; source: goto)

  const select = DATA.dispatches.length > 1 ? el("select", { id: "dispatch", "aria-label": "dispatch",
    onchange: (e) => go({ dispatch: +e.target.value, tab: activeTab }) },
  DATA.dispatches.map((d, i) => el("option", { value: i }, `${d.kernel || d.name}  [${d.name}]`))) : null;
  const nav = el("nav", { class: "tabs", role: "tablist" });
  const back = el("button", { class: "b", id: "back", title: "previous selection (Alt+←)", onclick: () => move(-1) }, "◀");
  const fwd = el("button", { class: "b", id: "forward", title: "next selection (Alt+→)", onclick: () => move(1) }, "▶");
  const searchBox = el("input", { type: "search", id: "search", placeholder: "search instruction, address, source line", "aria-label": "search" });
  const results = el("ul", { id: "search-results", class: "results", hidden: true });
  app.append(el("header", { class: "top" },
    el("h1", { text: DATA.title }),
    select,
    el("span", { class: "gen", text: `${DATA.generator}, ${DATA.generated}` }),
    el("span", { class: "histnav" }, back, fwd),
    el("span", { class: "searchbox" }, searchBox, results),
    nav));
  const findingsBar = el("div", { id: "findings-bar" });
  const main = el("main");
  app.append(findingsBar, main);

  function setTabs(extra) {
    const all = TABS.concat(extra.map((x, i) => ["extra" + i, x.title]));
    nav.replaceChildren(...all.map(([id, label]) => el("button", { role: "tab", "data-tab": id,
      "aria-selected": String(id === activeTab), onclick: () => go({ tab: id }) }, label)));
    main.replaceChildren(...all.map(([id]) => {
      sections[id] = el("section", { class: "tab", id: "tab-" + id, hidden: id !== activeTab });
      return sections[id];
    }));
  }
  function show(id) {
    if (!sections[id]) id = "overview";
    activeTab = id;
    for (const [k, s] of Object.entries(sections)) s.hidden = k !== id;
    const t0 = performance.now(), draw = pending[id];
    delete pending[id];
    if (draw) draw();
    if (onShow[id]) onShow[id]();
    if (draw) sections[id].dataset.rendered = (performance.now() - t0).toFixed(1); // ms to draw the tab
    nav.querySelectorAll("button").forEach((b) => b.setAttribute("aria-selected", String(b.dataset.tab === id)));
    hideTip();
  }

  // ---------------------------------------------------------------- selections and their history
  // A selection: {dispatch, tab, and per view: line (ISA row), wave/loop/iter (ISA view), source ("file:line")}.
  const hist = { stack: [], pos: -1 };
  function apply(s) {
    if (s.dispatch !== current) renderDispatch(s.dispatch);
    show(s.tab);
    if (s.tab === "isa" && targets.isa) {
      targets.isa.select(s);
      if (s.line != null) targets.isa.jump(s.line);
    }
    if (s.tab === "source" && targets.source && s.source) targets.source.goto(s.source);
  }
  function go(s) {
    s = { dispatch: current, ...s };
    apply(s);
    if (s.tab === "isa" && targets.isa) Object.assign(s, { ...targets.isa.state(), line: s.line });
    hist.stack.splice(hist.pos + 1);
    hist.stack.push(s);
    hist.pos = hist.stack.length - 1;
    histButtons();
  }
  function move(k) {
    const p = hist.pos + k;
    if (p < 0 || p >= hist.stack.length) return;
    hist.pos = p;
    apply(hist.stack[p]);
    histButtons();
  }
  function histButtons() {
    back.disabled = hist.pos <= 0;
    fwd.disabled = hist.pos >= hist.stack.length - 1;
    document.body.dataset.history = `${hist.pos + 1}/${hist.stack.length}`;
  }
  window.addEventListener("keydown", (e) => {
    if (e.altKey && (e.key === "ArrowLeft" || e.key === "ArrowRight")) { e.preventDefault(); move(e.key === "ArrowLeft" ? -1 : 1); }
  });

  // ---------------------------------------------------------------- search
  // Instructions (text or address) and source lines (path:line or text) of the dispatch on screen.
  function search(q) {
    const d = DATA.dispatches[current], out = [], max = 40;
    q = q.trim().toLowerCase();
    if (!q) return out;
    for (const r of d.isa) {
      if (out.length >= max) break;
      if (r[2].toLowerCase().includes(q) || hex(r[1]) === q || (r[3] && r[3].toLowerCase().includes(q)))
        out.push({ kind: "isa", line: r[0], text: r[2], where: `ISA line ${r[0]} ${hex(r[1])}`, go: { tab: "isa", line: r[0] } });
    }
    const srcHits = [];
    for (const f of d.source) {
      const texts = f.text || [];
      const seen = new Set();
      const add = (n, text) => {
        if (seen.has(n) || srcHits.length >= max) return;
        seen.add(n);
        srcHits.push({ kind: "source", line: n, text, where: `${short(f.file)}:${n}`, go: { tab: "source", source: `${f.file}:${n}` } });
      };
      for (const l of f.lines) if (l[0] > 0 && `${f.file}:${l[0]}`.toLowerCase().includes(q)) add(l[0], l[0] - f.text_from >= 0 ? texts[l[0] - f.text_from] || "" : "");
      texts.forEach((t, k) => { if (t.toLowerCase().includes(q)) add(f.text_from + k, t); });
    }
    return out.concat(srcHits);
  }
  function showResults() {
    const hits = search(searchBox.value);
    results.replaceChildren(...hits.map((h) => el("li", { "data-kind": h.kind, "data-line": h.line,
      onmousedown: (e) => { e.preventDefault(); pick(h); } }, el("span", { class: "mono", text: h.text.trim() || "(no text)" }), el("span", { class: "x", text: "  " + h.where }))));
    if (!hits.length && searchBox.value.trim()) results.append(el("li", { class: "muted", text: "no match" }));
    results.hidden = !searchBox.value.trim();
  }
  function pick(h) { results.hidden = true; go(h.go); }
  searchBox.addEventListener("input", showResults);
  searchBox.addEventListener("focus", showResults);
  searchBox.addEventListener("blur", () => { results.hidden = true; });
  searchBox.addEventListener("keydown", (e) => {
    if (e.key === "Enter") { const h = search(searchBox.value)[0]; if (h) pick(h); }
    if (e.key === "Escape") results.hidden = true;
  });

  // ---------------------------------------------------------------- findings (attdec advise), above every tab
  function findings(d) {
    if (!d.findings.length) { findingsBar.replaceChildren(); return; }
    const target = (f) => {
      const row = f.address != null ? d.isa.find((r) => r[1] === f.address && !r[2].startsWith(";")) : null;
      if (row) return { tab: "isa", line: row[0] };
      if (f.source) return { tab: "source", source: f.source };
      return null;
    };
    findingsBar.replaceChildren(el("details", { class: "findings-box", open: true },
      el("summary", {}, el("b", { text: `Findings (${d.findings.length})` }), el("span", { class: "muted", text: " largest cycles at stake first (attdec advise: evidence and the rules that did not apply)" })),
      el("ol", { class: "findings", id: "findings" }, d.findings.map((f) => {
        const to = target(f);
        return el("li", { "data-rule": f.rule, "data-v": f.cycles },
          el("div", {}, el("b", { text: f.title })),
          el("div", { class: "x" }, `${f.rule} · ${human(f.cycles)} cycles (${pct(f.share)}) · `,
            to ? el("a", { class: "jump", onclick: () => go(to) }, short(f.where)) : short(f.where)),
          el("div", { text: f.suggestion }));
      }))));
  }

  // ---------------------------------------------------------------- overview
  function card(k, v, x, key, exact) {
    const c = el("div", { class: "card" }, el("div", { class: "k", text: k }), el("div", { class: "v", text: v }), x ? el("div", { class: "x", text: x }) : null);
    if (key) { c.dataset.k = key; c.dataset.v = exact; }
    return c;
  }
  function overview(d, sec) {
    const s = d.summary;
    const share = s.latency ? s.stall / s.latency : 0;
    const us = (cyc) => (s.ghz ? ` = ${(cyc / s.ghz / 1000).toFixed(1)} µs` : "");
    sec.append(el("div", { class: "cards", id: "summary" },
      card("kernel", d.kernel || "(unknown)", d.name),
      card("arch", d.arch),
      card("waves", human(s.waves), null, "waves", s.waves),
      card("instructions", human(s.hits), `executed; ${s.listing} in the listing`, "hits", s.hits),
      card("total cycles", human(s.latency), "sum of instruction latency", "latency", s.latency),
      card("stall", human(s.stall), `${pct(share)} of cycles`, "stall", s.stall),
      card("idle", human(s.idle), null, "idle", s.idle),
      card("span", human(s.span), `cycles, first wave to last${us(s.span)}`, "span", s.span),
      s.ghz ? card("shader clock", s.ghz.toFixed(2) + " GHz", "from realtime samples", "ghz", s.ghz) : null));
    if (d.notes.length) sec.append(el("ul", { class: "notes", id: "notes" }, d.notes.map((n) => el("li", { text: n }))));
    const left = el("div"), right = el("div");
    sec.append(el("div", { class: "grid2" }, left, right));
    left.append(el("h2", {}, "Stall by type", el("span", { class: "sub", text: `${human(s.stall)} stall cycles` })));
    left.append(typeChart(d.by_type));
    sec.append(el("h2", {}, `Top ${BY_LABEL[d.by]}s`, el("span", { class: "sub", text: `by stall cycles, ${Math.min(10, d.tables[d.by].length)} of ${d.tables[d.by].length}${prefix ? `; paths under ${prefix}/` : ""}` })));
    sec.append(hotspotTable(d, d.by, 10));
    right.append(el("h2", {}, "Flamegraph", el("span", { class: "sub", text: "stall cycles by inline call chain; click to zoom" })));
    const fl = el("div", { id: "flame" });
    right.append(fl);
    const draw = () => flame(d, fl);
    onShow.overview = draw;
  }
  function typeChart(byType) {
    if (!byType.length) return el("div", { class: "empty", text: "no stall cycles" });
    const w = 420, rowH = 20, lab = 78, max = Math.max(...byType.map((r) => r[2]));
    let svg = `<svg id="types" width="100%" viewBox="0 0 ${w} ${byType.length * rowH + 4}" role="img" aria-label="stall by type">`;
    byType.forEach(([t, stall, share], i) => {
      const y = i * rowH + 2, bw = max ? (share / max) * (w - lab - 110) : 0;
      svg += `<g class="ty" data-type="${esc(t)}" data-v="${stall}" data-share="${share}">` +
        `<text x="${lab - 6}" y="${y + 13}" text-anchor="end">${esc(t)}</text>` +
        `<rect x="${lab}" y="${y + 3}" width="${bw.toFixed(1)}" height="${rowH - 7}" fill="${typeColour(t)}"/>` +
        `<text x="${lab + bw + 5}" y="${y + 13}">${human(stall)}  ${pct(share)}</text></g>`;
    });
    const box = el("div");
    box.innerHTML = svg + "</svg>";
    return box;
  }

  // ---------------------------------------------------------------- hotspot tables
  const BY_LABEL = { line: "source line", instruction: "instruction", file: "source file" };
  function hotspotTable(d, by, limit) {
    const rows = limit ? d.tables[by].slice(0, limit) : d.tables[by];
    const maxShare = Math.max(1e-9, ...rows.map((r) => r[2]));
    const shareCol = { label: "share", num: true, get: (r) => r[2], fmt: (v) => [el("span", { class: "bar", style: `width:${Math.round(60 * v / maxShare)}px` }), " ", pct(v)] };
    const rank = new Map(rows.map((r, i) => [r, i + 1]));
    const cols = [{ label: "#", num: true, nosort: true, get: (r) => rank.get(r) }];
    if (by === "instruction") {
      cols.push({ label: "instruction", key: "key", get: (r) => r[0], cls: "mono" },
        { label: "source", get: (r) => r[7] || "", fmt: short, cls: "mono" },
        { label: "address", num: true, get: (r) => r[8], fmt: hex });
    } else {
      cols.push({ label: BY_LABEL[by], key: "key", get: (r) => r[0], fmt: short, cls: "mono" });
    }
    cols.push({ label: "stall", num: true, key: "stall", get: (r) => r[1], fmt: human },
      shareCol,
      { label: "hits", num: true, key: "hits", get: (r) => r[3], fmt: human },
      { label: "latency", num: true, key: "latency", get: (r) => r[4], fmt: human },
      { label: "idle", num: true, get: (r) => r[5], fmt: human },
      { label: "dominant", get: (r) => r[6], fmt: (v) => (v ? [swatch(typeColour(v)), v] : "-") });
    if (by !== "instruction") cols.push({ label: "instrs", num: true, get: (r) => r[7] });
    const t = table(cols, rows, { sort: cols.findIndex((c) => c.key === "stall"), rowAttrs: () => ({ class: "hs" }) });
    t.table.dataset.by = by;
    return t;
  }
  function hotspots(d, sec) {
    let by = d.by;
    const holder = el("div");
    const seg = el("div", { class: "seg" }, ["line", "instruction", "file"].map((b) => el("button", {
      "data-by": b, "aria-pressed": String(b === by), onclick: () => { by = b; draw(); } }, BY_LABEL[b])));
    function draw() {
      seg.querySelectorAll("button").forEach((x) => x.setAttribute("aria-pressed", String(x.dataset.by === by)));
      holder.replaceChildren(hotspotTable(d, by, 0));
    }
    sec.append(el("h2", {}, "Hotspots", el("span", { class: "sub", text: `ranked by stall cycles; click a header to sort${d.frame === "outer" ? "; charged to the outermost call site" : ""}${prefix ? `; paths under ${prefix}/` : ""}` })),
      el("div", { class: "toolbar" }, seg), holder);
    draw();
  }

  // ---------------------------------------------------------------- source view
  function source(d, sec) {
    if (!d.source.length) {
      sec.append(el("div", { class: "empty", text: "No source lines: the code object has no line table (see the ISA view)." }));
      return;
    }
    const maxStall = Math.max(1, ...d.source.flatMap((f) => f.lines.map((l) => l[4])));
    const list = el("ul", { id: "files" });
    const view = el("div");
    function open(i) {
      list.querySelectorAll("li").forEach((li, j) => li.setAttribute("aria-selected", String(i === j)));
      const f = d.source[i];
      const byNo = new Map(f.lines.map((l) => [l[0], l]));
      let rows;
      if (f.text) {
        rows = f.text.map((txt, k) => [f.text_from + k, txt, byNo.get(f.text_from + k)]);
        for (const l of f.lines) if (l[0] < f.text_from || l[0] >= f.text_from + f.text.length) rows.push([l[0], null, l]);
        rows.sort((a, b) => a[0] - b[0]);
      } else rows = f.lines.map((l) => [l[0], null, l]);
      const cols = [
        { label: "line", num: true, key: "line", get: (r) => r[0] },
        { label: "stall", num: true, key: "stall", get: (r) => (r[2] ? r[2][4] : 0), fmt: (v, r) => (r[2] ? human(v) : ""), heat: (r) => (r[2] ? r[2][4] / maxStall : 0) },
        { label: "with inlined", num: true, key: "total", title: "stall of every instruction whose inline chain passes this line", get: (r) => (r[2] ? r[2][7] : 0), fmt: (v, r) => (r[2] ? human(v) : "") },
        { label: "hits", num: true, get: (r) => (r[2] ? r[2][2] : 0), fmt: (v, r) => (r[2] ? human(v) : "") },
        { label: "latency", num: true, get: (r) => (r[2] ? r[2][3] : 0), fmt: (v, r) => (r[2] ? human(v) : "") },
        { label: "dominant", get: (r) => (r[2] ? r[2][6] : ""), fmt: (v) => (v ? [swatch(typeColour(v)), v] : "") },
      ];
      if (f.text) cols.push({ label: "source", nosort: true, cls: "mono src", get: (r) => (r[1] == null ? "" : r[1]) });
      cols.push({ label: "inline chains (innermost first)", nosort: true, get: (r) => (r[2] ? r[2][9] : []), fmt: (v) => el("div", { class: "chains" }, v.slice(0, 4).map(([c, s]) => el("div", { class: "mono", title: c }, `${human(s)}  ${short(c)}`)), v.length > 4 ? el("div", { text: `… ${v.length - 4} more` }) : null) });
      view.replaceChildren(el("h2", {}, f.file, el("span", { class: "sub", text: `${human(f.stall)} stall on its own lines; ${f.text ? "text found on this machine" : "no source text (use --source-dir)"}` })),
        table(cols, rows, { rowAttrs: (r) => ({ class: r[2] ? "src-line" : "dim", "data-line": r[0] }) }));
    }
    d.source.forEach((f, i) => list.append(el("li", { onclick: () => open(i), title: f.file },
      el("div", { class: "mono", text: short(f.file) }),
      el("div", { class: "x", text: `${human(f.stall)} stall (${pct(f.stall / Math.max(1, d.summary.stall))}), ${human(f.hits)} hits` }))));
    sec.append(el("h2", {}, "Source", el("span", { class: "sub", text: "per-line stall (heat), the chains each line is inlined through" })),
      el("div", { class: "files" }, list, view));
    open(0);
    targets.source = {
      goto(loc) { // "file:line[:column]", the innermost frame of a chain
        const m = /^(.*?):(\d+)(?::\d+)?$/.exec(String(loc).split(" -> ")[0].trim());
        const i = d.source.findIndex((f) => f.file === (m ? m[1] : loc));
        if (i < 0) return;
        open(i);
        const tr = m && view.querySelector(`tr[data-line="${m[2]}"]`);
        if (!tr) return;
        tr.classList.add("selected");
        tr.scrollIntoView({ block: "center" });
        tr.classList.add("flash");
        setTimeout(() => tr.classList.remove("flash"), 1200);
      },
    };
  }

  // ---------------------------------------------------------------- ISA view
  // The listing with attdec's per-instruction figures; for one selected wave, an arrow from each memory
  // operation to the wait that waited for it (attdec waits for that wave) and its loop iterations (attdec loops).
  function waveLabel(M, i) {
    const k = M.lanes[M.lane[i]].key;
    return `SE${k[0]} CU${k[1]} SIMD${k[2]} slot ${k[3]} wv${M.seq[i]}`;
  }
  function perWave(d) {
    if (d._pw) return d._pw;
    const L = d.wave.links, n = unpack(L.n), off = new Uint32Array(n.length + 1);
    for (let i = 0; i < n.length; i++) off[i + 1] = off[i] + n[i];
    const links = { off, wait: unpack(L.wait), producer: unpack(L.producer), executions: unpack(L.executions), stall: unpack(L.stall) };
    const loops = d.wave.loops.map((lp) => {
      const m = unpack(lp.n), o = new Uint32Array(m.length + 1);
      for (let i = 0; i < m.length; i++) o[i + 1] = o[i] + m[i];
      return { ...lp, off: o, cycles: unpack(lp.cycles), flags: unpack(lp.flags), start: unpack(lp.start), bodySet: new Set(lp.body) };
    });
    d._pw = { links, loops };
    return d._pw;
  }
  function isa(d, sec) {
    const rows = d.isa;
    const maxStall = Math.max(1, ...rows.map((r) => r[6]));
    const out = new Map(), into = new Map();
    for (const [a, b, label] of d.links) {
      if (!out.has(a)) out.set(a, []);
      out.get(a).push([b, label]);
      if (!into.has(b)) into.set(b, []);
      into.get(b).push([a, label]);
    }
    const M = d.timeline ? (d._tl || (d._tl = timelineModel(d))) : null;
    const PW = M ? perWave(d) : null;
    const state = { wave: -1, loop: -1, iter: 0 };
    let iterRows = new Map(); // listing line -> [first issue after the iteration's start, stall, executions]
    let box;
    let selected = null; // the listing line last jumped to: marked until another is
    const mark = () => box.querySelectorAll("tr[data-line]").forEach((r) => r.classList.toggle("selected", +r.dataset.line === selected));
    const jump = (line) => {
      const tr = box.querySelector(`tr[data-line="${line}"]`);
      if (!tr) return;
      selected = line;
      mark();
      tr.scrollIntoView({ block: "center" });
      tr.classList.add("flash");
      setTimeout(() => tr.classList.remove("flash"), 1200);
    };
    const GUTTER = 96;
    const cols = [
      { label: "", nosort: true, cls: "gutter", title: "arrows of the selected wave: from each memory operation to the wait that waited for it", get: () => "" },
      { label: "line", num: true, get: (r) => r[0] },
      { label: "address", num: true, get: (r) => r[1], fmt: hex },
      { label: "instruction", cls: "mono", get: (r) => r[2] },
      { label: "hits", num: true, key: "hits", get: (r) => r[4], fmt: human },
      { label: "latency", num: true, key: "latency", get: (r) => r[5], fmt: human },
      { label: "stall", num: true, key: "stall", get: (r) => r[6], fmt: human, heat: (r) => r[6] / maxStall },
      { label: "idle", num: true, get: (r) => r[7], fmt: human },
      { label: "type", get: (r) => r[8], fmt: (v) => (v ? [swatch(typeColour(v)), v] : "") },
      { label: "iteration", num: true, key: "iter-issue", title: "the selected loop iteration of the selected wave: cycles from the iteration's start to this instruction's first issue in it", get: (r) => (iterRows.has(r[0]) ? iterRows.get(r[0])[0] : -1), fmt: (v) => (v >= 0 ? "+" + exact(v) : "") },
      { label: "iter. stall", num: true, key: "iter-stall", title: "its stall in that iteration", get: (r) => (iterRows.has(r[0]) ? iterRows.get(r[0])[1] : -1), fmt: (v) => (v >= 0 ? human(v) : "") },
      { label: "counters", cls: "mono", get: (r) => r[9] },
      { label: "source", cls: "mono", get: (r) => r[3], fmt: (v) => (v ? el("a", { class: "jump", title: "open in the source view", onclick: () => go({ tab: "source", source: v }) }, short(v)) : "") },
    ];
    if (d.links.length) {
      const refs = (m, arrow) => (r) => (m.get(r[0]) || []).map(([l, label]) => el("div", {}, el("a", { class: "jump", onclick: () => go({ tab: "isa", line: l }) }, `${arrow} ${l}`), label ? ` ${label}` : ""));
      cols.splice(4, 0, { label: "links (all waves)", nosort: true, cls: "links", title: "→ rows this one links to (a wait: the operations it waited for in any wave, with their share of its stall); ← rows linking to this one; click to jump", get: (r) => r[0], fmt: (v, r) => [...refs(out, "→")(r), ...refs(into, "←")(r)] });
    }
    let shownRows = rows;
    const filter = el("input", { type: "search", placeholder: "filter: text, source or address", oninput: () => {
      const q = filter.value.trim().toLowerCase();
      shownRows = q ? rows.filter((r) => r[2].toLowerCase().includes(q) || r[3].toLowerCase().includes(q) || hex(r[1]).includes(q)) : rows;
      box.table.setRows(shownRows);
    } });
    const overlay = el("div", { class: "arrows-box" });
    overlay.innerHTML = '<svg class="arrows" id="isa-arrows"></svg>';
    const arrowsSvg = overlay.firstChild;
    arrowsSvg.addEventListener("click", (e) => { const p = e.target.closest("path.arrow"); if (p) go({ tab: "isa", line: +p.dataset.wait }); });
    function drawArrows() {
      if (!box || !PW || state.wave < 0) { arrowsSvg.innerHTML = ""; return; }
      const t = box.table, L = PW.links, w = state.wave;
      arrowsSvg.setAttribute("height", t.offsetHeight);
      arrowsSvg.style.top = t.offsetTop + "px";
      arrowsSvg.dataset.wave = w;
      const y = (line) => { const tr = t.querySelector(`tr[data-line="${line}"]`); return tr ? tr.offsetTop + tr.offsetHeight / 2 : null; };
      const arrows = [];
      for (let k = L.off[w]; k < L.off[w + 1]; k++) arrows.push([L.producer[k], L.wait[k], L.executions[k], L.stall[k]]);
      // nest by span: shorter arrows inside, so that no two at one depth overlap
      arrows.sort((a, b) => Math.abs(a[1] - a[0]) - Math.abs(b[1] - b[0]));
      const taken = [];
      const maxStallW = Math.max(1, ...arrows.map((a) => a[3]));
      let svg = '<defs><marker id="isa-head" viewBox="0 0 6 6" refX="5" refY="3" markerWidth="5" markerHeight="5" orient="auto"><path d="M0,0 L6,3 L0,6 z" fill="#2f6fdb"/></marker></defs>';
      for (const [p, wt, n, st] of arrows) {
        const y0 = y(p), y1 = y(wt);
        const lo = Math.min(p, wt), hi = Math.max(p, wt);
        let depth = 0;
        while ((taken[depth] || []).some(([a, b]) => a <= hi && lo <= b)) depth++;
        (taken[depth] = taken[depth] || []).push([lo, hi]);
        const x1 = GUTTER - 6, x0 = Math.max(4, GUTTER - 14 - depth * 7);
        const shown = y0 != null && y1 != null;
        svg += `<path class="arrow${shown ? "" : " hidden"}" d="${shown ? `M${x1},${y0} H${x0} V${y1} H${x1 - 1}` : ""}" marker-end="url(#isa-head)" ` +
          `stroke-width="${(1 + 2 * st / maxStallW).toFixed(2)}" data-producer="${p}" data-wait="${wt}" data-executions="${n}" data-stall="${st}">` +
          `<title>line ${p} → wait at line ${wt}: ${n} time(s), ${exact(st)} stall cycles charged</title></path>`;
      }
      arrowsSvg.innerHTML = svg;
    }
    // loop navigator
    const waveSel = el("select", { id: "isa-wave", "aria-label": "wave", onchange: () => go({ tab: "isa", wave: +waveSel.value }) });
    const loopSel = el("select", { id: "isa-loop", "aria-label": "loop", onchange: () => go({ tab: "isa", wave: state.wave, loop: +loopSel.value, iter: 0 }) });
    const iterIn = el("input", { id: "isa-iter", type: "number", min: 1, value: 1, "aria-label": "iteration", onchange: () => go({ tab: "isa", wave: state.wave, loop: state.loop, iter: +iterIn.value - 1 }) });
    const iterInfo = el("span", { id: "isa-iter-info", class: "muted" });
    const step = (k) => () => go({ tab: "isa", wave: state.wave, loop: state.loop, iter: state.iter + k });
    const nav = el("span", { class: "loopnav" }, "loop ", loopSel, " iteration ",
      el("button", { class: "b", id: "iter-prev", onclick: step(-1), title: "previous iteration" }, "◀"), iterIn,
      el("button", { class: "b", id: "iter-next", onclick: step(1), title: "next iteration" }, "▶"), iterInfo);
    if (M) {
      const L = PW.links;
      for (let i = 0; i < M.nW; i++) {
        const k = M.lanes[M.lane[i]].key;
        waveSel.append(el("option", { value: i, "data-se": k[0], "data-cu": k[1], "data-simd": k[2], "data-slot": k[3], "data-wave": M.seq[i], "data-pairs": L.off[i + 1] - L.off[i] },
          `${waveLabel(M, i)} — ${L.off[i + 1] - L.off[i]} wait pairs${M.insts.get(i) ? "" : " (no instructions embedded)"}`));
      }
    }
    function loopsOf(w) { return PW ? PW.loops.map((lp, j) => [lp, j]).filter(([lp]) => lp.off[w + 1] > lp.off[w]) : []; }
    function applyLoop() {
      iterRows = new Map();
      box.querySelectorAll("tr.inloop").forEach((tr) => tr.classList.remove("inloop", "header"));
      const lp = state.loop >= 0 ? PW.loops[state.loop] : null;
      if (!lp || state.wave < 0 || lp.off[state.wave + 1] === lp.off[state.wave]) {
        iterInfo.textContent = loopsOf(state.wave).length ? "" : "no loop iterations in this wave";
        iterInfo.dataset.cycles = "";
        nav.dataset.loop = "";
        return;
      }
      const o = lp.off[state.wave], n = lp.off[state.wave + 1] - o;
      state.iter = Math.max(0, Math.min(n - 1, state.iter));
      const k = o + state.iter, f = lp.flags[k];
      iterIn.max = n; iterIn.value = state.iter + 1;
      nav.dataset.loop = lp.id;
      iterInfo.dataset.cycles = lp.cycles[k];
      iterInfo.textContent = `of ${n}: ${exact(lp.cycles[k])} cycles${f & 1 ? ", first of its trip" : ""}${f & 2 ? ", outlier" : ""}${f & 4 ? "" : ", left the loop"}`;
      for (const line of lp.body) { const tr = box.querySelector(`tr[data-line="${line}"]`); if (tr) tr.classList.add("inloop"); }
      const head = box.querySelector(`tr[data-line="${lp.header}"]`);
      if (head) head.classList.add("header");
      const span = M.insts.get(state.wave);
      if (span) { // the iteration's records: from its start while inside the body, up to the next start
        const I = M.insts, r0 = span[0] + lp.start[k], t0 = I.time[r0];
        for (let r = r0; r < span[1]; r++) {
          const line = I.line[r] - 1;
          if (!lp.bodySet.has(line) || (r > r0 && line === lp.header)) break;
          const e = iterRows.get(line);
          if (e) { e[1] += I.stall[r]; e[2]++; } else iterRows.set(line, [I.time[r] - t0, I.stall[r], 1]);
        }
      } else iterInfo.textContent += " (per-instruction timing: this wave's instructions are not embedded, see notes)";
    }
    function setWave(w, loop, iter) {
      state.wave = w;
      waveSel.value = String(w);
      const ls = loopsOf(w);
      loopSel.replaceChildren(...ls.map(([lp, j]) => el("option", { value: j }, `L${lp.id} at line ${lp.header}${lp.main ? " (main)" : ""}, depth ${lp.depth}: ${lp.off[w + 1] - lp.off[w]} iterations`)));
      state.loop = ls.some(([, j]) => j === loop) ? loop : (ls.length ? (ls.find(([lp]) => lp.main) || ls[0])[1] : -1);
      if (state.loop >= 0) loopSel.value = String(state.loop);
      state.iter = iter || 0;
      nav.hidden = !ls.length;
      applyLoop();
      box.table.setRows(shownRows);
      sec.dataset.wave = w;
    }
    box = table(cols, rows, { limit: 100000, rowAttrs: (r) => ({ "data-line": r[0], class: r[2].startsWith(";") ? "label" : "inst" }),
      after: (tbody) => {
        if (state.loop >= 0) { // keep the loop's rows marked across re-renders
          const lp = PW.loops[state.loop];
          for (const line of lp.body) { const tr = tbody.querySelector(`tr[data-line="${line}"]`); if (tr) tr.classList.add("inloop"); }
          const head = tbody.querySelector(`tr[data-line="${lp.header}"]`); if (head) head.classList.add("header");
        }
        if (selected != null) mark();
        requestAnimationFrame(drawArrows);
      } });
    box.classList.add("isa");
    box.style.setProperty("--gutter", GUTTER + "px");
    box.prepend(arrowsSvg);
    const waves = M ? M.nW : 0;
    sec.append(el("h2", {}, "ISA", el("span", { class: "sub", text: `${rows.length} listing rows; per-instruction hits, latency, stall and stall type over all waves; arrows: the selected wave's memory operations to the waits that waited for them${d.links.length ? `; ${d.links.length} links` : ""}` })),
      el("div", { class: "toolbar" }, filter, M ? el("span", {}, "wave ", waveSel) : null, nav), box);
    if (waves) {
      // the first wave with arrows, one whose instructions are embedded (iteration timing) if any
      const has = (i) => PW.links.off[i + 1] > PW.links.off[i];
      let first = 0;
      for (let i = waves - 1; i >= 0; i--) if (has(i) && M.insts.get(i)) first = i;
      if (!has(first)) for (let i = waves - 1; i >= 0; i--) if (has(i)) first = i;
      setWave(first, -1, 0);
    } else nav.hidden = true;
    onShow.isa = drawArrows;
    targets.isa = {
      jump,
      select(s) {
        if (!M) return;
        if (s.wave != null && (s.wave !== state.wave || (s.loop != null && s.loop !== state.loop) || (s.iter != null && s.iter !== state.iter))) setWave(s.wave, s.loop == null ? state.loop : s.loop, s.iter == null ? 0 : s.iter);
      },
      state: () => ({ ...state }),
    };
  }

  // ---------------------------------------------------------------- flamegraph
  function flameTree(f) {
    const nt = STALL_TYPES.length;
    const mk = (name, parent) => ({ name, value: 0, types: new Float64Array(nt), kids: new Map(), parent });
    const root = mk("all", null);
    for (const [idx, ti, stall] of f.stacks) {
      let n = root;
      n.value += stall; n.types[ti] += stall;
      for (const i of idx) {
        let c = n.kids.get(i);
        if (!c) { c = mk(f.frames[i], n); n.kids.set(i, c); }
        c.value += stall; c.types[ti] += stall;
        n = c;
      }
    }
    return root;
  }
  function flame(d, box) {
    if (!d._flame) {
      let root = flameTree(d.flame);
      if (root.kids.size === 1) { root = root.kids.values().next().value; root.parent = null; } // one kernel: it is the root
      d._flame = { root };
    }
    const st = d._flame;
    if (!st.focus) st.focus = st.root;
    const W = box.clientWidth || 800, rowH = 18;
    if (!st.root.value) { box.replaceChildren(el("div", { class: "empty", text: "no stall cycles" })); return; }
    const nodes = [];
    let svg = "", depth = 0;
    const chain = [];
    for (let n = st.focus.parent; n; n = n.parent) chain.unshift(n);
    const rect = (n, x, w, y) => {
      const id = nodes.push(n) - 1;
      let best = 0;
      n.types.forEach((v, i) => { if (v > n.types[best]) best = i; });
      const name = short(n.name);
      const label = w > 30 ? name.slice(0, Math.floor((w - 6) / 6.2)) : "";
      svg += `<g class="fl" data-i="${id}" data-v="${n.value}"><rect x="${x.toFixed(1)}" y="${y}" width="${Math.max(0.5, w - 0.5).toFixed(1)}" height="${rowH - 1}" fill="${TYPE_COLOURS[best]}" opacity="${n === st.focus || chain.includes(n) ? 1 : 0.85}"/>` +
        (label ? `<text x="${(x + 3).toFixed(1)}" y="${y + 12.5}">${esc(label)}</text>` : "") + "</g>";
    };
    for (const n of chain) { rect(n, 0, W, depth * rowH); depth++; }
    const walk = (n, x, w, dep) => {
      rect(n, x, w, dep * rowH);
      let cx = x;
      const kids = [...n.kids.values()].sort((a, b) => (a.name < b.name ? -1 : 1));
      for (const c of kids) {
        const cw = (c.value / n.value) * w;
        if (cw >= 0.5) walk(c, cx, cw, dep + 1);
        cx += cw;
      }
      depth = Math.max(depth, dep + 1);
    };
    walk(st.focus, 0, W, depth);
    box.innerHTML = `<svg width="${W}" height="${depth * rowH}" data-root="${st.root.value}" role="img" aria-label="flamegraph">${svg}</svg>`;
    const svgEl = box.firstChild;
    const nodeOf = (e) => { const g = e.target.closest("g.fl"); return g ? nodes[+g.dataset.i] : null; };
    svgEl.addEventListener("click", (e) => { const n = nodeOf(e); if (n) { st.focus = n === st.focus && n.parent ? n.parent : n; flame(d, box); } });
    svgEl.addEventListener("mousemove", (e) => {
      const n = nodeOf(e);
      if (!n) return hideTip();
      const parts = [...n.types].map((v, i) => [v, i]).filter((x) => x[0] > 0).sort((a, b) => b[0] - a[0]).slice(0, 4)
        .map(([v, i]) => `<div><span class="swatch" style="background:${TYPE_COLOURS[i]}"></span>${esc(STALL_TYPES[i])} ${human(v)}</div>`).join("");
      showTip(e, `<div class="mono">${esc(n.name)}</div><div>${human(n.value)} stall cycles, ${pct(n.value / st.root.value)} of all${n.parent ? `, ${pct(n.value / n.parent.value)} of its caller` : ""}</div>${parts}`);
    });
    svgEl.addEventListener("mouseleave", hideTip);
  }

  // ---------------------------------------------------------------- timeline model
  function timelineModel(d) {
    const T = d.timeline;
    const lane = unpack(T.waves.lane), seq = unpack(T.waves.seq), rel = unpack(T.waves.begin), dur = unpack(T.waves.dur);
    const nW = lane.length;
    const begin = new Float64Array(nW), end = new Float64Array(nW);
    for (let i = 0; i < nW; i++) { begin[i] = T.t0 + rel[i]; end[i] = begin[i] + dur[i]; }
    const lanes = T.lanes.map((k) => ({ key: k, waves: [] }));
    for (let i = 0; i < nW; i++) lanes[lane[i]].waves.push(i);
    for (const l of lanes) l.waves.sort((a, b) => begin[a] - begin[b]);
    const tracks = {};
    for (const [kind, tr] of Object.entries(T.tracks)) {
      const n = unpack(tr.n), dt = unpack(tr.dt), v = unpack(tr.v);
      const off = new Uint32Array(nW + 1), start = new Float64Array(dt.length);
      for (let i = 0; i < nW; i++) off[i + 1] = off[i] + n[i];
      for (let i = 0; i < nW; i++) {
        let t = begin[i];
        for (let r = off[i]; r < off[i + 1]; r++) { t += dt[r]; start[r] = t; }
      }
      tracks[kind] = { q: tr.q, exact: tr.exact, names: tr.names, off, start, v };
    }
    const insts = new Map();
    if (T.insts) {
      const ws = unpack(T.insts.waves), n = unpack(T.insts.n), dt = unpack(T.insts.dt);
      const cols = { dur: unpack(T.insts.dur), stall: unpack(T.insts.stall), line: unpack(T.insts.line), cat: unpack(T.insts.cat) };
      const time = new Float64Array(dt.length);
      let o = 0;
      ws.forEach((w, j) => {
        let t = begin[w];
        for (let r = o; r < o + n[j]; r++) { t += dt[r]; time[r] = t; }
        insts.set(w, [o, o + n[j]]);
        o += n[j];
      });
      Object.assign(insts, { time, ...cols });
    }
    const ninst = unpack(T.waves.insts), wstall = unpack(T.waves.stall);
    return { T, nW, lane, seq, begin, end, lanes, tracks, insts, ninst, wstall, t0: T.t0, t1: T.end };
  }

  // ---------------------------------------------------------------- timeline view
  function niceTicks(a, b, n) {
    const span = b - a, raw = span / n, p = Math.pow(10, Math.floor(Math.log10(raw)));
    const step = [1, 2, 5, 10].map((m) => m * p).find((s) => s >= raw) || 10 * p;
    const out = [];
    for (let t = Math.ceil(a / step) * step; t <= b; t += step) out.push(t);
    return out;
  }
  function timeline(d, sec) {
    if (!d.timeline) { sec.append(el("div", { class: "empty", text: "No traced waves in this dispatch." })); return; }
    const M = d._tl || (d._tl = timelineModel(d));
    const occ = d.occupancy;
    const occSeries = occ ? occ.series.map((s) => {
      const dt = unpack(s.t), t = new Float64Array(dt.length);
      let x = s.t0;
      for (let i = 0; i < dt.length; i++) { x += dt[i]; t[i] = x; }
      return { se: s.se, t, c: s.c, peak: s.peak };
    }) : [];
    let full0 = M.t0, full1 = M.t1;
    for (const s of occSeries) if (s.t.length) { full0 = Math.min(full0, s.t[0]); full1 = Math.max(full1, s.t[s.t.length - 1]); }
    const view = { a: full0, b: full1, kind: "state" };
    const isaByLine = new Map(d.isa.map((r) => [r[0], r]));
    const ghz = d.summary.ghz;
    const L = 118; // label gutter (px)

    const legend = el("div", { class: "legend", id: "tl-legend" });
    const range = el("span", { class: "muted mono" });
    const kindSeg = el("div", { class: "seg" }, [["state", "wave state"], ["category", "instruction category"]].map(([k, label]) =>
      el("button", { "data-kind": k, "aria-pressed": String(k === view.kind), onclick: () => { view.kind = k; kindSeg.querySelectorAll("button").forEach((b) => b.setAttribute("aria-pressed", String(b.dataset.kind === k))); drawAll(); } }, label)));
    const zoom = (f, c) => {
      const mid = c == null ? (view.a + view.b) / 2 : c;
      const span = Math.min(full1 - full0, Math.max(20, (view.b - view.a) * f));
      let a = mid - (mid - view.a) * (span / (view.b - view.a));
      a = Math.max(full0, Math.min(a, full1 - span));
      view.a = a; view.b = a + span;
      drawAll();
    };
    const bar = el("div", { class: "toolbar" }, el("span", {}, "colour by "), kindSeg,
      el("button", { class: "b", onclick: () => zoom(0.5) }, "zoom in"),
      el("button", { class: "b", onclick: () => zoom(2) }, "zoom out"),
      el("button", { class: "b", onclick: () => { view.a = full0; view.b = full1; drawAll(); } }, "reset"),
      range);
    const occBox = el("div", { class: "canvasbox occ" });
    const occCanvas = el("canvas", { id: "occupancy", "data-peak": Math.max(0, ...occSeries.map((s) => s.peak)) });
    occBox.append(occCanvas);
    const laneBox = el("div", { class: "canvasbox lanes" });
    const canvas = el("canvas", { id: "lanes", "data-lanes": M.lanes.length, "data-waves": M.nW });
    laneBox.append(canvas);
    const q = M.tracks.state ? M.tracks.state.q : 1;
    sec.append(el("h2", {}, "Wave timeline", el("span", { class: "sub", text: `${M.nW} waves in ${M.lanes.length} lanes (SE / CU / SIMD / slot); wheel or buttons to zoom, drag to pan, double-click to reset` })),
      bar, legend, el("h2", {}, "Occupancy", el("span", { class: "sub", text: occ ? `${occ.what}${occ.q > 1 ? `, mean over ${occ.q}-cycle cells` : ""}` : "no occupancy records" })),
      el("div", { class: "legend" }, occSeries.map((s, k) => el("span", {}, swatch(SE_COLOURS[k % SE_COLOURS.length]), `SE${s.se} (peak ${s.peak})`))),
      occBox, el("h2", {}, "Waves", el("span", { class: "sub", text: q > 1 ? `states on a ${q}-cycle grid (see notes)` : "" })), laneBox);

    // Lane geometry: SEs separated by a gap.
    const rowsY = [];
    const lh = Math.max(3, Math.min(16, Math.floor(620 / Math.max(1, M.lanes.length))));
    let y = 22;
    M.lanes.forEach((l, i) => {
      if (i && l.key[0] !== M.lanes[i - 1].key[0]) y += 6;
      rowsY.push(y);
      y += lh;
    });
    const lanesH = y + 4, occH = occ ? 130 : 0;

    function setup(cv, h) {
      const w = cv.parentElement.clientWidth || 900, r = window.devicePixelRatio || 1;
      cv.width = Math.round(w * r); cv.height = Math.round(h * r);
      cv.style.width = w + "px"; cv.style.height = h + "px";
      const ctx = cv.getContext("2d");
      ctx.setTransform(r, 0, 0, r, 0, 0);
      return [ctx, w];
    }
    const X = (t, w) => L + ((t - view.a) / (view.b - view.a)) * (w - L - 8);
    const Tm = (x, w) => view.a + ((x - L) / (w - L - 8)) * (view.b - view.a);
    function axis(ctx, w, top, h) {
      ctx.fillStyle = "#5f6b7a"; ctx.strokeStyle = "#eef0f3"; ctx.font = "11px system-ui, sans-serif"; ctx.textAlign = "center";
      const ticks = niceTicks(view.a, view.b, Math.max(2, Math.floor((w - L) / 110)));
      let labels = ticks.map(human);
      if (labels.some((l, i) => i && l === labels[i - 1])) labels = ticks.map(exact); // zoomed in far
      ticks.forEach((t, i) => {
        const x = X(t, w);
        ctx.beginPath(); ctx.moveTo(x, top); ctx.lineTo(x, h); ctx.stroke();
        ctx.fillText(labels[i], x, top - 6);
      });
      ctx.textAlign = "left";
    }
    function drawLanes() {
      const [ctx, w] = setup(canvas, lanesH);
      ctx.clearRect(0, 0, w, lanesH);
      axis(ctx, w, 16, lanesH);
      const tr = M.tracks[view.kind];
      const colours = view.kind === "state" ? STATE_COLOURS : CATEGORY_COLOURS;
      ctx.font = "10px system-ui, sans-serif";
      M.lanes.forEach((l, li) => {
        const y0 = rowsY[li], k = l.key;
        const first = li === 0 || M.lanes[li - 1].key[2] !== k[2] || M.lanes[li - 1].key[1] !== k[1] || M.lanes[li - 1].key[0] !== k[0];
        if (lh >= 9 || first) {
          ctx.fillStyle = "#5f6b7a";
          ctx.fillText(lh >= 9 ? `SE${k[0]} CU${k[1]} SIMD${k[2]} slot ${k[3]}${k[4] ? "'" : ""}` : `SE${k[0]} CU${k[1]} SIMD${k[2]}`, 4, y0 + Math.min(lh, 10) - 1);
        }
        for (const wv of l.waves) {
          const b = M.begin[wv], e = M.end[wv];
          if (e < view.a || b > view.b) continue;
          if (!tr || tr.off[wv] === tr.off[wv + 1]) {
            ctx.fillStyle = "#dfe3e8";
            ctx.fillRect(X(Math.max(b, view.a), w), y0, Math.max(0.5, X(Math.min(e, view.b), w) - X(Math.max(b, view.a), w)), lh - 1);
            continue;
          }
          const lo = tr.off[wv], hi = tr.off[wv + 1];
          let r = Math.max(lo, upper(tr.start, view.a, lo, hi) - 1);
          for (; r < hi; r++) {
            const s = tr.start[r], en = r + 1 < hi ? tr.start[r + 1] : e;
            if (s > view.b) break;
            const x0 = X(Math.max(s, view.a), w), x1 = X(Math.min(en, view.b), w);
            ctx.fillStyle = colours[tr.v[r]] || "#999";
            ctx.fillRect(x0, y0, Math.max(0.4, x1 - x0), lh - 1);
          }
          ctx.fillStyle = "#1d2430";
          ctx.fillRect(X(Math.max(b, view.a), w), y0, b >= view.a ? 1 : 0, lh - 1);
        }
      });
      legend.replaceChildren(...tr.names.map((n, i) => el("span", {}, swatch(colours[i] || "#999"), n)).filter((_, i) => i > 0 || view.kind === "state"));
      range.textContent = `${exact(view.a)} – ${exact(view.b)} cycles`;
    }
    function drawOcc() {
      if (!occ) return;
      const [ctx, w] = setup(occCanvas, occH);
      ctx.clearRect(0, 0, w, occH);
      axis(ctx, w, 16, occH);
      const top = 22, h = occH - top - 6;
      const peak = Math.max(1, ...occSeries.map((s) => Math.max(...s.c)));
      ctx.fillStyle = "#5f6b7a"; ctx.font = "10px system-ui, sans-serif";
      ctx.fillText(`${human(peak)} waves`, 4, top + 8); ctx.fillText("0", 4, top + h);
      ctx.fillText("resident", 4, top + h / 2 + 4);
      const Y = (c) => top + h - (c / peak) * h;
      occSeries.forEach((s, k) => {
        ctx.strokeStyle = SE_COLOURS[k % SE_COLOURS.length]; ctx.lineWidth = 1.2; ctx.beginPath();
        let started = false;
        const i0 = Math.max(0, upper(s.t, view.a, 0, s.t.length) - 1);
        for (let i = i0; i < s.t.length; i++) {
          const x = X(Math.max(s.t[i], view.a), w), yv = Y(s.c[i]);
          if (!started) { ctx.moveTo(x, yv); started = true; } else ctx.lineTo(x, yv);
          const nx = i + 1 < s.t.length ? s.t[i + 1] : s.t[i];
          ctx.lineTo(X(Math.min(nx, view.b), w), yv);
          if (nx > view.b) break;
        }
        ctx.stroke();
      });
    }
    function drawAll() { drawOcc(); drawLanes(); }

    const usOf = (t) => (ghz ? ` (${((t - full0) / ghz / 1000).toFixed(3)} µs)` : "");
    function hoverLanes(e) {
      const r = canvas.getBoundingClientRect(), x = e.clientX - r.left, yy = e.clientY - r.top, w = r.width;
      if (x < L) return hideTip();
      const li = rowsY.findIndex((y0) => yy >= y0 && yy < y0 + lh);
      if (li < 0) return hideTip();
      const t = Tm(x, w), l = M.lanes[li];
      const ws = l.waves;
      let j = -1;
      for (let lo = 0, hi = ws.length; lo < hi;) { const m = (lo + hi) >> 1; if (M.begin[ws[m]] <= t) { j = m; lo = m + 1; } else hi = m; }
      const k = l.key;
      let html = `<div class="m">SE${k[0]} CU${k[1]} SIMD${k[2]} slot ${k[3]} — cycle ${exact(t)}${usOf(t)}</div>`;
      if (j < 0 || t > M.end[ws[j]]) return showTip(e, html + "<div>(no wave)</div>");
      const wv = ws[j];
      html += `<div>wave ${M.seq[wv]}: ${exact(M.begin[wv])} – ${exact(M.end[wv])}, ${M.ninst[wv]} instructions, ${human(M.wstall[wv])} stall</div>`;
      const tr = M.tracks[view.kind];
      if (tr) {
        const lo = tr.off[wv], hi = tr.off[wv + 1], ri = upper(tr.start, t, lo, hi) - 1;
        if (ri >= lo) {
          const en = ri + 1 < hi ? tr.start[ri + 1] : M.end[wv];
          html += `<div><span class="swatch" style="background:${(view.kind === "state" ? STATE_COLOURS : CATEGORY_COLOURS)[tr.v[ri]]}"></span>${tr.names[tr.v[ri]]} ${exact(tr.start[ri])} – ${exact(en)}${tr.q > 1 ? ` <span class="m">(${tr.q}-cycle grid)</span>` : ""}</div>`;
        }
      }
      const span = M.insts.get(wv);
      if (span) {
        const I = M.insts, ii = upper(I.time, t, span[0], span[1]) - 1;
        if (ii >= span[0]) {
          const row = isaByLine.get(I.line[ii] - 1);
          const what = row ? row[2] : "(instruction not in the listing)";
          html += `<div class="mono">${esc(what)}</div><div>issued at ${exact(I.time[ii])}, duration ${human(I.dur[ii])}, stall ${human(I.stall[ii])}${row && row[8] ? `, ${esc(row[8])}` : ""}</div>` +
            (row && row[3] ? `<div class="m mono">${esc(row[3])}</div>` : "");
        }
      } else html += `<div class="m">instructions of this wave are not embedded (see notes)</div>`;
      showTip(e, html);
    }
    function hoverOcc(e) {
      const r = occCanvas.getBoundingClientRect(), x = e.clientX - r.left;
      if (x < L) return hideTip();
      const t = Tm(x, r.width);
      const parts = occSeries.map((s, k) => {
        const i = upper(s.t, t, 0, s.t.length) - 1;
        return `<div><span class="swatch" style="background:${SE_COLOURS[k % SE_COLOURS.length]}"></span>SE${s.se}: ${i >= 0 ? s.c[i] : 0} waves (peak ${s.peak})</div>`;
      }).join("");
      showTip(e, `<div class="m">cycle ${exact(t)}${usOf(t)}</div>${parts}`);
    }
    for (const cv of [canvas, occCanvas]) {
      cv.addEventListener("wheel", (e) => {
        e.preventDefault();
        const r = cv.getBoundingClientRect();
        zoom(Math.exp(e.deltaY * 0.0015), Tm(e.clientX - r.left, r.width));
      }, { passive: false });
      let drag = null;
      cv.addEventListener("mousedown", (e) => { drag = { x: e.clientX, a: view.a, b: view.b }; cv.classList.add("drag"); });
      window.addEventListener("mouseup", () => { drag = null; cv.classList.remove("drag"); });
      cv.addEventListener("mousemove", (e) => {
        if (drag) {
          const w = cv.getBoundingClientRect().width - L - 8, span = drag.b - drag.a;
          let a = drag.a - ((e.clientX - drag.x) / w) * span;
          a = Math.max(full0, Math.min(a, full1 - span));
          view.a = a; view.b = a + span;
          drawAll();
          return hideTip();
        }
        (cv === canvas ? hoverLanes : hoverOcc)(e);
      });
      cv.addEventListener("mouseleave", hideTip);
      cv.addEventListener("dblclick", () => { view.a = full0; view.b = full1; drawAll(); });
    }
    onShow.timeline = drawAll;
  }

  // ---------------------------------------------------------------- extra tables (later analyses)
  function extra(x, sec) {
    sec.append(el("h2", {}, x.title, x.note ? el("span", { class: "sub", text: x.note }) : null));
    const numeric = x.columns.map((_, i) => x.rows.length && x.rows.every((r) => typeof r[i] === "number"));
    sec.append(table(x.columns.map((c, i) => ({ label: c, num: numeric[i], get: (r) => r[i], fmt: numeric[i] ? (v) => (Number.isInteger(v) ? v.toLocaleString("en") : v.toFixed(3)) : null })), x.rows));
  }

  // ---------------------------------------------------------------- what registered tabs may use
  const API = { data: DATA, el, esc, human, pct, exact, unpack, upper, showTip, hideTip, swatch, table, niceTicks,
    timelineModel, STATE_COLOURS, CATEGORY_COLOURS, SE_COLOURS, TYPE_COLOURS,
    onShow: (id, fn) => { onShow[id] = fn; } };

  // ---------------------------------------------------------------- one dispatch
  function renderDispatch(i) {
    current = i;
    const d = DATA.dispatches[i];
    prefix = d.prefix || "";
    for (const k of Object.keys(onShow)) delete onShow[k];
    setTabs(d.extra);
    const views = { overview, hotspots, source, isa, timeline };
    for (const [id, view] of Object.entries(views)) pending[id] = () => view(d, sections[id]);
    for (const t of PLUGINS) pending[t.id] = () => t.draw(d, sections[t.id], API);
    d.extra.forEach((x, j) => { pending["extra" + j] = () => extra(x, sections["extra" + j]); });
    for (const k of Object.keys(targets)) delete targets[k];
    findings(d);
    if (select) select.value = String(i);
    document.body.dataset.dispatch = d.name;
    show(sections[activeTab] ? activeTab : "overview");
  }
  window.addEventListener("resize", () => { if (onShow[activeTab]) onShow[activeTab](); });
  if (DATA.dispatches.length) go({ dispatch: 0, tab: "overview" });
  else app.append(el("main", {}, el("div", { class: "empty", text: "No dispatches." })));
  document.body.dataset.rendered = (performance.now() - started).toFixed(1);
  window.attdecReport = { data: DATA, show, go, renderDispatch, current: () => current };
})();
