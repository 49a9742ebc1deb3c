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

  // Where a tap's result goes: the row or form it was tapped in (its data-key), or, when the redraw took
  // that row away (a deleted task), a line in its place in the same list.
  function placeOf(button) {
    const holder = button.closest("[data-key]");
    const box = button.closest("section");
    const row = button.closest("li");
    return { key: holder ? holder.dataset.key : null, section: box ? box.id : null,
      index: row && row.parentNode ? Array.prototype.indexOf.call(row.parentNode.children, row) : 0 };
  }

  function showResult(place, text, ok) {
    const note = el("p", { class: "result " + (ok ? "ok" : "error"), role: ok ? "status" : "alert", tabindex: "-1", text: text });
    const holder = place.key ? sections.querySelector('[data-key="' + CSS.escape(place.key) + '"]') : null;
    const box = place.section ? document.getElementById(place.section) : null;
    if (holder) {
      const form = holder.querySelector("form");
      if (form) form.after(note); else (holder.querySelector(".item") || holder).append(note);
      const input = holder.querySelector("input");
      if (input) { note.id = input.id + "-result"; input.setAttribute("aria-describedby", note.id); }
    } else if (box) {
      const list = box.querySelector("ul");
      if (list) list.insertBefore(el("li", { class: "gone" }, note), list.children[place.index] || null);
      else box.insertBefore(note, box.children[1] || null);
    } else {
      say(text);
      return;
    }
    note.focus({ preventScroll: true });
    note.scrollIntoView({ block: "nearest" });
  }

  // One tap: the button stays disabled until the answer, so a double tap sends one request. The result,
  // done or refused, shows next to what was tapped.
  function action(name, target, button, confirmText, keep) {
    const run = async () => {
      const place = placeOf(button);
      button.disabled = true;
      let answer;
      try {
        answer = await api("/app/api/action", {
          method: "POST",
          headers: { "Content-Type": "application/json" },
          body: JSON.stringify({ action: name, target: target, request_id: requestId() }),
        });
      } catch (e) {
        button.disabled = false;
        showResult(place, "Could not reach Stepwise: check your connection and tap again.", false);
        return;
      }
      if (tg && tg.HapticFeedback) tg.HapticFeedback.notificationOccurred(answer.ok ? "success" : "error");
      // Connect: the server's sign-in page opens outside the app (Telegram's browser), as Telegram advises.
      if (answer.ok && answer.body.url && tg && typeof tg.openLink === "function") tg.openLink(answer.body.url);
      await load(true);
      if (keep && !answer.ok) keep();
      showResult(place, answer.body.done || answer.body.error || "Something went wrong (" + answer.status + ").", answer.ok);
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

  function line(key, text, meta, ...buttons) {
    return el("li", { "data-key": key }, el("div", { class: "item" }, el("div", { text: text }), meta ? el("div", { class: "meta", text: meta }) : null), ...buttons);
  }

  function render(data) {
    const s = data.settings;
    const parts = [];
    parts.push(section("approvals", "Waiting for your approval", null, data.approvals, "Nothing is waiting.", (a) => {
      // Telegram's confirm shows at most 256 characters: a longer request is read in full in the list.
      const confirmText = a.asks.length <= 246 ? "Approve? " + a.asks : "Approve the request shown in full in the list?";
      const approve = button("Approve", "Approve: " + a.asks, "", () => action("approve", a.approval_id, approve, confirmText));
      const deny = button("Deny", "Deny: " + a.asks, "quiet", () => action("deny", a.approval_id, deny));
      return line("approval:" + a.approval_id, a.asks, [a.where, a.asked ? "asked " + a.asked : ""].filter(Boolean).join(" · "), approve, deny);
    }));
    if (data.suggestions) {  // secretary mode: the same Send and Skip as the chat's buttons
      const editNote = el("p", { class: "meta", text: "To change a reply, tap Edit on it in the chat." });
      parts.push(section("suggestions", "Suggested replies", editNote, data.suggestions, "No suggested reply is waiting.", (r) => {
        const send = button("Send", "Send the reply to " + r.contact, "", () => action("approve", r.approval_id, send, "Send this reply to " + r.contact + "?"));
        const skip = button("Skip", "Skip the reply to " + r.contact, "quiet", () => action("deny", r.approval_id, skip));
        const item = el("li", { "data-key": "suggestion:" + r.approval_id },
          el("div", { class: "item" },
            el("div", { text: r.contact + " wrote: " + r.wrote }),
            el("blockquote", { text: r.text }),
            el("div", { class: "meta", text: r.asked ? "drafted " + r.asked : "" })),
          send, skip);
        return item;
      }));
    }
    parts.push(section("tasks", "Open tasks", null, data.tasks, "No open tasks.", (t) => {
      const label = "task #" + t.task_id + " " + t.title;
      const done = button("Done", "Done: " + label, "", () => action("task_done", t.task_id, done));
      const del = button("Delete", "Delete " + label, "danger", () => action("task_delete", t.task_id, del, "Delete " + label + "?"));
      return line("task:" + t.task_id, "#" + t.task_id + " " + t.title, t.due_text ? "due " + t.due_text : "", done, del);
    }));
    parts.push(section("reminders", "Reminders and check-ins", null, data.reminders, "No reminders.", (r) => {
      const label = (r.checkin ? "check-in #" : "reminder #") + r.reminder_id + " " + r.text;
      const cancel = button("Cancel", "Cancel " + label, "danger", () => action("reminder_cancel", r.reminder_id, cancel, "Cancel " + label + "?"));
      const when = r.when.includes(r.timezone) ? r.when : r.when + " (" + r.timezone + ")";
      const next = r.next_text && !r.one_time ? " · next " + r.next_text : "";
      return line("reminder:" + r.reminder_id, (r.checkin ? "Check-in: " : "") + r.text, when + next, cancel);
    }));
    parts.push(section("memories", "What I remember", null, data.memories, "Nothing yet.", (m) => {
      const forget = button("Forget", "Forget: " + m.text, "danger", () => action("memory_forget", m.id, forget, "Forget “" + m.text + "”?"));
      return line("memory:" + m.id, m.text, m.kind === "summary" ? "summary of a conversation" : "", forget);
    }));
    parts.push(section("jobs", "Background jobs", null, data.jobs, "No background jobs.", (j) =>
      line("job:" + j.number, "#" + j.number + " " + j.title, j.status.replace("_", " ") + (j.started ? " · started " + j.started : "") + " · " + tokens(j.tokens) + " tokens")));
    parts.push(section("connections", "MCP clients", null, data.connections, "No MCP clients. /connect in the chat makes one.", (c) => {
      const revoke = button("Revoke", "Revoke MCP client " + c.name, "danger", () => action("connection_revoke", c.name, revoke, "Revoke “" + c.name + "”? Its token stops working at once."));
      return line("connection:" + c.name, c.name, (c.pending ? "never delivered · " : "") + (c.made ? "made " + c.made : ""), revoke);
    }));
    parts.push(section("accounts", "Your accounts", null, data.accounts, "No servers to sign in to here.", (a) => {
      if (!a.connected) {
        const connect = button("Connect", "Connect " + a.name, "", () => action("account_connect", a.name, connect));
        return line("account:" + a.name, a.name, "not connected", connect);
      }
      const disconnect = button("Disconnect", "Disconnect " + a.name, "danger", () => action("account_disconnect", a.name, disconnect, "Disconnect " + a.name + "? Stepwise forgets your tokens and its tools go away."));
      return line("account:" + a.name, a.name, "connected" + (a.since ? " since " + a.since : ""), disconnect);
    }));
    parts.push(settings(s));
    parts.push(usage(data.usage));
    sections.replaceChildren(el("p", { class: "meta", id: "times", text: "Times are in " + s.timezone + "." }), ...parts);
  }

  function settings(s) {
    const box = el("section", { id: "settings", "aria-labelledby": "settings-title" }, el("h2", { id: "settings-title", text: "Settings" }));
    const zone = el("input", { type: "text", id: "zone", value: s.timezone, autocomplete: "off", spellcheck: "false" });
    const save = el("button", { type: "submit", "aria-label": "Set time zone", text: "Set" });
    const form = el("form", { "aria-label": "Time zone" }, el("label", { for: "zone", text: "Time zone" }), zone, save);
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const typed = zone.value;
      // a refused zone stays in the field, marked, with the reason under it
      action("set_timezone", typed.trim(), save, null, () => {
        const field = document.getElementById("zone");
        if (field) { field.value = typed; field.setAttribute("aria-invalid", "true"); }
      });
    });
    box.append(el("div", { "data-key": "settings:timezone" }, form, el("p", { class: "meta", text: s.timezone_set ? "Set by you." : "Not set yet: the deployment's default." })));
    if (s.voice_available) {
      const on = s.voice_replies;
      const toggle = button(on ? "Turn off" : "Turn on", (on ? "Turn off" : "Turn on") + " spoken replies", "quiet", () => action("set_voice_replies", !on, toggle));
      box.append(el("div", { "data-key": "settings:voice" }, el("form", {}, el("span", { class: "item", text: "Spoken replies to voice notes: " + (on ? "on" : "off") }), toggle)));
    }
    return box;
  }

  function usage(u) {
    const box = el("section", { id: "usage", "aria-labelledby": "usage-title" }, el("h2", { id: "usage-title", text: "Usage, last 30 days" }));
    if (!u) { box.append(el("p", { class: "empty", text: "Usage is not counted in this deployment." })); return box; }
    const used = u.days.some((d) => d.tokens > 0);
    if (!used) box.append(el("p", { class: "empty", id: "usage-empty", text: "No usage yet in the last 30 days: the chart fills in as you talk with the assistant." }));
    else box.append(chart(u.days), el("p", { class: "legend meta" },
      el("span", {}, el("span", { class: "key bar-key", "aria-hidden": "true" }), " tokens per day (left axis)"),
      el("span", {}, el("span", { class: "key cost-key", "aria-hidden": "true" }), " estimated cost (right axis)")));
    if (used || u.this_month.tokens > 0) {
      const totals = el("dl", { class: "totals" });
      const row = (name, t) => totals.append(el("dt", { text: name }), el("dd", { text: tokens(t.tokens) + " tokens ≈ " + dollars(t.cost_usd) }));
      row("30 days", u.last_30_days); row("Today", u.today); row("This month", u.this_month);
      box.append(totals);
    }
    box.append(el("p", { class: "meta", text: "Days are UTC; costs are estimated at list prices, as /usage shows them." }));
    return box;
  }

  const SVG = "http://www.w3.org/2000/svg";
  function svg(tag, attrs, text) {
    const node = document.createElementNS(SVG, tag);
    for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, value);
    if (text !== undefined) node.textContent = text;
    return node;
  }

  // The top of an axis: the smallest of 1, 2, 2.5 or 5 times a power of ten that holds `x`.
  function niceTop(x) {
    if (!(x > 0)) return 1;
    const power = Math.pow(10, Math.floor(Math.log10(x)));
    const step = [1, 2, 2.5, 5, 10].find((f) => f * power >= x * (1 - 1e-9));
    return step * power;
  }
  function shortTokens(n) {
    if (n >= 1e6) return +(n / 1e6).toFixed(2) + "M";
    if (n >= 1e3) return +(n / 1e3).toFixed(2) + "k";
    return String(+n.toFixed(2));
  }
  function shortDollars(x) { return x === 0 ? "$0" : "$" + +x.toPrecision(3); }
  const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
  function dayLabel(day) { return +day.slice(8, 10) + " " + MONTHS[+day.slice(5, 7) - 1]; }

  // Bars: tokens per day on the left axis; the line: estimated cost per day on the right axis. Days along the
  // bottom (UTC), a label a week apart.
  function chart(days) {
    const w = 320, h = 160, left = 34, right = 38, top = 8, bottom = 20;
    const plotW = w - left - right, plotH = h - top - bottom, step = plotW / days.length, base = top + plotH;
    const tokenTop = niceTop(Math.max(...days.map((d) => d.tokens)));
    const costTop = niceTop(Math.max(...days.map((d) => d.cost_usd)));
    const total = days.reduce((sum, d) => sum + d.tokens, 0);
    const figure = svg("svg", { viewBox: "0 0 " + w + " " + h, class: "chart", role: "img", "aria-labelledby": "chart-title" });
    figure.append(svg("title", { id: "chart-title" }, "Tokens and estimated cost per day, " + dayLabel(days[0].day) + " to " + dayLabel(days[days.length - 1].day) + ": " + tokens(total) + " tokens in all"));
    for (const share of [0, 0.5, 1]) {
      const y = (base - plotH * share).toFixed(1);
      figure.append(svg("line", { class: share ? "grid" : "baseline", x1: left, x2: w - right, y1: y, y2: y }));
      figure.append(svg("text", { class: "axis tokens-axis", x: left - 3, y: +y + 3, "text-anchor": "end" }, shortTokens(tokenTop * share)));
      figure.append(svg("text", { class: "axis cost-axis", x: w - right + 3, y: +y + 3 }, shortDollars(costTop * share)));
    }
    const points = [];
    days.forEach((d, i) => {
      const height = plotH * d.tokens / tokenTop;
      const bar = svg("rect", { class: "bar", x: (left + i * step + 0.75).toFixed(1), y: (base - height).toFixed(1), width: Math.max(step - 1.5, 0.5).toFixed(1), height: height.toFixed(1), "data-day": d.day, "data-tokens": d.tokens });
      bar.append(svg("title", {}, dayLabel(d.day) + ": " + tokens(d.tokens) + " tokens, " + dollars(d.cost_usd)));
      figure.append(bar);
      points.push((left + i * step + step / 2).toFixed(1) + "," + (base - plotH * d.cost_usd / costTop).toFixed(1));
    });
    figure.append(svg("polyline", { class: "cost", points: points.join(" ") }));
    const last = days.length - 1;
    for (let i = last; i >= 0; i -= 7) {
      const anchor = i === last ? "end" : i < 4 ? "start" : "middle";
      const x = i === last ? w - right : left + i * step + step / 2;
      figure.append(svg("text", { class: "axis day", x: x.toFixed(1), y: h - 6, "text-anchor": anchor }, dayLabel(days[i].day)));
    }
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
