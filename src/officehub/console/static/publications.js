// "Publicações": the office's court publications (DJEN), newest made available first, the
// unread marked: court, kind, case number (a case of the office filters the list to it),
// the day made available, the deadline (its last day, dd/mm/aaaa, and the period in
// business days), the text (collapsed) and DJEN's link. Filters: unread only, lawyer.
// Actions: mark read or unread, choose the period in business days (PATCH deadlineDays;
// the API recounts the deadline and the card shows it). A refusal is said in the console's
// language by its code (ui.js).

import { api, listAll } from "./api.js";
import { t } from "./i18n.js";
import { announce, attempt, badge, clear, h, option } from "./ui.js";

const state = { bound: false, caseId: null, caseNumber: null, loads: 0 };

const list = () => document.getElementById("publication-list");
const unreadOnly = () => document.getElementById("publications-unread");
const lawyerFilter = () => document.getElementById("publications-lawyer");
const caseBox = () => document.getElementById("publications-case");

export function reset() {
  clear(list());
  state.caseId = state.caseNumber = null;
  showCaseFilter();
}

function bind() {
  if (state.bound) return;
  state.bound = true;
  document.getElementById("publications-reload").addEventListener("click", () => load());
  unreadOnly().addEventListener("change", () => load());
  lawyerFilter().addEventListener("change", () => load());
}

export async function show() {
  bind();
  await loadLawyers();
  await load();
}

/** The lawyer menu: every lawyer of the office, the choice kept across reloads. */
async function loadLawyers() {
  const chosen = lawyerFilter().value;
  const lawyers = await attempt(t("publications.lawyer"), () => listAll("/lawyers"));
  if (!lawyers) return;
  clear(lawyerFilter(), option("", t("publications.lawyerAll")),
    lawyers.map((lawyer) => option(lawyer.id,
      t("publications.lawyerName", { name: lawyer.name, number: lawyer.oab.number, uf: lawyer.oab.uf }),
      lawyer.id === chosen)));
}

async function load() {
  const query = { limit: 100 };
  if (unreadOnly().checked) query.unread = "true";
  if (lawyerFilter().value) query.lawyerId = lawyerFilter().value;
  if (state.caseId) query.caseId = state.caseId;
  const ticket = ++state.loads;  // a later choice of filter wins over an answer still coming
  const answer = await attempt(t("publications.title"), () =>
    api("GET", "/publications", { query }));
  if (!answer || ticket !== state.loads) return;
  clear(list(), answer.data.length ? answer.data.map(render)
    : h("li", { class: "empty" }, t("publications.none")));
  announce(t("publications.count", { count: answer.totalResults }));
}

function showCaseFilter() {
  const box = caseBox();
  clear(box, state.caseId ? [
    t("publications.onlyCase", { number: state.caseNumber }), " ",
    h("button", { type: "button", class: "link", onclick: () => filterByCase(null) },
      t("publications.allCases")),
  ] : null);
  box.hidden = !state.caseId;
}

function filterByCase(publication) {
  state.caseId = publication?.caseId ?? null;
  state.caseNumber = publication?.caseNumber ?? null;
  showCaseFilter();
  load();
}

/** An ISO day (aaaa-mm-dd) as dd/mm/aaaa: a day, with no time zone to apply. */
export function formatDay(iso) {
  if (!iso) return "—";
  const [year, month, day] = iso.split("-");
  return `${day}/${month}/${year}`;
}

function deadline(publication) {
  if (!publication.deadlineOn) return t("publications.noDeadline");
  return t("publications.deadline", {
    day: formatDay(publication.deadlineOn),
    count: publication.deadlineDays,
    source: t(`publications.source.${publication.deadlineDaysSource}`),
  });
}

function caseNumber(publication) {
  if (!publication.caseNumber) return t("publications.noCaseNumber");
  const text = t("publications.caseNumber", { number: publication.caseNumber });
  if (!publication.caseId) return text;
  return h("button", {
    type: "button", class: "link case-link",
    title: t("publications.filterCase"), onclick: () => filterByCase(publication),
  }, text);
}

function render(publication) {
  const id = publication.id;
  const daysId = `publication-days-${id}`;
  const title = `${publication.kind} · ${publication.court}`;
  return h("li", { class: "publication", dataset: { publicationId: id, read: String(publication.read) } },
    h("article", { "aria-label": title },
      h("h2", {}, title, " ",
        publication.read ? null : badge(t("publications.unread"), "info")),
      h("p", {}, caseNumber(publication), " · ", publication.organ),
      h("p", {}, t("publications.madeAvailable", {
        day: formatDay(publication.madeAvailableOn), published: formatDay(publication.publishedOn),
      })),
      h("p", { class: "deadline" }, h("strong", {}, deadline(publication))),
      h("details", {},
        h("summary", {}, t("publications.text")),
        h("p", { class: "publication-text" }, publication.text)),
      h("p", { class: "links" },
        publication.link ? h("a", { href: publication.link, target: "_blank", rel: "noreferrer" },
          t("publications.link")) : null,
        publication.link && publication.certificateUrl ? " · " : null,
        publication.certificateUrl ? h("a", {
          href: publication.certificateUrl, target: "_blank", rel: "noreferrer",
        }, t("publications.certificate")) : null),
      h("div", { class: "actions" },
        h("button", {
          type: "button", class: "secondary",
          onclick: (event) => change(publication, { read: !publication.read }, event.currentTarget),
        }, publication.read ? t("publications.markUnread") : t("publications.markRead")),
        h("form", { class: "period", novalidate: true, onsubmit: (event) => setPeriod(event, publication) },
          h("label", { for: daysId }, t("publications.period")),
          h("input", {
            id: daysId, name: "days", type: "number", min: "1", max: "365", step: "1",
            inputmode: "numeric", value: publication.deadlineDays ?? "",
          }),
          h("button", { type: "submit" }, t("publications.setPeriod"))))));
}

function replace(publication) {
  const row = list().querySelector(`li[data-publication-id="${CSS.escape(publication.id)}"]`);
  const fresh = render(publication);
  row?.replaceWith(fresh);
  const heading = fresh.querySelector("h2");
  heading.setAttribute("tabindex", "-1");
  heading.focus();
}

/** The period as typed: empty removes the deadline; anything else goes to the API as a
 * number (or as typed, when it is none) and the API says what is wrong with it. */
function setPeriod(event, publication) {
  event.preventDefault();
  const typed = event.currentTarget.elements.days.value.trim();
  const days = typed === "" ? null : Number.isInteger(Number(typed)) ? Number(typed) : typed;
  change(publication, { deadlineDays: days }, event.submitter);
}

async function change(publication, body, button) {
  if (button) button.disabled = true;
  const answer = await attempt(t("publications.change"), () =>
    api("PATCH", `/publications/${encodeURIComponent(publication.id)}`, { body }));
  if (button) button.disabled = false;
  if (!answer) return;
  replace(answer);
  if ("read" in body) {
    announce(answer.read ? t("publications.markedRead") : t("publications.markedUnread"));
  } else {
    announce(t("publications.periodSet", { deadline: deadline(answer) }));
  }
}
