// The console's words: one catalogue per language (strings.pt-BR.js, strings.en.js), no
// people-facing text anywhere else. Portuguese by default; the choice is kept in
// localStorage. Dates are Brazilian (dd/mm/aaaa HH:mm) in the office's time zone, which
// the page carries in <meta name="officehub-time-zone"> (the signed-in user's office's setting,
// else the server's: console/router.py).

import ptBR from "./strings.pt-BR.js";
import en from "./strings.en.js";

export const LANGUAGES = { "pt-BR": ptBR, en };
const DEFAULT_LANGUAGE = "pt-BR";
const LANGUAGE_KEY = "officehub.language";
const DEFAULT_TIME_ZONE = "America/Sao_Paulo";

function chosenLanguage() {
  let stored = null;
  try {
    stored = localStorage.getItem(LANGUAGE_KEY);
  } catch {
    stored = null;
  }
  return stored && stored in LANGUAGES ? stored : DEFAULT_LANGUAGE;
}

export const language = chosenLanguage();
const catalogue = LANGUAGES[language];
const plurals = new Intl.PluralRules(language);

/** Keeps the choice and reloads the page in that language. */
export function setLanguage(code) {
  if (!(code in LANGUAGES) || code === language) return;
  localStorage.setItem(LANGUAGE_KEY, code);
  location.reload();
}

/** The text of `key`, its `{name}` places filled from `values`; a plural entry
 * ({one, other}) is chosen by `values.count`. A missing key shows itself, bracketed. */
export function t(key, values = {}) {
  let entry = catalogue[key];
  if (entry === undefined) return `[${key}]`;
  if (typeof entry === "object") {
    entry = entry[plurals.select(Number(values.count ?? 0))] ?? entry.other;
  }
  return entry.replace(/\{(\w+)\}/g, (whole, name) =>
    (values[name] === undefined ? whole : String(values[name])));
}

/** Whether the catalogue has `key`. */
export function has(key) {
  return catalogue[key] !== undefined;
}

/** Fills the page's texts: `data-i18n="key"` sets the text, `data-i18n-attr="attr:key;…"`
 * sets attributes (aria-label, title…). */
export function translatePage(root = document) {
  document.documentElement.lang = language;
  for (const element of root.querySelectorAll("[data-i18n]")) {
    element.textContent = t(element.dataset.i18n);
  }
  for (const element of root.querySelectorAll("[data-i18n-attr]")) {
    for (const pair of element.dataset.i18nAttr.split(";")) {
      const [attribute, key] = pair.split(":");
      if (attribute && key) element.setAttribute(attribute.trim(), t(key.trim()));
    }
  }
}

function officeTimeZone() {
  const meta = document.querySelector('meta[name="officehub-time-zone"]');
  const zone = meta?.getAttribute("content") || DEFAULT_TIME_ZONE;
  try {
    new Intl.DateTimeFormat("pt-BR", { timeZone: zone });
    return zone;
  } catch {
    return DEFAULT_TIME_ZONE;
  }
}

export const timeZone = officeTimeZone();
const dateParts = new Intl.DateTimeFormat("pt-BR", {
  timeZone, day: "2-digit", month: "2-digit", year: "numeric",
  hour: "2-digit", minute: "2-digit", hourCycle: "h23",
});

/** An ISO time as dd/mm/aaaa HH:mm in the office's time zone. */
export function formatDateTime(iso) {
  const parts = Object.fromEntries(
    dateParts.formatToParts(new Date(iso)).map((part) => [part.type, part.value]));
  return `${parts.day}/${parts.month}/${parts.year} ${parts.hour}:${parts.minute}`;
}
