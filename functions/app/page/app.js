"use strict";
// Stepwise's Mini App (docs/app.md): one request for the data, one per tap; Telegram signs every request
// (Authorization: tma <initData>). Plain DOM, no framework, no build step; data is only ever set as text.
(function () {
  const tg = window.Telegram && window.Telegram.WebApp;
  const statusLine = document.getElementById("status");
  const sections = document.getElementById("sections");
  const main = document.getElementById("app");

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attrs || {})) {
      if (name === "text") node.textContent = value;
      else if (name === "onclick") node.addEventListener("click", value);
      else node.setAttribute(name, value);
    }
    for (const child of children) if (child) node.append(child);
    return node;
  }

  function say(text) { statusLine.textContent = text; }

  function tokens(n) { return n.toLocaleString("en-US"); }
  // The same rounding as /usage: cents from a dollar up, else four decimals.
  function dollars(x) { return "$" + (x >= 0.995 ? x.toFixed(2) : x.toFixed(4)); }

  function requestId() {
    if (window.crypto && crypto.randomUUID) return crypto.randomUUID();
    const bytes = crypto.getRandomValues(new Uint8Array(16));
    return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  }

  async function api(path, options) {
    const response = await fetch(path, Object.assign({}, options, {
      headers: Object.assign({ Authorization: "tma " + tg.initData }, (options || {}).headers),
      cache: "no-store", credentials: "omit",
    }));
    let body = {};
    try { body = await response.json(); } catch (e) { body = {}; }
    return { ok: response.ok, status: response.status, body: body };
  }

  function confirmThen(message, proceed) {
    if (tg && typeof tg.showConfirm === "function") tg.showConfirm(message, (ok) => { if (ok) proceed(); });
    else if (window.confirm(message)) proceed();
  }

  // One tap: the button stays disabled until the answer, so a double tap sends one request.
  function action(name, target, button, confirmText) {
    const run = async () => {
      button.disabled = true;
      const answer = await api("/app/api/action", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ action: name, target: target, request_id: requestId() }),
      });
      if (tg && tg.HapticFeedback) tg.HapticFeedback.notificationOccurred(answer.ok ? "success" : "error");
      await load(true);
      say(answer.body.done || answer.body.error || "Something went wrong (" + answer.status + ").");
    };
    if (confirmText) confirmThen(confirmText, run); else run();
  }

  function button(label, accessibleName, kind, onclick) {
    return el("button", { type: "button", class: kind || "", "aria-label": accessibleName, text: label, onclick });
  }

  function section(id, title, intro, items, empty, row) {
    const box = el("section", { id: id, "aria-labelledby": id + "-title" }, el("h2", { id: id + "-title", text: title }));
    if (intro) box.append(intro);
    if (items === null || items === undefined) box.append(el("p", { class: "empty", text: "Not set up in this deployment." }));
    else if (!items.length) box.append(el("p", { class: "empty", text: empty }));
    else box.append(el("ul", {}, ...items.map(row)));
    return box;
  }

  function line(text, meta, ...buttons) {
    return el("li", {}, el("div", { class: "item" }, el("div", { text: text }), meta ? el("div", { class: "meta", text: meta }) : null), ...buttons);
  }

  function render(data) {
    const s = data.settings;
    const parts = [];
    parts.push(section("approvals", "Waiting for your approval", null, data.approvals, "Nothing is waiting.", (a) => {
      // Telegram's confirm shows at most 256 characters: a longer request is read in full in the list.
      const confirmText = a.asks.length <= 246 ? "Approve? " + a.asks : "Approve the request shown in full in the list?";
      const approve = button("Approve", "Approve: " + a.asks, "", () => action("approve", a.approval_id, approve, confirmText));
      const deny = button("Deny", "Deny: " + a.asks, "quiet", () => action("deny", a.approval_id, deny));
      return line(a.asks, "asked " + when(a.created_at), approve, deny);
    }));
    parts.push(section("tasks", "Open tasks", null, data.tasks, "No open tasks.", (t) => {
      const label = "task #" + t.task_id + " " + t.title;
      const done = button("Done", "Done: " + label, "", () => action("task_done", t.task_id, done));
      const del = button("Delete", "Delete " + label, "danger", () => action("task_delete", t.task_id, del, "Delete " + label + "?"));
      return line("#" + t.task_id + " " + t.title, t.due ? "due " + t.due.replace("T", " ") : "", done, del);
    }));
    parts.push(section("reminders", "Reminders and check-ins", null, data.reminders, "No reminders.", (r) => {
      const label = (r.checkin ? "check-in #" : "reminder #") + r.reminder_id + " " + r.text;
      const cancel = button("Cancel", "Cancel " + label, "danger", () => action("reminder_cancel", r.reminder_id, cancel, "Cancel " + label + "?"));
      const when = r.when.includes(r.timezone) ? r.when : r.when + " (" + r.timezone + ")";
      const next = r.next_at && !r.one_time ? " · next " + r.next_at.slice(0, 16).replace("T", " ") : "";
      return line((r.checkin ? "Check-in: " : "") + r.text, when + next, cancel);
    }));
    parts.push(section("memories", "What I remember", null, data.memories, "Nothing yet.", (m) => {
      const forget = button("Forget", "Forget: " + m.text, "danger", () => action("memory_forget", m.id, forget, "Forget “" + m.text + "”?"));
      return line(m.text, m.id, forget);
    }));
    parts.push(section("jobs", "Background jobs", null, data.jobs, "No background jobs.", (j) =>
      line("#" + j.number + " " + j.title, j.status.replace("_", " ") + " · started " + when(j.created_at) + " · " + tokens(j.tokens) + " tokens")));
    parts.push(section("connections", "MCP clients", null, data.connections, "No MCP clients. /connect in the chat makes one.", (c) => {
      const revoke = button("Revoke", "Revoke MCP client " + c.name, "danger", () => action("connection_revoke", c.name, revoke, "Revoke “" + c.name + "”? Its token stops working at once."));
      return line(c.name, (c.pending ? "never delivered · " : "") + "made " + when(c.created_at), revoke);
    }));
    parts.push(settings(s));
    parts.push(usage(data.usage));
    sections.replaceChildren(...parts);
  }

  function when(iso) { return iso ? iso.slice(0, 16).replace("T", " ") + " UTC" : ""; }

  function settings(s) {
    const box = el("section", { id: "settings", "aria-labelledby": "settings-title" }, el("h2", { id: "settings-title", text: "Settings" }));
    const zone = el("input", { type: "text", id: "zone", value: s.timezone, autocomplete: "off", spellcheck: "false" });
    const save = el("button", { type: "submit", "aria-label": "Set time zone", text: "Set" });
    const form = el("form", { "aria-label": "Time zone" }, el("label", { for: "zone", text: "Time zone" }), zone, save);
    form.addEventListener("submit", (event) => { event.preventDefault(); action("set_timezone", zone.value.trim(), save); });
    box.append(form, el("p", { class: "meta", text: s.timezone_set ? "Set by you." : "Not set yet: the deployment's default." }));
    if (s.voice_available) {
      const on = s.voice_replies;
      const toggle = button(on ? "Turn off" : "Turn on", (on ? "Turn off" : "Turn on") + " spoken replies", "quiet", () => action("set_voice_replies", !on, toggle));
      box.append(el("form", {}, el("span", { class: "item", text: "Spoken replies to voice notes: " + (on ? "on" : "off") }), toggle));
    }
    return box;
  }

  function usage(u) {
    const box = el("section", { id: "usage", "aria-labelledby": "usage-title" }, el("h2", { id: "usage-title", text: "Usage, last 30 days" }));
    if (!u) { box.append(el("p", { class: "empty", text: "Usage is not counted in this deployment." })); return box; }
    box.append(chart(u.days));
    const totals = el("dl", { class: "totals" });
    const row = (name, t) => totals.append(el("dt", { text: name }), el("dd", { text: tokens(t.tokens) + " tokens ≈ " + dollars(t.cost_usd) }));
    row("30 days", u.last_30_days); row("Today", u.today); row("This month", u.this_month);
    box.append(totals, el("p", { class: "meta", text: "Days are UTC; costs are estimated at list prices, as /usage shows them." }));
    return box;
  }

  const SVG = "http://www.w3.org/2000/svg";
  function svg(tag, attrs, text) {
    const node = document.createElementNS(SVG, tag);
    for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, value);
    if (text !== undefined) node.textContent = text;
    return node;
  }

  // Bars: tokens per day; the line: estimated cost per day (each on its own scale).
  function chart(days) {
    const w = 300, h = 120, top = 12, bottom = 14, step = w / days.length;
    const maxTokens = Math.max(1, ...days.map((d) => d.tokens));
    const maxCost = Math.max(1e-9, ...days.map((d) => d.cost_usd));
    const total = days.reduce((sum, d) => sum + d.tokens, 0);
    const figure = svg("svg", { viewBox: "0 0 " + w + " " + h, class: "chart", role: "img", "aria-labelledby": "chart-title" });
    figure.append(svg("title", { id: "chart-title" }, "Tokens and estimated cost per day, " + days[0].day + " to " + days[days.length - 1].day + ": " + tokens(total) + " tokens in all"));
    const points = [];
    days.forEach((d, i) => {
      const height = (h - top - bottom) * d.tokens / maxTokens;
      const bar = svg("rect", { class: "bar", x: (i * step + 1).toFixed(1), y: (h - bottom - height).toFixed(1), width: (step - 2).toFixed(1), height: height.toFixed(1), "data-day": d.day, "data-tokens": d.tokens });
      bar.append(svg("title", {}, d.day + ": " + tokens(d.tokens) + " tokens, " + dollars(d.cost_usd)));
      figure.append(bar);
      points.push((i * step + step / 2).toFixed(1) + "," + (h - bottom - (h - top - bottom) * d.cost_usd / maxCost).toFixed(1));
    });
    figure.append(svg("polyline", { class: "cost", points: points.join(" ") }));
    figure.append(svg("text", { class: "axis", x: 0, y: 9 }, "max " + tokens(maxTokens) + " tokens, " + dollars(maxCost)));
    figure.append(svg("text", { class: "axis", x: 0, y: h - 2 }, days[0].day.slice(5)));
    figure.append(svg("text", { class: "axis", x: w, y: h - 2, "text-anchor": "end" }, days[days.length - 1].day.slice(5)));
    return figure;
  }

  async function load(quiet) {
    const answer = await api("/app/api/state");
    main.setAttribute("aria-busy", "false");
    if (!answer.ok) {
      sections.replaceChildren();
      say(answer.status === 403 ? "This assistant is not open to your account." : "Could not sign you in (" + answer.status + "): open this page again from the bot's menu.");
      return;
    }
    render(answer.body);
    if (!quiet) say("Hello, " + (answer.body.user.first_name || "there") + ".");
  }

  if (!tg || !tg.initData) {
    main.setAttribute("aria-busy", "false");
    say("Open this page from the bot's menu button (or /app) in Telegram: it signs you in.");
    return;
  }
  tg.ready();
  if (tg.expand) tg.expand();
  if (tg.colorScheme === "light") document.documentElement.classList.add("light");
  load(false);
})();
