// Shared by the page's modules: the API client, DOM helpers and formatting.
// User data is only ever inserted with textContent, never as HTML.
export const $ = (sel) => document.querySelector(sel);

export const session = { token: sessionStorage.getItem("engram-token") || "" };

export function setToken(value) { session.token = value; sessionStorage.setItem("engram-token", value); }

export function status(text, isError) {
  const box = $("#status"); box.textContent = text; box.className = isError ? "error" : "";
}

export async function api(method, path, body) {
  const opts = { method, headers: { "Authorization": "Bearer " + session.token } };
  if (body !== undefined) { opts.headers["Content-Type"] = "application/json"; opts.body = JSON.stringify(body); }
  const asked = `${method} ${new URL(path, location.href).pathname}`;
  let res;
  try { res = await fetch(path, opts); } catch (e) {
    // No answer at all (the server stopped, the network gone): the browser says only "Failed to fetch".
    const err = new Error(`no answer from the server to ${asked} (${e.message}): is engram serve still running?`);
    err.status = 0; throw err;
  }
  const data = res.headers.get("content-type")?.includes("json") ? await res.json() : await res.text();
  if (!res.ok) {
    // An answer with no detail (a proxy's, a crash's) still says its status and what was asked:
    // HTTP/2 has no reason phrase, so statusText alone is often empty.
    const said = [res.status, res.statusText].filter(Boolean).join(" ");
    const err = new Error((data && (data.detail || data.title)) || `HTTP ${said} on ${asked} (no detail given)`);
    err.status = res.status; throw err;
  }
  return data;
}

export function el(tag, text, cls) {
  const e = document.createElement(tag);
  if (text !== undefined && text !== null) e.textContent = text;
  if (cls) e.className = cls;
  return e;
}

export const fmt = (n, digits = 2) => (n === undefined || n === null) ? "-" : Number(n).toFixed(digits);

// Epoch seconds as a local date and time people read ("2026-11-23 05:10:24").
export function when(ts) {
  if (!ts) return "-";
  const d = new Date(ts * 1000);
  const pad = (n) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

export function bytes(n) {
  if (n === null || n === undefined) return "-";
  const units = ["B", "KB", "MB", "GB", "TB"]; let i = 0; let v = n;
  while (v >= 1024 && i < units.length - 1) { v /= 1024; i++; }
  return `${v.toFixed(i ? 1 : 0)} ${units[i]}`;
}

// Opening a memory from any tab (the graph, the audit) goes through here; memories.js sets it;
// app.js sets whoami: the header's count of memories is said again after a store or a forget.
export const nav = { showMemory: async () => {}, showTab: () => {}, graphAround: async () => {}, whoami: async () => {} };
