// The audit trail as a timeline: newest first, readable times, filterable by action, date and memory.
import { $, api, el, nav, status, when } from "./common.js";

const GONE = ["forgotten", "erased"];

// Ids of the memories the listing itself shows gone: newest first, a memory's newest row decides,
// so every older row of a forgotten or erased memory has nothing to open (a later row, as after a
// restore, opens it again). Narrowed to another action, the listing holds no such rows: the
// forgets and erases under the same filters are read once for the whole listing.
async function goneIds(entries, params) {
  const rows = [...entries];
  if (params.has("action") && !GONE.includes(params.get("action"))) {
    for (const action of GONE) {
      const p = new URLSearchParams(params); p.set("action", action); p.set("limit", "500");
      rows.push(...(await api("GET", "/api/v1/audit?" + p)).entries);
    }
    rows.sort((a, b) => b.at - a.at);
  }
  const newest = new Map();
  for (const e of rows) if (e.memory_id && !newest.has(e.memory_id)) newest.set(e.memory_id, e.action);
  return new Set([...newest].filter(([, action]) => GONE.includes(action)).map(([id]) => id));
}

// The memory an entry is about, as a link that opens it (a forgotten or erased one has nothing to open).
function memoryRef(e, gone) {
  const code = el("code", e.memory_key || e.memory_id || "");
  if (!e.memory_id || GONE.includes(e.action) || gone.has(e.memory_id)) return code;
  const a = el("a", undefined, "link"); a.href = "#"; a.append(code);
  a.addEventListener("click", (ev) => { ev.preventDefault(); nav.showMemory(e.memory_id); });
  return a;
}

const SHOWN = 200;

export async function load() {
  // One entry more than is shown: the API gives no total and no next page, so the extra one is how
  // the page knows there are older entries to say so.
  const params = new URLSearchParams({ limit: String(SHOWN + 1) });
  if ($("#audit-action").value) params.set("action", $("#audit-action").value);
  if ($("#audit-since").value) params.set("since", String(new Date($("#audit-since").value + "T00:00:00").getTime() / 1000));
  if ($("#audit-memory").value.trim()) params.set("memory", $("#audit-memory").value.trim());
  const list = $("#audit");
  try {
    const data = await api("GET", "/api/v1/audit?" + params);
    const gone = await goneIds(data.entries, params);
    const more = data.entries.length > SHOWN;
    $("#audit-note").hidden = !more;
    $("#audit-note").textContent = more ? `the newest ${SHOWN} entries; narrow with the filters to see older ones` : "";
    list.replaceChildren(...data.entries.slice(0, SHOWN).map((e) => {
      const li = el("li", undefined, "event " + e.action);
      li.append(el("time", when(e.at)), el("span", e.action, "badge"), memoryRef(e, gone),
        el("span", `by ${e.origin}` + (e.reason ? ` — “${e.reason}”` : ""), "muted"));
      const detail = e.detail || {};
      // An update names the fields it changed, and keeps the content and importance they replaced.
      if (detail.changed && detail.changed.length) li.append(el("span", "changed " + detail.changed.join(", "), "changed"));
      if (detail.content) {
        const d = el("details");
        d.append(el("summary", "content"), el("p", detail.content));
        const before = detail.previous || {};
        if ("content" in before) d.append(el("p", "before: " + before.content, "muted"));
        if ("importance" in before) d.append(el("p", `importance before: ${before.importance}`, "muted"));
        li.append(d);
      }
      return li;
    }));
    if (!data.entries.length) list.replaceChildren(el("li", "no changes recorded for this filter", "muted"));
  } catch (e) {
    $("#audit-note").hidden = true;
    list.replaceChildren(el("li", e.status === 501 ? "The audit trail is not available in this build." : e.message));
    if (e.status === 422) status(e.message, true);
  }
}

export function init() {
  $("#audit-form").addEventListener("submit", (ev) => { ev.preventDefault(); load(); });
  $("#audit-action").addEventListener("change", load);
}
