// Conversation history: the agent's conversations, and the messages of the one opened.
import { $, api, el, status, when } from "./common.js";

const LIMIT = 1000;  // the most GET /api/v1/history/{conversation} gives (it has no next page)

// `count` is the conversation's size from the list (GET /api/v1/history): past the limit, the page
// says it shows only the newest messages, not all of them.
async function open(key, count) {
  try {
    const data = await api("GET", "/api/v1/history/" + encodeURIComponent(key) + "?limit=" + LIMIT);
    $("#conversation-title").textContent = key;
    const shown = data.messages.length;
    $("#messages-note").hidden = !(count > shown);
    $("#messages-note").textContent = count > shown ? `showing the newest ${shown.toLocaleString("en")} of ${count.toLocaleString("en")} messages` : "";
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
      li.addEventListener("click", () => open(c.conversation, c.messages)); return li;
    }));
    if (!data.conversations.length) $("#conversations").replaceChildren(el("li", "no conversations yet", "muted"));
  } catch (e) { status(e.message, true); }
}

export function init() {}
