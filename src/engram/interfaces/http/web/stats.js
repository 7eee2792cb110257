// The dashboard: what the signed-in agent sees (its memories and global ones, never another
// agent's, not even their number) by category, type and scope, the links among them and their
// embedding coverage, and the server's recall/embedding latency percentiles (every agent's calls,
// so no count of them: GET /api/v1/dashboard).
import { $, api, el, status } from "./common.js";

const ms = (v) => (v >= 100 ? v.toFixed(0) : v.toFixed(1)) + " ms";

function card(title, rows, id) {
  const box = el("div", undefined, "card"); if (id) box.id = id;
  box.append(el("h3", title));
  const table = el("table");
  for (const [k, v] of rows) { const tr = el("tr"); tr.append(el("th", k), el("td", String(v))); table.append(tr); }
  box.append(table);
  return box;
}

export async function load() {
  try {
    const d = await api("GET", "/api/v1/dashboard");
    const coverage = d.embedding_coverage === null ? "-" : `${(100 * d.embedding_coverage).toFixed(1)}% (${d.vectors} of ${d.memories})`;
    const latency = Object.entries(d.latency).map(([name, l]) => [name, `p50 ${ms(l.p50_ms)} · p95 ${ms(l.p95_ms)} · p99 ${ms(l.p99_ms)}`]);
    $("#stats").replaceChildren(
      card("Memories", [["visible to " + d.agent, d.memories], ...Object.entries(d.by_category)], "stat-memories"),
      card("By type", Object.entries(d.by_type), "stat-types"),
      card("By scope", Object.entries(d.by_scope), "stat-scopes"),
      card("Store (what " + d.agent + " sees)", [["backend", d.backend], ["links", d.links],
        ["embedding model", d.embedding || "none"], ["embedding coverage", coverage]], "stat-store"),
      card("Latency (the server's, all agents)", latency.length ? latency : [["recall", "no calls recorded yet"]], "stat-latency"),
    );
  } catch (e) { status(e.message, true); }
}
