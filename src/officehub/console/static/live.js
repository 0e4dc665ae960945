// The live inbox: one EventSource on GET /stream for a signed-in session (the cookie goes
// with it; an API key cannot ride on an EventSource, so a key's console reloads by hand).
// The browser reconnects by itself and sends Last-Event-ID: the server replays what was
// missed, or says `reset` and each view reloads what it shows.

import { apiUrl } from "./api.js";
import { t } from "./i18n.js";

const NAMES = [
  "chat.conversation.created", "chat.conversation.updated", "chat.conversation.assigned",
  "chat.message.received", "chat.message.sent", "chat.message.status", "chat.message.updated",
];
const listeners = new Set();
let source = null;

function indicator(state) {
  const box = document.getElementById("live");
  if (!box) return;
  box.hidden = state === "off";
  box.dataset.state = state;
  box.textContent = state === "on" ? t("live.on") : state === "off" ? "" : t("live.reconnecting");
}

/** Calls `listener(name, body)` for every event (`body`: {id, event, data, …}) and with
 * name "reset" when the stream could not resume. Returns the way to stop listening. */
export function subscribe(listener) {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

function deliver(name, body) {
  for (const listener of listeners) {
    try {
      listener(name, body);
    } catch (error) {
      console.error("live", name, error);
    }
  }
}

export function start() {
  stop();
  source = new EventSource(apiUrl("/stream"), { withCredentials: true });
  indicator("connecting");
  // Open: the server has subscribed this stream before it answered, so nothing recorded
  // from now on is missed ("ready", which names the newest event, comes only once the
  // office has one).
  source.addEventListener("open", () => indicator("on"));
  source.addEventListener("ready", () => indicator("on"));
  source.addEventListener("error", () => {
    indicator(source?.readyState === EventSource.CLOSED ? "off" : "connecting");
  });
  source.addEventListener("reset", () => deliver("reset", {}));
  for (const name of NAMES) {
    source.addEventListener(name, (event) => {
      let body = null;
      try {
        body = JSON.parse(event.data);
      } catch {
        return;
      }
      indicator("on");
      deliver(name, body);
    });
  }
}

export function stop() {
  source?.close();
  source = null;
  indicator("off");
}
