// The memory list (paged and sortable, or a search's ranked hits) and one memory's detail:
// versions, links (add, remove), what it supersedes or is superseded by, edit and forget. Searches
// pass touch=false: looking is not using.
import { $, api, el, fmt, nav, status, when } from "./common.js";

const state = { offset: 0, total: 0, current: null, seq: 0 };
const enc = encodeURIComponent;
// The most of a memory's links, and of the memories it supersedes, its detail lists.
const SHOWN = 50;

// A note under a list the detail cut short (`text`), hidden when it is whole (`text` empty).
function note(id, text) { $(id).hidden = !text; $(id).textContent = text; }

function row(memory, hit) {
  const tr = el("tr", undefined, "mem-row"); tr.dataset.id = memory.id;
  const main = el("td"); main.append(el("div", memory.content, "content"), el("div", memory.key, "key"));
  tr.append(main, el("td", memory.category + " / " + memory.type), el("td", memory.tags.join(", ")), el("td", memory.scope),
    el("td", fmt(memory.importance)), el("td", when(memory.last_accessed)), el("td", when(memory.created_at)));
  const p = hit ? hit.parts : null;
  tr.append(el("td", hit ? `${fmt(hit.score)} = ${fmt(p.text)} · ${fmt(p.vector)} · ${fmt(p.fused)} · ${fmt(p.recency)} · ${fmt(p.importance)} · ${fmt(p.link)}` : "", "parts"));
  tr.addEventListener("click", () => show(memory.id));
  if (state.current && state.current.id === memory.id) tr.classList.add("selected");
  return tr;
}

function filterParams() {
  const params = new URLSearchParams();
  for (const [id, name] of [["#f-category", "category"], ["#f-type", "type"], ["#f-tag", "tag"]]) {
    if ($(id).value.trim()) params.set(name, $(id).value.trim());
  }
  return params;
}

export async function load() {
  const q = $("#q").value.trim();
  const params = filterParams();
  // The scope narrows a search on the server, as it does the list: filtering the 100 hits here
  // would lose every hit of that scope ranked below them.
  if ($("#f-scope").value) params.set("scope", $("#f-scope").value);
  const seq = ++state.seq;  // only the latest request may fill the table
  try {
    let rows;
    if (q) {
      params.set("q", q); params.set("limit", "100"); params.set("touch", "false"); params.set("mode", $("#f-mode").value);
      const data = await api("GET", "/api/v1/memory/search?" + params);
      if (seq !== state.seq) return;
      rows = data.hits.map((h) => row(h.memory, h));
      status(`${rows.length} hit(s) for “${q}” (${data.mode})` + (data.notes.length ? " — " + data.notes.join("; ") : ""));
      $("#pager").hidden = true;
    } else {
      const size = Number($("#f-size").value);
      params.set("order", $("#f-order").value); params.set("limit", String(size)); params.set("offset", String(state.offset));
      const data = await api("GET", "/api/v1/memory?" + params);
      if (seq !== state.seq) return;
      // Forgetting the last rows of the last page leaves it past the end: show the page now last.
      if (!data.memories.length && state.offset > 0) {
        state.offset = Math.max(0, Math.ceil(data.total / size) - 1) * size; return load();
      }
      state.total = data.total;
      rows = data.memories.map((m) => row(m));
      const last = Math.min(state.offset + size, data.total);
      $("#page-info").textContent = data.total ? `${state.offset + 1}–${last} of ${data.total}` : "no memories";
      $("#prev").disabled = state.offset === 0; $("#next").disabled = last >= data.total;
      $("#pager").hidden = false;
      status(`${data.total} memories`);
    }
    for (const th of document.querySelectorAll("th.sortable")) th.classList.toggle("sorted", !q && th.dataset.order === $("#f-order").value);
    $("#results tbody").replaceChildren(...rows);
  } catch (e) { status(e.status === 401 ? "Enter a valid API token above." : e.message, true); }
}

export async function show(id) {
  try {
    const data = await api("GET", "/api/v1/memory/" + enc(id) + "/links?limit=" + SHOWN);
    const m = data.memory;
    // An erase ticked for one memory is not carried to the next one opened.
    if (!state.current || state.current.id !== m.id) { $("#forget-erase").checked = false; armErase(null); }
    state.current = m;
    $("#detail").hidden = false;
    $("#d-key").textContent = m.key;
    const facts = [["id", m.id], ["scope", m.scope], ["layer", m.layer], ["created", when(m.created_at)],
      ["updated", when(m.updated_at)], ["last used", when(m.last_accessed)], ["recalled", `${m.recall_count}×`],
      ["importance", fmt(m.importance)], ["related entity", m.related_entity || "-"], ["source", m.source || "-"]];
    // Valid time (when the fact held) only where it was given, stated or closed by superseding.
    if (m.valid_from != null) facts.push(["valid from", when(m.valid_from)]);
    if (m.valid_until != null) facts.push(["valid until", when(m.valid_until)]);
    // When this store received it, where that says more than its creation (an import keeps the source's times).
    if (m.received_at != null && m.received_at !== m.created_at) facts.push(["arrived", when(m.received_at)]);
    $("#d-meta").replaceChildren(...facts.flatMap(([k, v]) => [el("dt", k), el("dd", v)]));
    $("#edit-content").value = m.content; $("#edit-tags").value = m.tags.join(", ");
    $("#edit-category").value = m.category; $("#edit-type").value = m.type; $("#edit-importance").value = m.importance;
    // The form as shown: a textarea turns \r\n into \n, so only a field the user changed is sent.
    state.shown = formValues();
    $("#d-links").replaceChildren(...data.neighbours.map((n) => {
      const li = el("li"); const unlink = el("button", "unlink", "unlink"); unlink.type = "button"; unlink.dataset.id = n.id;
      unlink.addEventListener("click", () => removeLink(n, unlink));
      // A superseded neighbour is still linked (listed, to unlink), but out of the list and recall: said so.
      const mark = n.superseded_by ? [el("span", " superseded", "superseded")] : [];
      li.append(opener(n), ...mark, el("span", " " + n.content.slice(0, 80), "muted"), unlink); return li;
    }));
    if (!data.neighbours.length) $("#d-links").replaceChildren(el("li", "no links", "muted"));
    // The memory's own links name every memory linked to it that this agent may read (the API
    // leaves out the others): past the list, the note says how many there are.
    const linked = m.links.length, listed = data.neighbours.length;
    note("#d-links-note", linked > listed ? `showing ${listed} of ${linked.toLocaleString("en")} links (the newest)` : "");
    // Supersession both ways: the memory names its successor (superseded_by), the API lists those it
    // supersedes. A superseded memory is out of the list and recall, so these links are how to reach it.
    const [older, successor, versions] = await Promise.all([
      // One more than is listed: the API gives no total, so the extra one is how the page knows of more.
      api("GET", "/api/v1/memory/" + enc(m.id) + "/supersedes?limit=" + (SHOWN + 1)),
      // A successor forgotten since is named by its id, with nothing to open.
      m.superseded_by ? api("GET", "/api/v1/memory/" + enc(m.superseded_by)).catch((e) => (e.status === 404 ? null : Promise.reject(e))) : null,
      api("GET", "/api/v1/memory/" + enc(m.id) + "/versions")]);
    if (!state.current || state.current.id !== m.id) return;  // another memory was opened (or forgotten) meanwhile
    const notice = $("#d-superseded"); notice.hidden = !m.superseded_by;
    notice.replaceChildren();
    if (m.superseded_by) {
      notice.append("Superseded by ", successor ? opener(successor) : el("code", m.superseded_by + " (no longer stored)"),
        m.superseded_at ? ` on ${when(m.superseded_at)}` : "", ": kept, but out of the list and of recall.");
    }
    note("#d-supersedes-note", older.supersedes.length > SHOWN ? `showing the oldest ${SHOWN}; it supersedes more` : "");
    $("#d-supersedes").replaceChildren(...older.supersedes.slice(0, SHOWN).map((o) => {
      const li = el("li"); li.append(opener(o), el("span", " " + o.content.slice(0, 80), "muted")); return li;
    }));
    if (!older.supersedes.length) $("#d-supersedes").replaceChildren(el("li", "none", "muted"));
    $("#versions").replaceChildren(...versions.versions.map((v) => {
      const li = el("li"); li.append(el("span", when(v.replaced_at) + " ", "muted"), el("span", v.content, "content")); return li;
    }));
    if (!versions.versions.length) $("#versions").replaceChildren(el("li", "none", "muted"));
    for (const tr of document.querySelectorAll("tr.mem-row")) tr.classList.toggle("selected", tr.dataset.id === m.id);
  } catch (e) { status(e.message, true); }
}
// A memory's key as a link that opens it in the detail.
function opener(memory) {
  const a = el("a", memory.key, "link"); a.href = "#"; a.dataset.id = memory.id;
  a.addEventListener("click", (ev) => { ev.preventDefault(); show(memory.id); });
  return a;
}
nav.showMemory = async (id) => { await nav.showTab("memories"); await show(id); };

function formValues() {
  return { content: $("#edit-content").value, tags: $("#edit-tags").value, category: $("#edit-category").value,
    type: $("#edit-type").value, importance: $("#edit-importance").value };
}

async function save(ev) {
  ev.preventDefault();
  const m = state.current;
  try {
    const now = formValues(); const body = {};
    for (const name of Object.keys(now)) if (now[name] !== state.shown[name]) body[name] = now[name];
    if ("tags" in body) body.tags = body.tags.split(",").map((t) => t.trim()).filter(Boolean);
    if ("importance" in body) {
      if (body.importance.trim() === "") throw new Error("importance: give a number from 0 to 1");
      body.importance = Number(body.importance);
    }
    if (!Object.keys(body).length) { status("nothing changed"); return; }
    const res = await api("PATCH", "/api/v1/memory/" + enc(m.id), body);
    await load(); await show(m.id); status(`saved (${res.action})`);
  } catch (e) { status(e.message, true); }
}

// An erase cannot be undone (a forget can, from a backup): its first click only asks, in the
// button's own label, and a second click on the same memory erases. Unticking the box, or another
// memory opened, asks again.
function armErase(id) {
  state.eraseArmed = id;
  const erase = $("#forget-erase").checked;
  $("#forget-btn").textContent = !erase ? "Forget" : id ? "Erase — this cannot be undone: click again to confirm" : "Erase";
}

async function forget(ev) {
  ev.preventDefault();
  const m = state.current;
  // The field's `required` lets spaces through: a reason is words, so a blank one is refused here.
  const reason = $("#forget-reason").value.trim();
  if (!reason) { status("reason: say why it is forgotten (a blank reason is not one)", true); $("#forget-reason").focus(); return; }
  const erase = $("#forget-erase").checked;
  if (erase && state.eraseArmed !== m.id) {
    armErase(m.id); status(`erase ${m.key}? This cannot be undone: click the button again to erase it`); return;
  }
  try {
    const res = await api("DELETE", "/api/v1/memory/" + enc(m.id) + "?reason=" + enc(reason) + (erase ? "&erase=true" : ""));
    $("#detail").hidden = true; state.current = null; $("#forget-reason").value = ""; $("#forget-erase").checked = false; armErase(null);
    await load(); await nav.whoami(); // An erased memory is named by its id, as the trail now names it: its key is often made from its words.
    status(res.erased ? `erased ${m.id} (the audit trail keeps only its id)` : `forgot ${m.key}`);
  } catch (e) { status(e.message, true); }
}

async function addLink(ev) {
  ev.preventDefault();
  try {
    const to = $("#link-to").value;
    const res = await api("POST", "/api/v1/memory/" + enc(state.current.id) + "/links", { to });
    // Said as every other action says it: the red error of a refused attempt must not stay. A
    // link that was already there is said so (the API's `changed`), not claimed as made.
    $("#link-to").value = ""; await show(state.current.id);
    status(res.changed ? `linked ${state.current.key} and ${to}` : `${state.current.key} and ${to} were already linked`);
  } catch (e) { status(e.message, true); }
}

// A link is removed as an erase is: the first click only asks, in the button's own label, and a
// second click on the same button removes it (the detail drawn again, as after a link, disarms it).
async function removeLink(other, button) {
  const m = state.current;
  if (button.dataset.armed !== "yes") {
    for (const b of document.querySelectorAll("#d-links button.unlink")) { b.dataset.armed = ""; b.textContent = "unlink"; }
    button.dataset.armed = "yes"; button.textContent = "unlink — click again to confirm";
    status(`unlink ${m.key} and ${other.key}? Click the button again to remove the link`); return;
  }
  try {
    const res = await api("DELETE", "/api/v1/memory/" + enc(m.id) + "/links/" + enc(other.id));
    await show(m.id);
    status(res.unlinked ? `unlinked ${m.key} and ${other.key}` : `${m.key} and ${other.key} were not linked`);
  } catch (e) { status(e.message, true); }
}

async function create(ev) {
  ev.preventDefault();
  try {
    const res = await api("POST", "/api/v1/memory", { content: $("#new-content").value, category: $("#new-category").value,
      tags: $("#new-tags").value.split(",").map((t) => t.trim()).filter(Boolean) });
    // Every field is cleared once stored (tags left in the box would go silently on the next memory);
    // a refused store keeps them, to correct.
    $("#new-form").reset(); await load(); await nav.whoami(); status(`stored ${res.key} (${res.action})`);
  } catch (e) { status(e.message, true); }
}

export function init() {
  $("#search-form").addEventListener("submit", (ev) => { ev.preventDefault(); state.offset = 0; load(); });
  for (const id of ["#f-order", "#f-size", "#f-category", "#f-scope"]) $(id).addEventListener("change", () => { state.offset = 0; load(); });
  // The mode is a search's alone: changed while paging the list, it leaves the page where it is.
  $("#f-mode").addEventListener("change", () => { if ($("#q").value.trim()) load(); });
  $("#prev").addEventListener("click", () => { state.offset = Math.max(0, state.offset - Number($("#f-size").value)); load(); });
  $("#next").addEventListener("click", () => { state.offset += Number($("#f-size").value); load(); });
  for (const th of document.querySelectorAll("th.sortable")) {
    th.addEventListener("click", () => {
      const order = th.dataset.order === "recent" && $("#f-order").value === "recent" ? "oldest" : th.dataset.order;
      $("#f-order").value = order; state.offset = 0; $("#q").value = ""; load();
    });
  }
  $("#edit-form").addEventListener("submit", save);
  $("#forget-form").addEventListener("submit", forget);
  $("#forget-erase").addEventListener("change", () => armErase(null));
  $("#link-form").addEventListener("submit", addLink);
  $("#new-form").addEventListener("submit", create);
  $("#d-graph").addEventListener("click", () => nav.graphAround(state.current.content));
}
