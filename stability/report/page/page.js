// report.html's script (stability/report/page): sortable and filterable tables, the interactive heat
// maps with their items, the data maps and the atlas. Plain DOM and one canvas per data map, no library:
// the page must open from file:// with nothing fetched (see build.py for why no plotting library).
(() => {
  "use strict";
  const data = JSON.parse(document.getElementById("page-data").textContent);
  const tip = document.getElementById("tip");
  const FACETS = ["lang", "setup", "variant"];
  const facets = { lang: "", setup: "", variant: "" };   // "": every value
  const models = [];
  const LABEL = ["E", "N"];   // pred 0 = entailment, 1 = not_entailment

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (key === "text") node.textContent = value;
      else if (key === "class") node.className = value;
      else node.setAttribute(key, value);
    }
    for (const child of children) if (child !== null && child !== undefined) node.append(child);
    return node;
  }

  // ---- tables: sort by a header click, filter by the facets (and a search box where there is one)
  function sortKey(text) {
    const t = text.trim().replace(/^[[(]/, "").replace("−", "-");
    const number = /^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?/i.exec(t);
    if (number) return [0, parseFloat(number[0]), ""];
    return [t === "" || t === "–" ? 2 : 1, 0, t.toLowerCase()];
  }

  function compare(a, b, ascending) {
    if (a[0] !== b[0]) return a[0] - b[0];   // numbers, then text, blanks last in either direction
    const order = a[1] - b[1] || (a[2] < b[2] ? -1 : a[2] > b[2] ? 1 : 0);
    return ascending ? order : -order;
  }

  class Model {
    // rows: [{cells: [text], element: () => <tr>}]; a row whose first cell is empty continues the row above
    constructor(table, rows, limit = 0) {
      this.table = table;
      this.rows = rows;
      this.limit = limit;
      this.query = "";
      const head = table.tHead.rows[0];
      const header = [...head.cells].map((cell) => cell.textContent.trim());
      const columns = FACETS.map((facet) => header.indexOf(facet));
      let lead = null;
      for (const row of rows) {
        if (lead === null || row.cells[0] !== "") lead = row;
        row.lead = lead;
        row.facets = columns.map((i) => (i < 0 ? null : row.cells[i] !== "" ? row.cells[i] : lead.cells[i]));
      }
      this.order = rows.slice();
      [...head.cells].forEach((cell, i) => {
        cell.classList.add("sortable");
        cell.tabIndex = 0;
        cell.title = "sort by this column";
        cell.addEventListener("click", () => this.sort(i));
        cell.addEventListener("keydown", (event) => { if (event.key === "Enter") this.sort(i); });
      });
      this.count = limit ? el("p", { class: "count" }) : null;   // its caller places it
      models.push(this);
    }

    sort(i) {
      const head = this.table.tHead.rows[0].cells;
      const ascending = head[i].getAttribute("aria-sort") !== "ascending";
      for (const cell of head) cell.removeAttribute("aria-sort");
      head[i].setAttribute("aria-sort", ascending ? "ascending" : "descending");
      const groups = [];
      for (const row of this.rows) {
        if (row.lead === row) groups.push([row]);
        else groups[groups.length - 1].push(row);
      }
      const keyed = groups.map((group, n) => [sortKey(group[0].cells[i]), n, group]);
      keyed.sort((a, b) => compare(a[0], b[0], ascending) || a[1] - b[1]);
      this.order = keyed.flatMap((entry) => entry[2]);
      this.render();
    }

    visible(row) {
      if (this.query && !row.cells.join(" ").toLowerCase().includes(this.query)) return false;
      return row.facets.every((value, k) => value === null || facets[FACETS[k]] === "" || value === facets[FACETS[k]]);
    }

    render() {
      const shown = this.order.filter((row) => this.visible(row));
      const kept = this.limit ? shown.slice(0, this.limit) : shown;
      this.table.tBodies[0].replaceChildren(...kept.map((row) => row.element()));
      if (this.count) {
        this.count.textContent = `${shown.length} of ${this.rows.length} rows match` +
          (kept.length < shown.length ? `; the first ${kept.length} shown (search to narrow)` : "");
      }
    }
  }

  function markdownTable(table) {
    if (!table.tBodies.length) table.append(el("tbody"));   // a table of no rows has a header only
    const rows = [...table.tBodies[0].rows].map((tr) => ({
      cells: [...tr.cells].map((cell) => cell.textContent.trim()), element: () => tr,
    }));
    return new Model(table, rows);
  }

  function dataTable(header, rows, render, limit = 0) {
    const table = el("table", { class: "data" }, el("thead", {}, el("tr", {}, ...header.map((h) => el("th", { text: h })))),
      el("tbody"));
    const model = new Model(table, rows.map((row) => {
      let tr = null;
      return { cells: row.cells, element: () => (tr = tr || render(row)) };
    }), limit);
    return [table, model];
  }

  function textRow(cells) {
    return el("tr", {}, ...cells.map((cell) => el("td", { text: cell })));
  }

  function applyFacets() {
    for (const model of models) model.render();
    for (const node of document.querySelectorAll("[data-lang],[data-setup],[data-variant]")) {
      node.hidden = FACETS.some((facet) => node.hasAttribute(`data-${facet}`) && facets[facet] !== "" &&
        node.getAttribute(`data-${facet}`) !== facets[facet]);
    }
  }

  // ---- the tooltip
  function showTip(event, text) {
    tip.textContent = text;
    tip.hidden = false;
    const x = Math.min(event.clientX + 14, window.innerWidth - tip.offsetWidth - 8);
    const y = event.clientY + 16 + tip.offsetHeight > window.innerHeight ? event.clientY - tip.offsetHeight - 10
      : event.clientY + 16;
    tip.style.left = `${Math.max(4, x)}px`;
    tip.style.top = `${Math.max(4, y)}px`;
  }

  function hideTip() { tip.hidden = true; }

  // ---- heat maps
  function colour(value) {
    const palette = data.palette;
    const t = Math.max(0, Math.min(1, (value + 1) / 2)) * (palette.length - 1);
    const i = Math.min(Math.floor(t), palette.length - 2);
    const mix = (k) => Math.round(palette[i][k] + (palette[i + 1][k] - palette[i][k]) * (t - i));
    return `rgb(${mix(0)},${mix(1)},${mix(2)})`;
  }

  function heatCell(text, undefinedValue, tipText) {
    const value = parseFloat(text);
    const cell = el("td", { class: "cell", text: undefinedValue ? "n/a" : text });
    if (undefinedValue || Number.isNaN(value)) cell.classList.add("undefined");
    else {
      cell.style.background = colour(value);
      if (Math.abs(value) > 0.55) cell.style.color = "#fff";
    }
    cell.dataset.tip = tipText;
    return cell;
  }

  function categoryHeader(row, open) {
    const button = el("button", { class: "category", type: "button", text: row.category, title: "list its items" });
    button.addEventListener("click", () => open(row.category));
    return el("th", { scope: "row" }, button);
  }

  function coarseStarts(tbody, rows) {
    rows.forEach((row, i) => { if (i && row.coarse !== rows[i - 1].coarse) tbody.rows[i].classList.add("coarse-start"); });
  }

  function hoverTips(node) {
    node.addEventListener("mouseover", (event) => {
      const cell = event.target.closest("[data-tip]");
      if (cell) showTip(event, cell.dataset.tip); else hideTip();
    });
    node.addEventListener("mouseleave", hideTip);
  }

  function empty(row, where) {
    return `${row.category} · ${where}: no diagnostic items (its MCC, 0.0, says nothing)`;
  }

  function seedMap(view) {
    const panel = el("div", { class: "items-panel", hidden: "" });
    const where = `${view.lang} · ${view.condition}`;
    const open = (category) => itemsPanel(panel, view.setup, view.variant, category, view.lang);
    const head = el("tr", {}, el("th", { text: "category" }), el("th", { text: "items" }),
      ...view.seeds.map((seed) => el("th", { text: `seed ${seed}` + (view.failed.includes(seed) ? " (failed)" : "") })),
      el("th", { text: "mean" }));
    const body = el("tbody", {}, ...view.rows.map((row) => el("tr", {}, categoryHeader(row, open),
      el("td", { class: "n", text: row.n === null ? "–" : String(row.n) }),
      ...row.cells.map((value, k) => heatCell(value, row.undefined[k] || row.n === 0, row.n === 0 ? empty(row, where)
        : `${row.category} · ${where} · seed ${view.seeds[k]}` + (view.failed.includes(view.seeds[k]) ? " (failed run)" : "") +
        `\nMCC ${value}` + (row.undefined[k] ? " (undefined: one class only, scored 0.0)" : "") +
        `\nitems: ${row.n}\nmean ± σ over ${view.seeds.length} seeds: ${row.pm}\n${view.interval}: ${row.ci}`)),
      heatCell(row.mean, row.n === 0, row.n === 0 ? empty(row, where) : `${row.category} · ${where}\nmean MCC ${row.mean} ` +
        `(mean ± σ over ${view.seeds.length} seeds: ${row.pm})\nitems: ${row.n}\n${view.interval}: ${row.ci}`))));
    const table = el("table", { class: "heatmap" }, el("thead", {}, head), body);
    coarseStarts(body, view.rows);
    hoverTips(table);
    return el("div", { class: "view heat", "data-lang": view.lang, "data-setup": view.setup, "data-variant": view.variant },
      el("h3", { text: `${where}: category MCC per seed` }),
      el("p", { class: "hint", text: "Hover a cell for its value, interval and items; click a category for its items." }),
      el("div", { class: "scroll" }, table), panel);
  }

  function languageMap(view) {
    const panel = el("div", { class: "items-panel", hidden: "" });
    const open = (category) => itemsPanel(panel, view.setup, view.variant, category, null);
    const head = el("tr", {}, el("th", { text: "category" }),
      ...view.langs.map((lang) => el("th", { text: lang, "data-lang": lang })));
    const rows = view.rows.map((row) => ({ ...row, coarse: (row.cells.find((cell) => cell) || {}).coarse }));
    const body = el("tbody", {}, ...rows.map((row) => el("tr", {}, categoryHeader(row, open),
      ...row.cells.map((cell, k) => {
        if (!cell) return el("td", { class: "cell undefined", text: "–", "data-lang": view.langs[k] });
        const where = `${view.langs[k]} · ${view.condition}`;
        const td = heatCell(cell.value, cell.n === 0, cell.n === 0 ? empty(row, where) : `${row.category} · ${where}\n` +
          `mean MCC ${cell.value} (mean ± σ over ${cell.seeds} seeds: ${cell.pm})\nitems: ${cell.n}\n` +
          `${view.interval}: ${cell.ci}`);
        td.dataset.lang = view.langs[k];
        return td;
      }))));
    const table = el("table", { class: "heatmap" }, el("thead", {}, head), body);
    coarseStarts(body, rows);
    hoverTips(table);
    return el("div", { class: "view heat", "data-setup": view.setup, "data-variant": view.variant },
      el("h3", { text: `${view.condition}: mean category MCC per language` }),
      el("p", { class: "hint", text: "Hover a cell; click a category for its items in every language." }),
      el("div", { class: "scroll" }, table), panel);
  }

  // ---- a category's items, each seed's prediction per language
  function itemsPanel(panel, setup, variant, category, first) {
    if (!panel.hidden && panel.dataset.category === category) { panel.hidden = true; return; }
    const items = data.items;
    const code = items.categories.indexOf(category);
    const langs = Object.keys(items.langs).filter((lang) => items.conditions[`${lang}|${setup}|${variant}`]);
    if (!langs.length) {
      panel.replaceChildren(el("p", { class: "hint", text: `${category}: no items to list, these runs have no ` +
        "predictions.jsonl (a tidy CSV holds scores, not items)." }));
      panel.dataset.category = category;
      panel.hidden = false;
      return;
    }
    if (first) langs.sort((a, b) => (b === first) - (a === first));
    const seeds = [...new Set(langs.flatMap((lang) => items.conditions[`${lang}|${setup}|${variant}`].seeds))]
      .sort((a, b) => a - b);
    const byIdx = new Map();
    const counts = [];
    for (const lang of langs) {
      const own = items.langs[lang];
      const predicted = items.conditions[`${lang}|${setup}|${variant}`];
      let n = 0;
      own.idx.forEach((idx, i) => {
        if (!own.categories[i].includes(code)) return;
        if (!predicted.pred.some((preds) => preds[i] !== "-")) return;
        n += 1;
        if (!byIdx.has(idx)) byIdx.set(idx, []);
        byIdx.get(idx).push({ lang, own, i, predicted });
      });
      counts.push(counts.length ? `${n} in ${lang}` : `${n} items in ${lang}`);
    }
    const rows = [];
    for (const [idx, entries] of byIdx) {
      entries.forEach(({ lang, own, i, predicted }, k) => {
        const cells = [k ? "" : idx, lang, own.label[i] ? "not_entailment" : "entailment",
          own.categories[i].map((c) => items.categories[c]).join(", "),
          own.premise ? own.premise[i] || "–" : "–", own.hypothesis ? own.hypothesis[i] || "–" : "–"];
        const preds = seeds.map((seed) => {
          const s = predicted.seeds.indexOf(seed);
          if (s < 0 || predicted.pred[s][i] === "-") return null;
          const prob = predicted.prob[s][i];
          return [Number(predicted.pred[s][i]), prob === null ? "" : ` ${(prob / 1000).toFixed(3)}`];
        });
        rows.push({ cells: [...cells, ...preds.map((p) => (p ? LABEL[p[0]] + p[1] : "–"))], preds, gold: own.label[i] });
      });
    }
    const header = ["idx", "lang", "gold", "categories", "premise", "hypothesis", ...seeds.map((s) => `seed ${s}`)];
    const [table, model] = dataTable(header, rows, (row) => {
      const tr = textRow(row.cells);
      row.preds.forEach((p, k) => { if (p) tr.cells[6 + k].className = p[0] === row.gold ? "right" : "wrong"; });
      return tr;
    });
    const missing = langs.filter((lang) => !items.langs[lang].premise)
      .map((lang) => `${lang}: no text (${items.langs[lang].why})`);
    if (panel.model) models.splice(models.indexOf(panel.model), 1);
    panel.model = model;
    panel.dataset.category = category;
    panel.replaceChildren(el("h4", { text: `${category} · ${setup}${variant ? "/" + variant : ""}: ${counts.join(", ")}` }),
      el("p", { class: "hint", text: "Each seed's prediction: E = entailment, N = not_entailment, with P(entailment) " +
        "as predictions.jsonl has them; green where it is the gold label." + (missing.length ? " " + missing.join("; ") : "") }),
      el("div", { class: "scroll" }, table));
    panel.hidden = false;
    model.render();
  }

  // ---- data maps: one canvas per group, the nearest point's item on hover
  function dataMap(view) {
    const width = 620, height = 400, left = 52, right = 12, top = 12, bottom = 44;
    const canvas = el("canvas", { width, height, class: "datamap", role: "img",
      "aria-label": `data map of ${view.lang} · ${view.condition}` });
    const columns = Object.fromEntries(view.columns.map((name, i) => [name, i]));
    const xMax = Math.max(0.5, ...view.points.map((p) => parseFloat(p[columns.variability])));
    const toPixel = (variability, confidence) => [left + variability / xMax * (width - left - right),
      top + (1 - confidence) * (height - top - bottom)];
    const px = (p) => toPixel(parseFloat(p[columns.variability]), parseFloat(p[columns.confidence]));
    const colours = ["#2a9d8f", "#e9c46a", "#e76f51", "#8d99ae"];
    const ctx = canvas.getContext("2d");
    ctx.font = "11px sans-serif";
    ctx.strokeStyle = "#999";
    ctx.strokeRect(left, top, width - left - right, height - top - bottom);
    ctx.fillStyle = "#333";
    for (let k = 0; k <= 5; k += 1) {
      const [x, y] = toPixel(xMax * k / 5, k / 5);
      ctx.fillText((xMax * k / 5).toFixed(2), x - 12, height - bottom + 14);
      ctx.fillText((k / 5).toFixed(1), left - 26, y + 4);
    }
    ctx.fillText("variability", (width + left) / 2 - 24, height - 8);
    ctx.save(); ctx.translate(12, (height - bottom) / 2 + 24); ctx.rotate(-Math.PI / 2); ctx.fillText("confidence", 0, 0); ctx.restore();
    const [ambiguous, easy, hard] = view.bounds;
    const line = (from, to) => { ctx.beginPath(); ctx.moveTo(...from); ctx.lineTo(...to); ctx.stroke(); };
    ctx.setLineDash([4, 4]);
    line(toPixel(ambiguous, 1), toPixel(ambiguous, 0));
    line(toPixel(0, easy), toPixel(ambiguous, easy));
    line(toPixel(0, hard), toPixel(ambiguous, hard));
    ctx.setLineDash([]);
    const pixels = view.points.map(px);
    ctx.globalAlpha = 0.7;
    view.points.forEach((p, i) => {
      ctx.fillStyle = colours[p[columns.region]];
      ctx.beginPath(); ctx.arc(pixels[i][0], pixels[i][1], 3, 0, 2 * Math.PI); ctx.fill();
    });
    ctx.globalAlpha = 1;
    canvas.pointAt = (i) => pixels[i];
    canvas.addEventListener("mousemove", (event) => {
      const box = canvas.getBoundingClientRect();
      const x = (event.clientX - box.left) * width / box.width, y = (event.clientY - box.top) * height / box.height;
      let best = -1, distance = 64;
      pixels.forEach(([a, b], i) => { const d = (a - x) ** 2 + (b - y) ** 2; if (d < distance) { distance = d; best = i; } });
      if (best < 0) { hideTip(); return; }
      const p = view.points[best];
      showTip(event, `item ${p[columns.idx]} · gold ${p[columns.label]} · ${view.regions[p[columns.region]]}\n` +
        `confidence ${p[columns.confidence]}, variability ${p[columns.variability]}, correctness ${p[columns.correctness]}\n` +
        `premise: ${p[columns.premise]}\nhypothesis: ${p[columns.hypothesis]}`);
    });
    canvas.addEventListener("mouseleave", hideTip);
    const legend = el("p", { class: "legend" }, ...view.regions.map((region, i) =>
      el("span", {}, el("i", { style: `background:${colours[i]}` }), ` ${region} (${view.points.filter((p) => p[columns.region] === i).length}) `)));
    return el("div", { class: "view map", "data-lang": view.lang, "data-setup": view.setup, "data-variant": view.variant },
      el("h3", { text: `${view.lang} · ${view.condition}: data map, seed-averaged (${view.points.length} items` +
        (view.unmapped ? `, ${view.unmapped} seen too rarely to map)` : ")") }),
      el("p", { class: "hint", text: "Hover a point for its training item." }), canvas, legend);
  }

  // ---- the atlas: every item, searchable
  function atlas(view) {
    const [table, model] = dataTable(view.header, view.rows.map((cells) => ({ cells })), (row) => textRow(row.cells), 200);
    const search = el("input", { type: "search", placeholder: "search the atlas: idx, category, a word of the premise…",
      "aria-label": "search the atlas" });
    search.addEventListener("input", () => { model.query = search.value.trim().toLowerCase(); model.render(); });
    return el("div", { class: "view atlas" }, el("h3", { text: "Every item: the atlas" }), search, model.count,
      el("div", { class: "scroll" }, table));
  }

  const DRAW = { seeds: seedMap, languages: languageMap, datamap: dataMap, atlas };

  for (const table of document.querySelectorAll("main table")) markdownTable(table);
  for (const slot of document.querySelectorAll("[data-view]")) {
    const view = data.views[Number(slot.dataset.view)];
    slot.replaceWith(DRAW[view.kind](view.data));
  }
  for (const select of document.querySelectorAll("select[data-facet]")) {
    select.addEventListener("change", () => { facets[select.dataset.facet] = select.value; applyFacets(); });
  }
  applyFacets();
  document.body.dataset.ready = "1";
  performance.mark("usable");
})();
