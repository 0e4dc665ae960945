// Small DOM helpers. Text from the API is only ever set as text (never parsed as HTML).

import { formatDateTime, has, t } from "./i18n.js";

export function h(tag, attrs = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith("on") && typeof value === "function") {
      element.addEventListener(name.slice(2), value);
    } else if (name === "dataset") {
      Object.assign(element.dataset, value);
    } else if (name === "class") {
      element.className = value;
    } else if (value === true) {
      element.setAttribute(name, "");
    } else {
      element.setAttribute(name, String(value));
    }
  }
  append(element, children);
  return element;
}

// Bidirectional controls (embeddings, overrides, isolates, LRM/RLM) reorder what follows
// them on screen: "abc\u202Egpj.exe" reads "abcexe.jpg". Every text the console shows has
// them replaced by a visible mark; the API keeps and answers the original characters.
const BIDI_CONTROLS = /[\u200E\u200F\u202A-\u202E\u2066-\u2069]/g;

export function neutralised(text) {
  return text.replace(BIDI_CONTROLS,
    (c) => `⟦U+${c.codePointAt(0).toString(16).toUpperCase().padStart(4, "0")}⟧`);
}

function append(element, children) {
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    element.append(child instanceof Node ? child : document.createTextNode(neutralised(String(child))));
  }
}

export function clear(element, ...children) {
  element.replaceChildren();
  append(element, children);
  return element;
}

export function $(selector, root = document) {
  return root.querySelector(selector);
}

const notice = () => document.getElementById("notice");
const status = () => document.getElementById("status");

// The rule a weak password broke, read from the API's details (accounts/passwords.py).
const WEAK_PASSWORD_REASONS = [
  [/at least/, "short"], [/at most/, "long"], [/too common/, "common"], [/name or email/, "personal"],
];

/** The sentence that says an API error in the console's language: the catalogue's
 * `apiError.<CODE>` (a weak password: which rule it broke), else one for its HTTP status,
 * else the API's own message. */
export function errorSentence(error) {
  const code = error?.code ?? "ERROR";
  if (code === "WEAK_PASSWORD") {
    const reason = WEAK_PASSWORD_REASONS.find(([rule]) => rule.test(String(error.details ?? "")));
    if (reason) return t(`apiError.WEAK_PASSWORD.${reason[1]}`);
  }
  if (has(`apiError.${code}`)) return t(`apiError.${code}`);
  const status = error?.status >= 500 ? 500 : error?.status;
  if (has(`apiError.status.${status}`)) return t(`apiError.status.${status}`);
  return error?.message ?? String(error);
}

/** The fields a 400 names (its details read "body.email: …; body.role: …"), in words:
 * the catalogue's `apiError.field.<name>`, else the field's own name. */
export function errorFields(error) {
  if (error?.status !== 400 || !error.details) return [];
  const names = [];
  for (const part of String(error.details).split("; ")) {
    const match = /^([A-Za-z0-9_.]+): /.exec(part);
    if (!match) continue;
    const path = match[1].split(".").filter((piece) => !/^\d+$/.test(piece));
    if (["body", "query", "path"].includes(path[0])) path.shift();
    const name = path[path.length - 1];
    if (!name) continue;
    const words = has(`apiError.field.${name}`) ? t(`apiError.field.${name}`) : name;
    if (!names.includes(words)) names.push(words);
  }
  return names;
}

/** Shows an API error as a sentence in the console's language (and, for a 400, the fields
 * to correct, in words); the API's status, code, message and details stay below, folded
 * under "technical details", for whoever asks for support. */
export function showError(error, context = "") {
  const box = notice();
  const code = error?.code ?? "ERROR";
  const httpStatus = error?.status ? `${error.status} ` : "";
  const lead = context ? `${context}: ` : "";
  const explain = code === "OUTSIDE_SERVICE_WINDOW" ? t("error.outsideWindow") : "";
  const fields = errorFields(error);
  clear(
    box,
    h("p", {}, lead ? h("strong", {}, lead) : null, errorSentence(error)),
    fields.length
      ? h("p", { class: "fields" }, t("apiError.inField", { count: fields.length, fields: fields.join(", ") }))
      : null,
    explain ? h("p", {}, explain) : null,
    h("details", { class: "technical" },
      h("summary", {}, t("apiError.technical")),
      h("p", { class: "details" }, `${httpStatus}${code} · ${error?.message ?? String(error)}`),
      error?.details ? h("p", { class: "details" }, error.details) : null),
    h("button", { type: "button", class: "link", onclick: clearError }, t("common.dismiss")),
  );
  box.dataset.code = code;
}

/** Shows an alert for the office (not an error of the person's own action) in the same
 * box, until dismissed; `code` names it (`data-code`). */
export function showAlert(text, code) {
  const box = notice();
  clear(
    box,
    h("p", {}, h("strong", {}, text)),
    h("button", { type: "button", class: "link", onclick: clearError }, t("common.dismiss")),
  );
  box.dataset.code = code;
}

/** Shows an alert for the office that stays until the person dismisses it (or signs out),
 * in a box of its own: the errors and notices of the page, which its loading clears, never
 * take it away. `code` names it (`data-code`). */
export function showLastingAlert(text, code) {
  const box = document.getElementById("office-alerts");
  clear(
    box,
    h("p", {}, h("strong", {}, text)),
    h("button", { type: "button", class: "link", onclick: clearLastingAlert }, t("common.dismiss")),
  );
  box.dataset.code = code;
}

export function clearLastingAlert() {
  const box = document.getElementById("office-alerts");
  box.replaceChildren();
  delete box.dataset.code;
}

export function clearError() {
  const box = notice();
  box.replaceChildren();
  delete box.dataset.code;
}

let fading = null;

/** Says what happened in the polite status line; it clears itself after a while. */
export function announce(text) {
  status().textContent = neutralised(text);
  clearTimeout(fading);
  fading = setTimeout(() => { status().textContent = ""; }, 8000);
}

/** Runs an action, showing its error (if any) instead of letting it vanish. */
export async function attempt(context, action) {
  try {
    clearError();
    return await action();
  } catch (error) {
    showError(error, context);
    return undefined;
  }
}

/** `attempt` for work the person did not ask for (what the live stream brought): its
 * error is shown, but it clears nothing, so the person's own error stays until they act. */
export async function attemptInBackground(context, action) {
  try {
    return await action();
  } catch (error) {
    showError(error, context);
    return undefined;
  }
}

/** dd/mm/aaaa HH:mm in the office's time zone; "—" when there is no time. */
export function formatTime(iso) {
  if (!iso) return "—";
  return formatDateTime(iso);
}

/** A span of milliseconds as "3 d 4 h", "5 h 10 min" or "7 min". */
export function formatSpan(ms) {
  const minutes = Math.max(0, Math.floor(ms / 60000));
  const days = Math.floor(minutes / 1440);
  const hours = Math.floor((minutes % 1440) / 60);
  if (days > 0) return hours ? t("span.daysHours", { days, hours }) : t("span.days", { days });
  if (hours > 0) return t("span.hoursMinutes", { hours, minutes: minutes % 60 });
  return t("span.minutes", { minutes });
}

export function option(value, label, selected = false) {
  return h("option", { value, selected }, label);
}

export function badge(text, kind = "") {
  return h("span", { class: `badge ${kind}`.trim() }, text);
}

export function tagChip(tag) {
  return h("span", { class: "tag", dataset: { tagId: tag.id } },
    h("span", { class: "swatch", "aria-hidden": "true", "data-color": tag.color ?? "" }),
    tag.name);
}

/** Colours a tag's swatch through the CSSOM (allowed by the CSP, unlike style="…"). */
export function paintSwatches(root) {
  for (const swatch of root.querySelectorAll(".swatch[data-color]")) {
    if (/^#[0-9a-fA-F]{3,8}$/.test(swatch.dataset.color)) {
      swatch.style.backgroundColor = swatch.dataset.color;
    }
  }
}

