// engram's web page: a thin client of the HTTP API (no framework, no build step). Each tab is a
// module; this one signs in, switches tabs and loads a tab when it is opened.
import { $, api, nav, session, setToken, status } from "./common.js";
import * as memories from "./memories.js";
import * as graph from "./graph.js";
import * as stats from "./stats.js";
import * as audit from "./audit.js";
import * as conversations from "./conversations.js";

const url = new URL(location.href);
if (url.searchParams.get("token")) {  // opened from the address `engram serve` printed
  setToken(url.searchParams.get("token"));
  url.searchParams.delete("token");
  history.replaceState(null, "", url.pathname + url.search);
}

const loaders = { memories: memories.load, graph: graph.load, stats: stats.load, audit: audit.load,
                  conversations: conversations.load };
let active = "memories";

function showTab(name) {
  active = name;
  status("");  // a message about another tab's action does not belong to this one
  for (const b of document.querySelectorAll("#tabs button")) b.classList.toggle("active", b.dataset.tab === name);
  for (const s of document.querySelectorAll("section.tab")) s.hidden = s.id !== "tab-" + name;
  return loaders[name]();
}
nav.showTab = showTab;

async function whoami() {
  // Opened without a token (not from the address `engram serve` printed), the page says what it
  // needs rather than staying blank.
  if (!session.token) {
    $("#who").textContent = "not signed in"; status("Enter an API token above (engram token create), or open the address engram serve printed.", true);
    return false;
  }
  try {
    const s = await api("GET", "/api/v1/stats");
    $("#who").textContent = `agent ${s.agent} · ${s.memories} memories`; return true;
  } catch (e) {
    // Only a refused token asks for another: any other failure (storage, a server starting) is
    // the server's to say, in its words.
    if (e.status === 401) { $("#who").textContent = "not signed in"; status("Enter a valid API token above (engram token create).", true); }
    else { $("#who").textContent = ""; status(e.message, true); }
    return false;
  }
}

for (const b of document.querySelectorAll("#tabs button")) b.addEventListener("click", () => showTab(b.dataset.tab));
// Another token starts the page afresh: every tab (a memory's detail and versions, the graph, the
// stats, the audit, the conversations) held the previous agent's memories, and a token that is
// refused must not leave them on screen either.
$("#token-form").addEventListener("submit", (ev) => {
  ev.preventDefault(); setToken($("#token").value.trim()); $("#token").value = ""; location.reload();
});
nav.whoami = whoami;
memories.init(); graph.init(); audit.init(); conversations.init();
(async () => { if (await whoami()) await showTab(active); })();
