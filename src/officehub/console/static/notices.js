// "Avisos de processos": the case notices waiting for the lawyer (or of another status),
// each with its case number, the movement (name and date), the explanation and the text
// the client gets; edit (PATCH), approve (it goes out) or discard. A refusal of the API
// (409) is shown in the console's language by its code (ui.js). The rules that also tell
// the client of movements (CASE_NOTICES_TELL_TOO) are named at the top.

import { api } from "./api.js";
import { t } from "./i18n.js";
import { announce, attempt, badge, clear, formatTime, h } from "./ui.js";

const OPEN = new Set(["PENDING", "APPROVED", "FAILED"]);
const APPROVABLE = new Set(["PENDING", "FAILED"]);
const STATUS_KIND = { PENDING: "info", APPROVED: "warn", SENT: "ok", FAILED: "danger", DISCARDED: "muted" };
const state = { bound: false };

const list = () => document.getElementById("notice-list");
const statusFilter = () => document.getElementById("notices-status");
const rulesBox = () => document.getElementById("notices-rules");

export function reset() {
  clear(list());
  clear(rulesBox());
  rulesBox().hidden = true;
}

function bind() {
  if (state.bound) return;
  state.bound = true;
  document.getElementById("notices-reload").addEventListener("click", () => load());
  statusFilter().addEventListener("change", () => load());
}

export async function show() {
  bind();
  await Promise.all([load(), loadRules()]);
}

async function load() {
  const status = statusFilter().value;
  const answer = await attempt(t("notices.title"), () =>
    api("GET", "/case-notices", { query: { status, limit: 100 } }));
  if (!answer) return;
  clear(list(), answer.data.length ? answer.data.map(render)
    : h("li", { class: "empty" }, t("notices.none")));
  announce(t("notices.count", { count: answer.totalResults }));
}

/** The office's rules that message the client on a new movement too (a key without the
 * scope to read rules just shows nothing). */
async function loadRules() {
  let rules = [];
  try {
    const answer = await api("GET", "/automation-rules", { query: { limit: 100 } });
    rules = answer.data.filter((rule) =>
      (rule.warnings ?? []).some((w) => w.code === "CASE_NOTICES_TELL_TOO"));
  } catch {
    rules = [];
  }
  clear(rulesBox(), rules.length
    ? h("p", {}, t("notices.rulesTellToo", { count: rules.length, names: rules.map((r) => r.name).join(", ") }))
    : null);
  rulesBox().hidden = rules.length === 0;
}

function render(notice) {
  const id = notice.id;
  const open = OPEN.has(notice.status);
  const textId = `notice-text-${id}`;
  const explanationId = `notice-explanation-${id}`;
  const title = t("notices.caseNumber", { number: notice.caseNumber });
  return h("li", { class: "case-notice", dataset: { noticeId: id, status: notice.status } },
    h("article", { "aria-label": title },
      h("h2", {}, title, " ", badge(t(`noticeStatus.${notice.status}`), STATUS_KIND[notice.status] ?? "")),
      h("p", { class: "movement" },
        h("strong", {}, t("notices.movement")), " ", notice.movementDescription,
        " · ", t("notices.occurredAt", { time: formatTime(notice.occurredAt) })),
      notice.error ? h("p", { class: "error" }, t("notices.failedBecause", { reason: notice.error })) : null,
      notice.sendAfter ? h("p", {}, t("notices.sendAfter", { time: formatTime(notice.sendAfter) })) : null,
      notice.sentAt ? h("p", {}, t("notices.sentAt", {
        time: formatTime(notice.sentAt), as: t(`notices.sentAs.${notice.sentAs}`),
      })) : null,
      h("form", { class: "notice-form", onsubmit: (event) => save(event, notice) },
        h("label", { for: explanationId }, t("notices.explanation")),
        h("textarea", { id: explanationId, name: "explanation", rows: "2", disabled: !open },
          notice.explanation),
        h("label", { for: textId }, t("notices.text")),
        h("textarea", { id: textId, name: "text", rows: "5", disabled: !open }, notice.text),
        open ? h("div", { class: "actions" },
          h("button", { type: "submit", class: "secondary" }, t("notices.save")),
          APPROVABLE.has(notice.status) ? h("button", {
            type: "button", onclick: (event) => act(notice, "approve", event.currentTarget),
          }, t("notices.approve")) : null,
          h("button", {
            type: "button", class: "secondary", onclick: (event) => act(notice, "discard", event.currentTarget),
          }, t("notices.discard"))) : null)));
}

function replace(notice) {
  const row = list().querySelector(`li[data-notice-id="${CSS.escape(notice.id)}"]`);
  const fresh = render(notice);
  row?.replaceWith(fresh);
  const heading = fresh.querySelector("h2");
  heading.setAttribute("tabindex", "-1");
  heading.focus();
}

async function save(event, notice) {
  event.preventDefault();
  const body = edits(event.currentTarget, notice);
  if (!Object.keys(body).length) {
    announce(t("notices.unchanged"));
    return;
  }
  const answer = await attempt(t("notices.save"), () =>
    api("PATCH", `/case-notices/${encodeURIComponent(notice.id)}`, { body }));
  if (!answer) return;
  replace(answer);
  announce(t("notices.saved", { number: answer.caseNumber }));
}

function edits(form, notice) {
  const body = {};
  if (form.elements.text.value !== notice.text) body.text = form.elements.text.value;
  if (form.elements.explanation.value !== notice.explanation) {
    body.explanation = form.elements.explanation.value;
  }
  return body;
}

/** Approve (what the form shows is saved first, so what goes out is what the lawyer read)
 * or discard. */
async function act(notice, action, button) {
  const body = edits(button.closest("form"), notice);
  button.disabled = true;
  const answer = await attempt(t(`notices.${action}`), async () => {
    const path = `/case-notices/${encodeURIComponent(notice.id)}`;
    if (action === "approve" && Object.keys(body).length) await api("PATCH", path, { body });
    return api("POST", `${path}/${action}`);
  });
  if (!answer) {
    button.disabled = false;
    return;
  }
  replace(answer);
  announce(t("notices.changed", { number: answer.caseNumber, status: t(`noticeStatus.${answer.status}`) }));
}
