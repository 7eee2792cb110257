// Conversation history: the agent's conversations, and the messages of the one opened.
import { $, api, el, status, when } from "./common.js";

async function open(key) {
  try {
    const data = await api("GET", "/api/v1/history/" + encodeURIComponent(key) + "?limit=1000");
    $("#conversation-title").textContent = key;
    $("#messages").replaceChildren(...data.messages.map((m) => {
      const li = el("li", undefined, "msg " + m.role); li.append(el("span", `${m.role} · ${when(m.created_at)}`, "muted"), el("p", m.content)); return li;
    }));
    for (const li of document.querySelectorAll("#conversations li")) li.classList.toggle("selected", li.dataset.key === key);
  } catch (e) { status(e.message, true); }
}

export async function load() {
  try {
    const data = await api("GET", "/api/v1/history");
    $("#conversations").replaceChildren(...data.conversations.map((c) => {
      const li = el("li", `${c.conversation} (${c.messages})`); li.dataset.key = c.conversation;
      li.addEventListener("click", () => open(c.conversation)); return li;
    }));
    if (!data.conversations.length) $("#conversations").replaceChildren(el("li", "no conversations yet", "muted"));
  } catch (e) { status(e.message, true); }
}

export function init() {}
