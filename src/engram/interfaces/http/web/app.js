// engram's web page: a thin client of the HTTP API (no framework, no build step).
// User data is only ever inserted with textContent, never as HTML.
"use strict";
const $ = (sel) => document.querySelector(sel);
const url = new URL(location.href);
if (url.searchParams.get("token")) {  // opened from the address `engram serve` printed
  sessionStorage.setItem("engram-token", url.searchParams.get("token"));
  url.searchParams.delete("token");
  history.replaceState(null, "", url.pathname + url.search);
}
let token = sessionStorage.getItem("engram-token") || "";
let current = null;
let searchSeq = 0;  // only the latest search may fill the table

function status(text, isError) {
  const el = $("#status"); el.textContent = text; el.className = isError ? "error" : "";
}

async function api(method, path, body) {
  const opts = { method, headers: { "Authorization": "Bearer " + token } };
  if (body !== undefined) { opts.headers["Content-Type"] = "application/json"; opts.body = JSON.stringify(body); }
  const res = await fetch(path, opts);
  const data = res.headers.get("content-type")?.includes("json") ? await res.json() : await res.text();
  if (!res.ok) {
    const err = new Error((data && data.detail) || res.statusText); err.status = res.status; throw err;
  }
  return data;
}

function el(tag, text, cls) { const e = document.createElement(tag); if (text !== undefined) e.textContent = text; if (cls) e.className = cls; return e; }
const fmt = (n) => (n === undefined || n === null) ? "-" : Number(n).toFixed(2);

function row(memory, hit) {
  const tr = el("tr", undefined, "mem-row"); tr.dataset.id = memory.id;
  const main = el("td"); main.append(el("div", memory.content, "content"), el("div", memory.key, "key"));
  tr.append(main, el("td", memory.category + " / " + memory.type), el("td", memory.tags.join(", ")), el("td", memory.scope));
  const p = hit ? hit.parts : null;
  tr.append(el("td", hit ? `${fmt(hit.score)} = ${fmt(p.text)} · ${fmt(p.vector)} · ${fmt(p.fused)} · ${fmt(p.recency)} · ${fmt(p.importance)} · ${fmt(p.link)}` : "", "parts"));
  tr.addEventListener("click", () => show(memory.id));
  return tr;
}

async function search(ev) {
  if (ev) ev.preventDefault();
  const q = $("#q").value.trim();
  const params = new URLSearchParams();
  for (const [id, name] of [["#f-category", "category"], ["#f-type", "type"], ["#f-tag", "tag"]]) {
    if ($(id).value.trim()) params.set(name, $(id).value.trim());
  }
  const tbody = $("#results tbody");
  const seq = ++searchSeq;
  try {
    let rows;
    if (q) {
      params.set("q", q);
      const data = await api("GET", "/api/v1/memory/search?" + params);
      if (seq !== searchSeq) return;
      rows = data.hits.filter((h) => !$("#f-scope").value || h.memory.scope.startsWith($("#f-scope").value)).map((h) => row(h.memory, h));
      status(`${rows.length} hit(s) for “${q}” (${data.mode})` + (data.notes.length ? " — " + data.notes.join("; ") : ""));
    } else {
      if ($("#f-scope").value) params.set("scope", $("#f-scope").value);
      const data = await api("GET", "/api/v1/memory?" + params);
      if (seq !== searchSeq) return;
      rows = data.memories.map((m) => row(m));
      status(`${data.total} memories`);
    }
    if (seq === searchSeq) tbody.replaceChildren(...rows);
  } catch (e) { status(e.status === 401 ? "Enter a valid API token above." : e.message, true); }
}

async function show(id) {
  try {
    const data = await api("GET", "/api/v1/memory/" + encodeURIComponent(id) + "/links");
    const m = data.memory; current = m;
    $("#detail").hidden = false;
    $("#d-key").textContent = m.key;
    $("#d-meta").textContent = `${m.id} · ${m.scope} · recalled ${m.recall_count}× · created ${new Date(m.created_at * 1000).toLocaleString()}`;
    $("#edit-content").value = m.content; $("#edit-tags").value = m.tags.join(", ");
    $("#edit-category").value = m.category; $("#edit-type").value = m.type; $("#edit-importance").value = m.importance;
    drawGraph(m, data.neighbours);
    const versions = await api("GET", "/api/v1/memory/" + encodeURIComponent(id) + "/versions");
    $("#versions").replaceChildren(...versions.versions.map((v) => el("li", v.content)));
    for (const tr of document.querySelectorAll("tr.mem-row")) tr.classList.toggle("selected", tr.dataset.id === m.id);
  } catch (e) { status(e.message, true); }
}

function drawGraph(center, neighbours) {
  const svg = $("#graph"); const ns = "http://www.w3.org/2000/svg"; svg.replaceChildren();
  const cx = 180, cy = 120, r = 85;
  const node = (x, y, label, id, main) => {
    const c = document.createElementNS(ns, "circle");
    c.setAttribute("cx", x); c.setAttribute("cy", y); c.setAttribute("r", main ? 9 : 6); c.setAttribute("fill", main ? "#283845" : "#6a9fd4");
    const t = document.createElementNS(ns, "text"); t.setAttribute("x", x + 10); t.setAttribute("y", y + 4);
    t.textContent = label.length > 28 ? label.slice(0, 27) + "…" : label;
    if (!main) { t.addEventListener("click", () => show(id)); c.addEventListener("click", () => show(id)); }
    svg.append(c, t);
  };
  neighbours.forEach((n, i) => {
    const a = (2 * Math.PI * i) / Math.max(neighbours.length, 1);
    const x = cx + r * Math.cos(a), y = cy + r * Math.sin(a);
    const line = document.createElementNS(ns, "line");
    line.setAttribute("x1", cx); line.setAttribute("y1", cy); line.setAttribute("x2", x); line.setAttribute("y2", y); line.setAttribute("stroke", "#aaa");
    svg.append(line); node(x, y, n.key, n.id, false);
  });
  node(cx, cy, center.key, center.id, true);
}

async function save(ev) {
  ev.preventDefault();
  try {
    const body = { content: $("#edit-content").value, tags: $("#edit-tags").value.split(",").map((t) => t.trim()).filter(Boolean),
      category: $("#edit-category").value, type: $("#edit-type").value, importance: Number($("#edit-importance").value) };
    const res = await api("PATCH", "/api/v1/memory/" + encodeURIComponent(current.id), body);
    await search(); await show(current.id); await loadAudit(); status(`saved (${res.action})`);
  } catch (e) { status(e.message, true); }
}

async function forget(ev) {
  ev.preventDefault();
  try {
    await api("DELETE", "/api/v1/memory/" + encodeURIComponent(current.id) + "?reason=" + encodeURIComponent($("#forget-reason").value));
    const key = current.key; $("#detail").hidden = true; current = null; $("#forget-reason").value = "";
    await search(); await loadAudit(); status(`forgot ${key}`);
  } catch (e) { status(e.message, true); }
}

async function addLink(ev) {
  ev.preventDefault();
  try { await api("POST", "/api/v1/memory/" + encodeURIComponent(current.id) + "/links", { to: $("#link-to").value }); $("#link-to").value = ""; await show(current.id); }
  catch (e) { status(e.message, true); }
}

async function create(ev) {
  ev.preventDefault();
  try {
    const res = await api("POST", "/api/v1/memory", { content: $("#new-content").value, category: $("#new-category").value,
      tags: $("#new-tags").value.split(",").map((t) => t.trim()).filter(Boolean) });
    $("#new-content").value = ""; await search(); await loadAudit(); status(`stored ${res.key} (${res.action})`);
  } catch (e) { status(e.message, true); }
}

async function loadAudit() {
  const list = $("#audit");
  try {
    const data = await api("GET", "/api/v1/audit?limit=20");
    list.replaceChildren(...data.entries.map((e) => el("li", JSON.stringify(e))));
    if (!data.entries.length) list.replaceChildren(el("li", "no changes recorded yet"));
  } catch (e) { list.replaceChildren(el("li", e.status === 501 ? "The audit trail is not available in this build." : e.message)); }
}

async function whoami() {
  try { const s = await api("GET", "/api/v1/stats"); $("#who").textContent = `agent ${s.agent} · ${s.memories} memories`; return true; }
  catch (e) { $("#who").textContent = "not signed in"; status("Enter a valid API token above (engram token create).", true); return false; }
}

$("#token-form").addEventListener("submit", async (ev) => {
  ev.preventDefault(); token = $("#token").value.trim(); sessionStorage.setItem("engram-token", token); $("#token").value = "";
  if (await whoami()) { await search(); await loadAudit(); }
});
$("#search-form").addEventListener("submit", search);
$("#edit-form").addEventListener("submit", save);
$("#forget-form").addEventListener("submit", forget);
$("#link-form").addEventListener("submit", addLink);
$("#new-form").addEventListener("submit", create);
(async () => { if (token && await whoami()) { await search(); await loadAudit(); } })();
