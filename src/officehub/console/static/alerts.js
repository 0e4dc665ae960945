// Alerts for a new client message in one's own conversations: a browser notification
// (permission asked only when the person presses "Turn on alerts": browsers refuse the
// question without a gesture) and a short chime made by WebAudio (no sound file).

import { t } from "./i18n.js";
import { showLastingAlert } from "./ui.js";

let audio = null;
const button = () => document.getElementById("alerts");

function refresh() {
  const control = button();
  if (!control) return;
  const supported = "Notification" in window;
  const granted = supported && Notification.permission === "granted";
  control.hidden = !supported;
  control.setAttribute("aria-pressed", String(granted && audio !== null));
  control.textContent = granted && audio ? t("alerts.on") : t("alerts.turnOn");
}

/** On the person's click: asks for the notification permission and unlocks the sound. */
export async function enable() {
  try {
    audio ??= new AudioContext();
    await audio.resume();
  } catch (error) {
    console.warn("audio", error);
  }
  if ("Notification" in window && Notification.permission === "default") {
    await Notification.requestPermission();
  }
  refresh();
}

export function chime() {
  if (!audio || audio.state !== "running") return;
  const now = audio.currentTime;
  const tone = audio.createOscillator();
  const volume = audio.createGain();
  tone.type = "sine";
  tone.frequency.setValueAtTime(880, now);
  tone.frequency.setValueAtTime(1320, now + 0.09);
  volume.gain.setValueAtTime(0.0001, now);
  volume.gain.exponentialRampToValueAtTime(0.2, now + 0.02);
  volume.gain.exponentialRampToValueAtTime(0.0001, now + 0.25);
  tone.connect(volume).connect(audio.destination);
  tone.start(now);
  tone.stop(now + 0.26);
}

/** A new message from `who` in a conversation of the signed-in person. */
export function newMessage(who, text) {
  chime();
  if (!("Notification" in window) || Notification.permission !== "granted") return;
  const shown = new Notification(t("alerts.title", { name: who }), {
    body: String(text ?? "").slice(0, 140), tag: "officehub-message", lang: document.documentElement.lang,
  });
  shown.onclick = () => {
    window.focus();
    shown.close();
  };
}

/** A web chat refused new chats, started past its integration's cap
 * (`chat.webchat.flooded`, on the live stream of keys and admins): shown until dismissed,
 * with the chime and a browser notification when alerts are on. */
export function webchatFlooded() {
  const text = t("alerts.webchatFlooded");
  showLastingAlert(text, "WEBCHAT_FLOODED");
  chime();
  if (!("Notification" in window) || Notification.permission !== "granted") return;
  new Notification(t("alerts.webchatFloodedTitle"), {
    body: text, tag: "officehub-webchat-flooded", lang: document.documentElement.lang,
  });
}

export function bind() {
  button()?.addEventListener("click", () => enable());
  refresh();
}
