"use strict";
// The timelines of sessaudit's HTML report, drawn as SVG when a session's section is open and in view.
// Every string comes from a log: it is only ever set with textContent or setAttribute (never as markup).
(function () {
  const NS = "http://www.w3.org/2000/svg";
  const data = JSON.parse(document.getElementById("timeline-data").textContent);
  const sessions = data.sessions || [];
  const LEFT = 118, RIGHT = 16, ROW = 16, TOP = 22, MAX_RUN_ROWS = 24, EAGER = 12;
  const LANES = [
    ["messages", ["user", "model-request", "model"]],
    ["tools", ["tool"]],
    ["marks", ["compaction", "abort", "resume"]],
    ["findings", ["finding"]],
  ];
  const zoom = document.getElementById("zoom");
  const drawn = new Set();
  const decoded = new Map();

  function ms(value) {
    return typeof value === "number" ? value : null;
  }

  // a session as the page carries it (sessaudit.reporters.html.compact): one array per field
  function undo(differences) {
    let last = 0;
    return differences.map(function (value) { if (value === null) return null; last += value; return last; });
  }

  function decode(raw) {
    const strings = data.strings;
    const text = (index) => (index >= 0 ? strings[index] : null);
    const runs = raw.runs.map(function (run) {
      return { run_id: run[0], kind: text(run[1]), state: text(run[2]), condition: text(run[3]),
        started_at: run[4] === null ? null : raw.t0 + run[4], last_at: run[5] === null ? null : raw.t0 + run[5],
        first_seq: run[6], last_seq: run[7], pending_effects: run[8] };
    });
    const lines = undo(raw.ln), offsets = undo(raw.b), seqs = undo(raw.s);
    const unknown = new Set(raw.x);
    const owners = [];
    for (const pair of raw.r) for (let n = 0; n < pair[1]; n += 1) owners.push(pair[0]);
    let calls = 0;
    const events = [];
    let at = raw.t0;
    for (let i = 0; i < raw.e.length; i += 1) {
      const step = raw.t[i];
      const known = step !== null && at !== null;
      if (known) at += step;
      const key = String(i);
      const label = data.labels[raw.e[i]];
      const duration = data.kinds[label[1]] === "tool" ? raw.u[calls++] : 0;
      events.push({
        at: known ? at : null,
        kind: data.kinds[label[1]],
        label: strings[label[0]],
        status: text(label[2]),
        rule: text(label[3]),
        line: lines[i],
        byte_offset: offsets[i],
        seq: seqs[i],
        rowid: key in raw.rw ? raw.rw[key] : null,
        run_id: owners[i] >= 0 ? runs[owners[i]].run_id : null,
        until: duration && known ? at + duration : null,
        unknown: unknown.has(i),
        detail: key in raw.d ? raw.d[key] : null,
      });
    }
    return { runs: runs, events: events };
  }

  function el(name, attributes, parent) {
    const node = document.createElementNS(NS, name);
    for (const key in attributes) node.setAttribute(key, String(attributes[key]));
    if (parent) parent.appendChild(node);
    return node;
  }

  function text(parent, x, y, words, cls) {
    const node = el("text", { x: x, y: y, class: cls || "axis" }, parent);
    node.textContent = words;
    return node;
  }

  function clock(value) {
    return new Date(value).toISOString().slice(11, 23);
  }

  function place(item) {
    const parts = [];
    if (item.line !== null && item.line !== undefined) parts.push("line " + item.line);
    if (item.byte_offset !== null && item.byte_offset !== undefined) parts.push("byte " + item.byte_offset);
    if (item.seq !== null && item.seq !== undefined) parts.push("seq " + item.seq);
    if (item.rowid !== null && item.rowid !== undefined) parts.push("row " + item.rowid);
    return parts.length ? parts.join(", ") : "no recorded place";
  }

  // runs packed into rows: a run takes the first row whose last run ended before it started
  function packRuns(runs, low, high) {
    const rows = [];
    const placed = [];
    for (const run of runs) {
      const start = ms(run.started_at) ?? low;
      const end = ms(run.last_at) ?? start;
      let row = rows.findIndex((last) => last < start);
      if (row < 0 && rows.length < MAX_RUN_ROWS) { rows.push(end); row = rows.length - 1; }
      if (row < 0) row = rows.length - 1;
      rows[row] = Math.max(rows[row], end);
      placed.push({ run: run, row: row, start: start, end: run.state === "open" ? high : end });
    }
    return { rows: Math.max(rows.length, 1), placed: placed };
  }

  function mark(group, item, detail, words) {
    group.setAttribute("tabindex", "0");
    group.setAttribute("class", (group.getAttribute("class") || "") + " mark");
    group.setAttribute("aria-label", words);
    const title = el("title", {}, group);
    title.textContent = words;
    const show = function () {
      detail.textContent = words + (item.detail ? " — " + item.detail : "");
    };
    group.addEventListener("mouseenter", show);
    group.addEventListener("focus", show);
  }

  function draw(section) {
    const index = Number(section.getAttribute("data-index"));
    const chart = section.querySelector(".chart");
    const detail = section.querySelector(".detail");
    while (chart.firstChild) chart.removeChild(chart.firstChild);
    if (!sessions[index]) return;
    if (!decoded.has(index)) decoded.set(index, decode(sessions[index]));
    const session = decoded.get(index);
    const events = session.events || [];
    const times = [];
    for (const item of events) {
      const at = ms(item.at);
      if (at !== null) times.push(at);
      const until = ms(item.until);
      if (until !== null) times.push(until);
    }
    for (const run of session.runs) {
      for (const key of ["started_at", "last_at"]) { const at = ms(run[key]); if (at !== null) times.push(at); }
    }
    if (!times.length) { detail.textContent = "No record of this session has a time."; return; }
    let end = times[0], first = times[0];
    for (const value of times) { if (value > end) end = value; if (value < first) first = value; }
    const minutes = Number(zoom.value);
    const low = minutes > 0 ? Math.max(first, end - minutes * 60000) : first;
    const high = Math.max(end, low + 1);
    const width = Math.max(chart.clientWidth || 900, 640);
    const scale = (width - LEFT - RIGHT) / (high - low);
    const x = (value) => LEFT + (Math.min(Math.max(value, low), high) - low) * scale;
    const packed = packRuns(session.runs, low, high);
    const laneTop = TOP + packed.rows * ROW + 8;
    const height = laneTop + LANES.length * ROW * 1.5 + 24;
    const svg = el("svg", { width: width, height: height, viewBox: "0 0 " + width + " " + height, class: "timeline",
      role: "group", "aria-label": "timeline" }, chart);
    if (!detail.textContent) detail.textContent = "Hover or focus a mark.";
    // the time axis
    for (let tick = 0; tick <= 4; tick += 1) {
      const at = low + ((high - low) * tick) / 4;
      el("line", { x1: x(at), x2: x(at), y1: TOP - 6, y2: height - 18, class: "grid" }, svg);
      text(svg, x(at), height - 4, clock(at), tick === 4 ? "axis tick end-label" : "axis tick");
    }
    text(svg, 4, TOP + 10, "runs");
    for (const entry of packed.placed) {
      if (entry.end < low) continue;
      const run = entry.run;
      const group = el("g", { class: "run r-" + run.state }, svg);
      const left = x(entry.start), right = x(entry.end);
      el("rect", { x: left, y: TOP + entry.row * ROW, width: Math.max(right - left, 3), height: ROW - 4, rx: 2 }, group);
      mark(group, {}, detail, run.kind + " " + run.run_id + " is " + run.state + (run.condition ? ": " + run.condition : "") +
        (run.pending_effects ? ", " + run.pending_effects + " pending effect(s)" : "") +
        " · seq " + (run.first_seq ?? "?") + "–" + (run.last_seq ?? "?"));
    }
    LANES.forEach(function (lane, number) {
      const y = laneTop + number * ROW * 1.5 + ROW / 2;
      text(svg, 4, y + 4, lane[0]);
      el("line", { x1: LEFT, x2: width - RIGHT, y1: y, y2: y, class: "lane" }, svg);
      for (const item of events) {
        if (lane[1].indexOf(item.kind) < 0) continue;
        const at = ms(item.at);
        if (at === null || at < low) continue;
        const words = clock(at) + " · " + item.label + " · " + place(item);
        const group = el("g", { class: "k-" + item.kind + (item.status ? " st-" + item.status : "") + (item.unknown ? " unknown" : "") }, svg);
        if (item.kind === "tool") {
          const until = item.unknown ? high : (ms(item.until) ?? at);
          el("rect", { x: x(at), y: y - 5, width: Math.max(x(until) - x(at), item.unknown ? 10 : 4), height: 10, rx: 2 }, group);
        } else if (item.kind === "finding") {
          const cx = x(at);
          el("path", { d: "M" + cx + " " + (y - 6) + " L" + (cx + 6) + " " + (y + 5) + " L" + (cx - 6) + " " + (y + 5) + " Z" }, group);
        } else if (lane[0] === "marks") {
          const cx = x(at);
          el("path", { d: "M" + cx + " " + (y - 6) + " L" + (cx + 6) + " " + y + " L" + cx + " " + (y + 6) + " L" + (cx - 6) + " " + y + " Z" }, group);
        } else {
          el("circle", { cx: x(at), cy: y, r: item.kind === "model-request" ? 3 : 4 }, group);
        }
        mark(group, item, detail, words);
      }
    });
    for (const item of events) {
      if (item.kind !== "end") continue;
      const at = ms(item.at);
      if (at === null) continue;
      const group = el("g", { class: "end" + (item.status === "open" ? " crash" : "") }, svg);
      el("line", { x1: x(at), x2: x(at), y1: TOP - 10, y2: height - 18 }, group);
      el("rect", { x: x(at) - 5, y: TOP - 14, width: 10, height: 10 }, group);
      mark(group, item, detail, clock(at) + " · " + item.label + " · " + place(item));
    }
  }

  function visible(section) {
    if (!section.open) return;
    draw(section);
    drawn.add(section);
  }

  const sections = Array.prototype.slice.call(document.querySelectorAll("details.session"));
  const observer = "IntersectionObserver" in window ? new IntersectionObserver(function (entries) {
    for (const entry of entries) {
      if (entry.isIntersecting && !drawn.has(entry.target)) visible(entry.target);
    }
  }, { rootMargin: "200px" }) : null;
  sections.forEach(function (section, number) {
    // the first sessions are drawn at once (a printout or a screenshot shows them); the rest when seen
    if (number < EAGER || !observer) visible(section); else observer.observe(section);
    section.addEventListener("toggle", function () { if (section.open) visible(section); });
  });
  zoom.addEventListener("change", function () { drawn.forEach(function (section) { if (section.open) draw(section); }); });
  let resized = null;
  window.addEventListener("resize", function () {
    clearTimeout(resized);
    resized = setTimeout(function () { drawn.forEach(function (section) { if (section.open) draw(section); }); }, 150);
  });
})();
