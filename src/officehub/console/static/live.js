// The live inbox: one stream on GET /stream. A signed-in session uses an EventSource (the
// cookie goes with it; the browser reconnects by itself and sends Last-Event-ID). An API
// key cannot ride on an EventSource, so a key's console reads the same stream with fetch,
// the key in its header, parsing the server-sent events itself and reconnecting with
// Last-Event-ID after the server's `retry`. Either way the server replays what was missed,
// or says `reset` and each view reloads what it shows.

import { apiUrl } from "./api.js";
import { t } from "./i18n.js";

const NAMES = [
  "chat.conversation.created", "chat.conversation.updated", "chat.conversation.assigned",
  "chat.message.received", "chat.message.sent", "chat.message.status", "chat.message.updated",
  "chat.sla.breached", "chat.webchat.flooded",
];
const listeners = new Set();
let source = null;
let keyed = null;

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

/** Opens the stream: with `key`, read by fetch (see above); else an EventSource. */
export function start(key) {
  stop();
  if (key) {
    keyed = new KeyedStream(key);
    return;
  }
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
  keyed?.close();
  keyed = null;
  indicator("off");
}

function received(name, data) {
  if (name === "reset") {
    deliver("reset", {});
    return;
  }
  if (name === "ready") {
    indicator("on");
    return;
  }
  if (!NAMES.includes(name)) return;
  let body = null;
  try {
    body = JSON.parse(data);
  } catch {
    return;
  }
  indicator("on");
  deliver(name, body);
}

/** GET /stream read with fetch and the key's header: the server-sent events parsed line by
 * line (`id:`, `event:`, `data:`, `retry:`; comment lines are the heartbeat), reconnecting
 * with Last-Event-ID after `retry` milliseconds when the stream ends or fails, and not at
 * all after a 401 (the key was revoked: the next call of the console says so). */
class KeyedStream {
  constructor(key) {
    this.key = key;
    this.lastId = null;
    this.retry = 2000;
    this.closed = false;
    this.controller = null;
    this.run();
  }

  close() {
    this.closed = true;
    this.controller?.abort();
  }

  async run() {
    while (!this.closed) {
      indicator("connecting");
      let stop = false;
      try {
        stop = await this.once();
      } catch (error) {
        if (this.closed) return;
        console.warn("live", error?.name ?? error);
      }
      if (stop || this.closed) {
        if (!this.closed) indicator("off");
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, this.retry));
    }
  }

  /** One connection; true when it must not be opened again. */
  async once() {
    this.controller = new AbortController();
    const headers = { accept: "text/event-stream", "x-service-api-key": this.key };
    if (this.lastId) headers["last-event-id"] = this.lastId;
    const response = await fetch(apiUrl("/stream"), {
      headers,
      cache: "no-store",
      credentials: "omit",
      signal: this.controller.signal,
    });
    if (response.status === 401 || response.status === 403) return true;
    if (!response.ok || !response.body) return false;
    indicator("on");
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    let event = { name: "message", data: [] };
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return false;
      buffer += value;
      let cut;
      while ((cut = buffer.search(/\r\n|\r|\n/)) >= 0) {
        const line = buffer.slice(0, cut);
        buffer = buffer.slice(cut + (buffer.startsWith("\r\n", cut) ? 2 : 1));
        if (line === "") {
          if (event.data.length) received(event.name, event.data.join("\n"));
          event = { name: "message", data: [] };
          continue;
        }
        if (line.startsWith(":")) continue;
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        const text = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
        if (field === "event") event.name = text;
        else if (field === "data") event.data.push(text);
        else if (field === "id") this.lastId = text;
        else if (field === "retry" && /^\d+$/.test(text)) this.retry = Number(text);
      }
    }
  }
}
