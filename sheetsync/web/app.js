/* sheetsync's web page: plain JavaScript, no build step.  Python (Pyodide and
   sheetsync.app.browser) runs in worker.js; this file keeps the workbook in memory, draws
   the buttons of the tracker's system and shows each step's result in the status region
   (aria-busy while a step runs).  The workbook never leaves the browser. */
"use strict";

(() => {
  const EXTRA_STEPS = [["check", "Check"], ["forecast", "Forecast"], ["report", "Report"]];
  const WORKBOOK_TYPE = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet";

  const $ = (id) => document.getElementById(id);
  const el = (tag, props, ...children) => {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(props || {})) {
      if (key === "class") node.className = value;
      else if (key === "text") node.textContent = value;
      else node.setAttribute(key, value);
    }
    for (const child of children) {
      if (child !== null && child !== undefined) node.append(child);
    }
    return node;
  };

  const page = {
    worker: null,
    ready: null, // a promise: the systems, once Python is loaded
    systems: [],
    calls: new Map(),
    nextId: 1,
    current: null, // {name, bytes, description}
    busy: false,
    unsaved: false,
    urls: {},
  };

  // -- the worker ------------------------------------------------------------------------

  function startWorker() {
    let resolveReady;
    let rejectReady;
    page.ready = new Promise((resolve, reject) => {
      resolveReady = resolve;
      rejectReady = reject;
    });
    page.ready.catch(() => {}); // shown in the loading bar; each caller also sees it
    page.worker = new Worker("worker.js");
    page.worker.onmessage = (event) => {
      const message = event.data;
      if (message.kind === "loading") showLoading(message);
      else if (message.kind === "ready") {
        page.systems = normalSystems(message.systems);
        page.pyodideURL = message.pyodide;
        loaded();
        resolveReady(page.systems);
      } else if (message.kind === "failed") {
        loadFailed(message.message);
        rejectReady(new Error(message.message));
      } else if (message.kind === "progress") showProgress(message.detail);
      else if (message.kind === "answer") {
        const call = page.calls.get(message.id);
        page.calls.delete(message.id);
        if (call) call(message.result);
      }
    };
    page.worker.onerror = (event) => {
      loadFailed(event.message || "the page's Python worker stopped");
      rejectReady(new Error(event.message));
    };
    fetch("config.json", { cache: "no-cache" })
      .then((response) => {
        if (!response.ok) throw new Error(`config.json: HTTP ${response.status}`);
        return response.json();
      })
      .then((config) => page.worker.postMessage({ kind: "init", config, pageURL: location.href }))
      .catch((error) => {
        loadFailed(String(error.message || error));
        rejectReady(error);
      });
  }

  async function python(fn, args, data) {
    await page.ready;
    const id = page.nextId++;
    return new Promise((resolve) => {
      page.calls.set(id, resolve);
      page.worker.postMessage({ kind: "call", id, fn, args, data: data || null });
    });
  }

  // -- loading ---------------------------------------------------------------------------

  function showLoading({ text, done, total }) {
    $("loading-text").textContent = text;
    const bar = $("loading-bar");
    bar.max = total;
    bar.value = done;
  }

  function loaded() {
    $("loading").hidden = true;
    const select = $("new-system");
    select.replaceChildren(...page.systems.map((s) => el("option", { value: s.id, text: s.title })));
    select.disabled = false;
    $("new-tracker").disabled = false;
  }

  function loadFailed(message) {
    const box = $("loading");
    box.hidden = false;
    box.classList.add("failed");
    $("loading-text").textContent = `Python could not be loaded: ${message}`;
    $("loading-bar").hidden = true;
  }

  // -- what the Python side answers, made regular ----------------------------------------

  function normalSteps(steps) {
    if (!steps) return [];
    if (!Array.isArray(steps)) return Object.entries(steps).map(([action, caption]) => ({ action, caption }));
    return steps.map((s) => (Array.isArray(s) ? { action: s[0], caption: s[1] } : {
      action: s.action || s.step || s.id, caption: s.caption || s.title || s.action,
    }));
  }

  function normalSystems(systems) {
    const list = Array.isArray(systems) ? systems : Object.entries(systems || {}).map(([id, s]) => ({ id, ...s }));
    return list.map((s) => ({ id: s.id, title: s.title || s.id, steps: normalSteps(s.steps || s.captions) }));
  }

  function systemOf(description) {
    const id = typeof description.system === "object" && description.system ? description.system.id
      : description.system;
    return page.systems.find((s) => s.id === id) || {
      id, title: description.title || description.system_title || id, steps: normalSteps(description.steps),
    };
  }

  function whenOf(description) {
    const word = description.word || "phase";
    const label = word.charAt(0).toUpperCase() + word.slice(1);
    if (description.ended) return [label, `${text(description.step)} (the battle is over)`];
    if (description.step === null || description.step === undefined) return [label, "not built yet"];
    return [label, description.step];
  }

  // -- rendering -------------------------------------------------------------------------

  // A table cell that holds JSON (a step's rolls, its effects): the words in it, not the JSON.
  // Texts as they are, dice as their faces, anything else as "key value" pairs, two levels deep.
  function brief(item, depth) {
    if (item === null || item === undefined) return "";
    if (typeof item !== "object") return String(item);
    if (Array.isArray(item)) {
      return depth > 1 ? "" : item.map((x) => brief(x, depth + 1)).filter(Boolean).join(depth ? " " : "; ");
    }
    if (item.text) return String(item.text);
    if (Array.isArray(item.faces)) {
      return `${item.faces.join(" ")}${item.successes !== undefined ? ` (${item.successes} successes)` : ""}`;
    }
    if (item.value !== undefined && typeof item.value !== "object") {
      return item.sides ? `d${item.sides}: ${item.value}` : String(item.value);
    }
    if (depth > 1) return "";
    return Object.entries(item).map(([k, v]) => {
      const shown = brief(v, depth + 1);
      return shown === "" ? "" : `${k} ${shown}`;
    }).filter(Boolean).join(", ");
  }

  function cellText(value) {
    if (typeof value !== "string" || !/^[[{]/.test(value)) return text(value);
    try {
      return brief(JSON.parse(value), 0);
    } catch (error) {
      return value;
    }
  }

  function text(value) {
    if (value === null || value === undefined) return "";
    if (typeof value === "number") return Number.isInteger(value) ? String(value) : String(Math.round(value * 1000) / 1000);
    if (typeof value === "object") return JSON.stringify(value);
    return String(value);
  }

  function table(rows, caption) {
    if (!rows.length) return null;
    if (Array.isArray(rows[0])) {
      const [head, ...body] = rows;
      return el("table", {}, caption ? el("caption", { text: caption }) : null,
        el("thead", {}, el("tr", {}, ...head.map((h) => el("th", { scope: "col", text: text(h) })))),
        el("tbody", {}, ...body.map((r) => el("tr", {}, ...r.map((c) => el("td", { text: cellText(c) }))))));
    }
    const columns = [];
    for (const row of rows) {
      for (const key of Object.keys(row)) if (!columns.includes(key)) columns.push(key);
    }
    return el("table", {}, caption ? el("caption", { text: caption }) : null,
      el("thead", {}, el("tr", {}, ...columns.map((c) => el("th", { scope: "col", text: c })))),
      el("tbody", {}, ...rows.map((r) => el("tr", {}, ...columns.map((c) => el("td", { text: text(r[c]) }))))));
  }

  function value(v, caption) {
    if (Array.isArray(v)) {
      if (!v.length) return null;
      if (v.every((x) => x && typeof x === "object")) return table(v, caption);
      return el("ul", {}, ...v.map((x) => el("li", { text: text(x) })));
    }
    if (v && typeof v === "object") {
      const list = el("dl");
      for (const [k, x] of Object.entries(v)) {
        const shown = x && typeof x === "object" ? value(x) : document.createTextNode(text(x));
        list.append(el("dt", { text: k }), el("dd", {}, shown));
      }
      return list;
    }
    return el("p", { text: text(v) });
  }

  // A small Markdown renderer for the report sheetsync writes: headings, paragraphs, lists,
  // block quotes, tables, emphasis, code and data: images.  Text is escaped first, so the
  // report can make nothing but these.
  function escapeHTML(s) {
    return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
  }

  function inline(source) {
    const kept = [];
    const keep = (html) => `\u0000${kept.push(html) - 1}\u0000`;
    let s = source.replace(/\\([\\`*_{}[\]()#+\-.!|<>~:])/g, (_, c) => keep(escapeHTML(c)));
    s = s.replace(/!\[([^\]]*)\]\((data:image\/(?:png|svg\+xml);base64,[A-Za-z0-9+/=]+)\)/g,
      (_, alt, uri) => keep(`<img alt="${escapeHTML(alt)}" src="${uri}">`));
    s = s.replace(/`([^`]+)`/g, (_, code) => keep(`<code>${escapeHTML(code)}</code>`));
    s = escapeHTML(s);
    s = s.replace(/\*\*([^*]+)\*\*/g, "<strong>$1</strong>").replace(/\*([^*]+)\*/g, "<em>$1</em>");
    return s.replace(/\u0000(\d+)\u0000/g, (_, i) => kept[Number(i)]);
  }

  function cells(line) {
    return line.trim().replace(/^\|/, "").replace(/\|$/, "").split(/(?<!\\)\|/).map((c) => inline(c.trim()));
  }

  function markdown(source) {
    const lines = source.replace(/\r\n?/g, "\n").split("\n");
    const out = [];
    let i = 0;
    const listOf = (pattern, tag) => {
      const items = [];
      while (i < lines.length && pattern.test(lines[i])) items.push(`<li>${inline(lines[i++].replace(pattern, ""))}</li>`);
      out.push(`<${tag}>${items.join("")}</${tag}>`);
    };
    while (i < lines.length) {
      const line = lines[i];
      const heading = /^(#{1,6})\s+(.*)$/.exec(line);
      if (!line.trim()) i++;
      else if (heading) {
        const level = Math.min(heading[1].length + 1, 6); // the page has its own h1 and h2
        out.push(`<h${level}>${inline(heading[2])}</h${level}>`);
        i++;
      } else if (/^\s*[-*]\s+/.test(line)) listOf(/^\s*[-*]\s+/, "ul");
      else if (/^\s*\d+\.\s+/.test(line)) listOf(/^\s*\d+\.\s+/, "ol");
      else if (/^>\s?/.test(line)) {
        const quote = [];
        while (i < lines.length && /^>\s?/.test(lines[i])) quote.push(inline(lines[i++].replace(/^>\s?/, "")));
        out.push(`<blockquote><p>${quote.join(" ")}</p></blockquote>`);
      } else if (/^\|/.test(line) && i + 1 < lines.length && /^\|?\s*:?-{3,}/.test(lines[i + 1])) {
        const head = cells(line);
        i += 2;
        const body = [];
        while (i < lines.length && /^\|/.test(lines[i])) body.push(cells(lines[i++]));
        out.push(`<table><thead><tr>${head.map((c) => `<th>${c}</th>`).join("")}</tr></thead><tbody>${
          body.map((r) => `<tr>${r.map((c) => `<td>${c}</td>`).join("")}</tr>`).join("")}</tbody></table>`);
      } else {
        const para = [];
        while (i < lines.length && lines[i].trim() && !/^(#{1,6}\s|>|\s*[-*]\s|\s*\d+\.\s|\|)/.test(lines[i])) {
          para.push(inline(lines[i++]));
        }
        if (!para.length) para.push(inline(lines[i++]));
        out.push(`<p>${para.join(" ")}</p>`);
      }
    }
    return out.join("\n");
  }

  function blobURL(key, bytes, type) {
    if (page.urls[key]) URL.revokeObjectURL(page.urls[key]);
    page.urls[key] = URL.createObjectURL(new Blob([bytes], { type }));
    return page.urls[key];
  }

  function pictureSource(result) {
    if (!result) return null;
    if (typeof result.map_svg === "string") return blobURL("map", result.map_svg, "image/svg+xml");
    const png = result.map_png;
    if (png instanceof Uint8Array) return blobURL("map", png, "image/png");
    if (typeof png === "string") return png.startsWith("data:") ? png : `data:image/png;base64,${png}`;
    return null;
  }

  function problemList(problems) {
    return el("ul", { class: "problems" }, ...problems.map((p) => {
      const cell = p.cell || p.where || p.address;
      return el("li", {}, cell ? el("code", { text: cell }) : null, cell ? ": " : "", p.message || text(p));
    }));
  }

  function percent(chance) {
    if (!chance || typeof chance.p !== "number") return "";
    const pc = (x) => `${(100 * x).toFixed(1)}%`;
    return typeof chance.low === "number" ? `${pc(chance.p)} [${pc(chance.low)}, ${pc(chance.high)}]` : pc(chance.p);
  }

  function mean(m) {
    if (!m || typeof m.mean !== "number") return "";
    return typeof m.low === "number" ? `${m.mean.toFixed(1)} [${m.low.toFixed(1)}, ${m.high.toFixed(1)}]` : m.mean.toFixed(1);
  }

  function sideLabel(side) {
    if (side === "(draw)") return "Draw (both sides out together)";
    if (side === "(undecided)") return "Undecided";
    return `${side} wins`;
  }

  // The forecast's chances: who wins, each declared order's chance, the expected losses.
  // Simulated figures carry their 95% interval in brackets, as the terminal shows them.
  function forecastView(data) {
    const end = data.to_the_end || {};
    const next = data.next_step || {};
    const parts = [el("p", { text: `${data.runs} simulated battles, at most ${data.phases} steps each, seed ${
      data.seed}. Brackets: 95% confidence interval.` })];
    if (end.sides) {
      parts.push(table([["Outcome", "Chance"], ...end.sides.map((s) => [sideLabel(s.side), percent(s.win)])],
        "The battle to its end"));
    }
    if (next.orders && next.orders.length) {
      parts.push(table([["Actor", "Task", "Target", "Success", "Refused"],
        ...next.orders.map((o) => [o.actor, o.task, o.target, percent(o.success), percent(o.refused)])],
      "The next step, as declared: each order's chance"));
    }
    if (end.entities && end.entities.length) {
      parts.push(table([["Name", "Side", "Expected loss"], ...end.entities.map((e) => [e.name, e.side, mean(e.loss)])],
        "Expected losses"));
    }
    return el("div", { class: "forecast" }, ...parts.filter(Boolean));
  }

  function eventsView(events) {
    if (!events) return null;
    if (Array.isArray(events)) return events.length ? value(events) : null;
    if (!events.rows || !events.rows.length) return null;
    return table([events.headers || [], ...events.rows]);
  }

  function showResult(result, caption) {
    const region = $("result");
    const parts = [];
    const ok = result && result.ok !== false;
    const message = (result && result.message) || (ok ? `${caption}: done.` : `${caption} failed.`);
    parts.push(el("p", { class: `message ${ok ? "ok" : "error"}`, text: message }));
    const problems = (result && result.problems) || [];
    if (problems.length) {
      const what = ok ? `${problems.length} order${problems.length === 1 ? "" : "s"} would be refused:`
        : `${problems.length} bad cell${problems.length === 1 ? "" : "s"}; nothing was written:`;
      parts.push(el("p", { text: what }), problemList(problems));
    }
    const warnings = (result && result.warnings) || [];
    if (warnings.length) parts.push(el("h3", { text: "Warnings" }), value(warnings.map(text)));
    const events = eventsView(result && result.events);
    if (events && !(result.step === "check" && problems.length)) parts.push(el("h3", { text: "Events" }), events);
    if (result && result.forecast) parts.push(el("h3", { text: "Forecast" }), forecastView(result.forecast));
    if (result && result.report) {
      const report = el("div", { class: "report" });
      report.innerHTML = markdown(result.report);
      parts.push(report);
    }
    const picture = pictureSource(result);
    if (picture) parts.push(el("figure", { class: "map" }, el("img", { src: picture, alt: "The hex map" })));
    region.replaceChildren(...parts.filter(Boolean));
  }

  function showError(message) {
    $("result").replaceChildren(el("p", { class: "message error", text: message }));
  }

  function showProgress(detail) {
    const [done] = detail.args || [];
    const status = $("result").querySelector(".progress");
    if (status && typeof done === "number") status.textContent = `Forecast: ${done} battles simulated…`;
  }

  // -- the tracker -----------------------------------------------------------------------

  function setBusy(busy, what) {
    page.busy = busy;
    const region = $("result");
    region.setAttribute("aria-busy", busy ? "true" : "false");
    if (busy) region.replaceChildren(el("p", { class: "progress", text: what }));
    for (const button of document.querySelectorAll("#steps button, #new-tracker")) {
      button.disabled = busy || (button.id !== "new-tracker" && !page.current);
    }
    $("workbook").disabled = busy;
  }

  function clearDownload() {
    $("download").replaceChildren();
    page.unsaved = false;
  }

  function offerDownload(after) {
    const { name, bytes } = page.current;
    const type = name.toLowerCase().endsWith(".xlsm") ? "application/vnd.ms-excel.sheet.macroEnabled.12" : WORKBOOK_TYPE;
    const link = el("a", { href: blobURL("workbook", bytes, type), download: name, id: "download-link",
      text: `Download ${name}` });
    link.addEventListener("click", () => { page.unsaved = false; });
    $("download").replaceChildren(link, el("span", { class: "hint", text: ` (after ${after})` }));
    page.unsaved = true;
  }

  function showSummary(description) {
    const system = systemOf(description);
    const [whenLabel, when] = whenOf(description);
    $("summary-file").textContent = page.current.name;
    $("summary-system").textContent = system.title;
    $("summary-when-label").textContent = whenLabel || "";
    $("summary-when").textContent = when === null ? "" : text(when);
    const rows = description.summary || [];
    $("summary-battle").replaceChildren(...(rows.length ? [el("table", { class: "battle", "aria-label": "Battle sheet" },
      el("tbody", {}, ...rows.map((r) => el("tr", {}, ...r.map((c) => el("td", { text: text(c) })))))),
    ] : []));
    $("battle").hidden = !rows.length;
    $("summary").hidden = false;
  }

  function showSteps(description) {
    const system = systemOf(description);
    const buttons = [];
    for (const { action, caption } of system.steps) {
      buttons.push(el("button", { type: "button", class: "primary", "data-step": action, text: caption }));
    }
    buttons.push(el("span", { class: "sep", "aria-hidden": "true" }));
    for (const [action, caption] of EXTRA_STEPS) {
      buttons.push(el("button", { type: "button", "data-step": action, text: caption }));
    }
    $("steps").replaceChildren(...buttons);
  }

  function forget() {
    page.current = null;
    $("summary").hidden = true;
    $("battle").hidden = true;
    $("steps").replaceChildren();
    clearDownload();
  }

  async function choose(file) {
    if (!file || page.busy) return;
    forget();
    setBusy(true, `Reading ${file.name}…`);
    try {
      const bytes = new Uint8Array(await file.arrayBuffer());
      if (!/\.xls[xm]$/i.test(file.name)) {
        showError(`${file.name} is not a tracker workbook: choose an .xlsx or .xlsm file.`);
        return;
      }
      await page.ready;
      const description = await python("describe", { args: [file.name] }, bytes);
      if (!description || description.ok === false) {
        showError((description && description.message) || `${file.name} could not be read as a tracker workbook.`);
        return;
      }
      page.current = { name: file.name, bytes, description };
      showSummary(description);
      showSteps(description);
      $("result").replaceChildren(el("p", { class: "message ok", text: description.message
        || `${file.name}: a ${systemOf(description).title} tracker. Click a step.` }));
    } catch (error) {
      showError(String(error.message || error));
    } finally {
      setBusy(false);
    }
  }

  async function step(action, caption) {
    if (page.busy || !page.current) return;
    const tracker = page.current;
    setBusy(true, `${caption}…`);
    try {
      const result = await python("run_step", { args: [tracker.name, action] }, tracker.bytes);
      showResult(result, caption);
      if (result && result.ok !== false && result.workbook instanceof Uint8Array && page.current === tracker) {
        tracker.bytes = result.workbook;
        offerDownload(caption);
        const description = await python("describe", { args: [tracker.name] }, tracker.bytes);
        if (description && description.ok !== false) {
          tracker.description = description;
          showSummary(description);
        }
      }
    } catch (error) {
      showError(String(error.message || error));
    } finally {
      setBusy(false);
    }
  }

  async function newTracker() {
    if (page.busy) return;
    const id = $("new-system").value;
    const system = page.systems.find((s) => s.id === id) || { id, title: id };
    setBusy(true, `Making a blank ${system.title} tracker…`);
    try {
      const result = await python("new_tracker", { args: [id] }, null);
      const bytes = result instanceof Uint8Array ? result : result && result.workbook;
      if (!(bytes instanceof Uint8Array)) {
        showError((result && result.message) || "the blank tracker could not be made");
        return;
      }
      const name = `tracker-${id}.xlsx`;
      const link = el("a", { href: blobURL("new", bytes, WORKBOOK_TYPE), download: name, id: "new-download-link",
        text: `Download ${name}` });
      $("new-download").replaceChildren(link);
      $("result").replaceChildren(el("p", { class: "message ok",
        text: `A blank ${system.title} tracker is ready: download ${name}, fill it in, then choose it above.` }));
    } catch (error) {
      showError(String(error.message || error));
    } finally {
      setBusy(false);
    }
  }

  // -- wiring ----------------------------------------------------------------------------

  function wire() {
    $("workbook").addEventListener("change", (event) => {
      const file = event.target.files && event.target.files[0];
      choose(file);
      event.target.value = ""; // the same file chosen again is a change too
    });
    $("steps").addEventListener("click", (event) => {
      const button = event.target.closest("button[data-step]");
      if (button) step(button.dataset.step, button.textContent);
    });
    $("new-tracker").addEventListener("click", newTracker);
    // a file dropped anywhere is a workbook chosen, never a page the browser navigates to
    let depth = 0;
    window.addEventListener("dragenter", (event) => {
      event.preventDefault();
      depth++;
      document.body.classList.add("dragging");
    });
    window.addEventListener("dragleave", () => {
      depth = Math.max(0, depth - 1);
      if (!depth) document.body.classList.remove("dragging");
    });
    window.addEventListener("dragover", (event) => event.preventDefault());
    window.addEventListener("drop", (event) => {
      event.preventDefault();
      depth = 0;
      document.body.classList.remove("dragging");
      const file = event.dataTransfer && event.dataTransfer.files && event.dataTransfer.files[0];
      choose(file);
    });
    window.addEventListener("beforeunload", (event) => {
      if (page.unsaved) {
        event.preventDefault();
        event.returnValue = "";
      }
    });
  }

  // -- offline -----------------------------------------------------------------------------

  function keepOffline() {
    // sw.js keeps the page, its wheels and Pyodide in the browser's cache: once loaded, the
    // page reloads and runs with no network (a service worker needs https or localhost)
    if (!("serviceWorker" in navigator) || !window.isSecureContext) return;
    navigator.serviceWorker.register("sw.js")
      .then(() => navigator.serviceWorker.ready)
      .then(() => { $("offline").hidden = false; })
      .catch(() => {}); // the page works as before, online
  }

  wire();
  startWorker();
  keepOffline();
})();
