// The link graph of the whole store (most important first, up to a limit) or of a query's
// neighbourhood, drawn with cytoscape.js and the fcose layout (vendored, served locally).
// Stays legible at a few thousand nodes: colour by category, size by links, labels only once
// zoomed in, edges hidden while panning, isolated memories packed in a grid beside the linked ones.
import { $, api, el, nav, status } from "./common.js";

const COLOURS = { core: "#c0392b", knowledge: "#2e6da4", conversation: "#7f8c8d" };
let cy = null;
let seq = 0;
if (window.cytoscape && window.cytoscapeFcose) window.cytoscape.use(window.cytoscapeFcose);

function legend() {
  $("#graph-legend").replaceChildren(...Object.entries(COLOURS).map(([name, colour]) => {
    const item = el("span", name, "legend-item"); const dot = el("i"); dot.style.background = colour; item.prepend(dot); return item;
  }), el("span", "size: links · ring: a query's hit · click a node to open it", "muted"));
}

export async function draw(query) {
  const mine = ++seq;
  const params = new URLSearchParams({ limit: $("#graph-limit").value || "3000" });
  if (query) params.set("q", query);
  $("#graph-status").textContent = "loading…";
  try {
    const data = await api("GET", "/api/v1/graph?" + params);
    if (mine !== seq) return;
    const big = data.nodes.length > 800;
    const elements = [
      ...data.nodes.map((n) => ({ data: { id: n.id, label: n.key, category: n.category, degree: n.degree,
        hit: n.score !== undefined ? 1 : 0, content: n.content } })),
      ...data.edges.map((e, i) => ({ data: { id: "e" + i, source: e.source, target: e.target } })),
    ];
    if (cy) cy.destroy();
    cy = window.cytoscape({
      container: $("#cy"), elements, minZoom: 0.02, maxZoom: 4, wheelSensitivity: 0.3,
      textureOnViewport: big, hideEdgesOnViewport: big, pixelRatio: big ? 1 : "auto",
      style: [
        { selector: "node", style: { "background-color": (n) => COLOURS[n.data("category")] || "#555",
          width: (n) => 8 + 4 * Math.sqrt(n.data("degree")), height: (n) => 8 + 4 * Math.sqrt(n.data("degree")),
          label: "data(label)", "font-size": 9, "min-zoomed-font-size": 8, "text-valign": "bottom", "text-margin-y": 2,
          "text-max-width": 120, "text-wrap": "ellipsis", color: "#222" } },
        // Unlinked memories are packed in a grid: their labels wait for a closer zoom.
        { selector: "node[degree = 0]", style: { "min-zoomed-font-size": 16 } },
        { selector: "node[hit = 1]", style: { "border-width": 3, "border-color": "#f39c12" } },
        { selector: "node:selected", style: { "border-width": 3, "border-color": "#000" } },
        { selector: "edge", style: { width: 1, "line-color": "#b8c4ce", "curve-style": "haystack", opacity: 0.8 } },
      ],
      layout: { name: window.cytoscapeFcose ? "fcose" : "grid", quality: "default", randomize: true,
        animate: false, packComponents: true, tilingPaddingVertical: 24, tilingPaddingHorizontal: 24, nodeRepulsion: 6000, idealEdgeLength: 60, numIter: big ? 1000 : 2500 },
    });
    cy.on("tap", "node", (ev) => nav.showMemory(ev.target.id()));
    cy.on("mouseover", "node", (ev) => { $("#graph-status").textContent = ev.target.data("content"); });
    window.engramGraph = cy;  // for tests and the curious: the live cytoscape instance
    const shown = `${data.nodes.length} memories, ${data.edges.length} links`;
    $("#graph-status").textContent = query ? `neighbourhood of “${query}”: ${shown}`
      : `drawn ${shown}` + (data.truncated ? ` (the ${data.nodes.length} most important of ${data.total})` : "");
  } catch (e) { $("#graph-status").textContent = ""; status(e.message, true); }
}

export async function load() { legend(); if (!cy) await draw($("#graph-q").value.trim()); }

export function init() {
  $("#graph-form").addEventListener("submit", (ev) => { ev.preventDefault(); draw($("#graph-q").value.trim()); });
  nav.graphAround = async (query) => {
    $("#graph-q").value = query.slice(0, 200); await nav.showTab("graph"); await draw($("#graph-q").value);
  };
}
