// The client's file: who the client is (name, phone or WhatsApp username, CPF, tags, legal
// area), their funnel card and its column (with a way to move it), cases with the latest
// movements, tickets, case notices, consent and the LGPD actions, and earlier conversations.
// One component, shown beside the open conversation (conversations.js) and on the
// clients page (contacts.js).

import { api, download, listAll } from "./api.js";
import { html, useEffect, useState } from "./html.js";
import { t } from "./i18n.js";
import { announce, attempt, formatTime, neutralised } from "./ui.js";

const CASES_SHOWN = 5;
const MOVEMENTS_SHOWN = 3;
const CONVERSATIONS_SHOWN = 10;

const n = (text) => (text == null ? "" : neutralised(String(text)));
const path = (...parts) => parts.map((p) => encodeURIComponent(p)).join("/");

/** A tag or legal area as a chip with its colour (a class per colour is not possible: the
 * colour is the office's; the swatch is painted through the CSSOM, as ui.paintSwatches). */
export function Chip({ item }) {
  const paint = (element) => {
    if (element && /^#[0-9a-fA-F]{3,8}$/.test(item.color ?? "")) {
      element.style.backgroundColor = item.color;
    }
  };
  return html`<span class="tag" data-tag-id=${item.id}>
    <span class="swatch" aria-hidden="true" ref=${paint}></span>${n(item.name)}</span>`;
}

/** What identifies the client: the phone, else the WhatsApp username, else the e-mail;
 * a web chat visitor's typed phone is a claim, shown as such. */
export function Identity({ contact }) {
  if (contact.verified === false) {
    const claimed = contact.claimedPhone ?? contact.claimedEmail ?? "";
    return html`<p class="muted identity" data-verified="false">
      <span class="badge warn" title=${t("contact.unverifiedTitle")}>${t("contact.unverified")}</span>
      ${claimed ? n(t("contact.claimed", { value: claimed })) : ""}</p>`;
  }
  const username = contact.username ? t("contact.whatsappUsername", { value: contact.username }) : null;
  return html`<p class="muted identity">${n(contact.phone ?? username ?? contact.email ?? "")}</p>`;
}

async function optional(call) {
  try {
    return await call();
  } catch (error) {
    if (error.status === 404 || error.status === 403) return null;
    throw error;
  }
}

async function loadFile(personId, conversation) {
  const [contact, conversations, cases, consents, legalAreas] = await Promise.all([
    api("GET", `/people/${path(personId)}`),
    api("GET", "/conversation", { query: { personId, limit: CONVERSATIONS_SHOWN } }),
    optional(() => api("GET", "/cases", { query: { personId, limit: CASES_SHOWN } })),
    optional(() => api("GET", `/people/${path(personId)}/consents`, { query: { limit: 5 } })),
    optional(() => listAll("/legal-areas")),
  ]);
  const latest = conversation ?? conversations.data[0] ?? null;
  const card = latest
    ? await optional(() => api("GET", `/funnel-column-card/person/${path(personId)}/conversation/${path(latest.id)}`))
    : null;
  const columns = card
    ? await optional(() => listAll("/funnel-column", { funnelId: card.funnelId }))
    : null;
  const caseList = cases?.data ?? [];
  const [movements, notices, tickets] = await Promise.all([
    Promise.all(caseList.map((c) => optional(() =>
      api("GET", `/cases/${path(c.id)}/movements`, { query: { limit: MOVEMENTS_SHOWN } })))),
    Promise.all(caseList.map((c) => optional(() =>
      api("GET", "/case-notices", { query: { caseId: c.id, limit: 5 } })))),
    Promise.all(conversations.data.slice(0, 5).map((c) => optional(() =>
      api("GET", "/ticket", { query: { conversationId: c.id, limit: 10 } })))),
  ]);
  return {
    contact,
    latest,
    conversations: conversations.data,
    card,
    columns: (columns ?? []).slice().sort((a, b) => a.index - b.index),
    cases: caseList.map((c, i) => ({ ...c, movements: movements[i]?.data ?? [] })),
    notices: notices.flatMap((page) => page?.data ?? []),
    tickets: tickets.flatMap((page) => page?.data ?? []),
    consents: consents?.data ?? null,
    legalAreas: new Map((legalAreas ?? []).map((a) => [a.id, a])),
  };
}

function Section({ id, title, children }) {
  return html`<section class="file-section" aria-labelledby=${id}>
    <h3 id=${id}>${title}</h3>${children}</section>`;
}

function CardSection({ file, reload }) {
  const [target, setTarget] = useState("");
  const card = file.card;
  if (!card) return html`<p class="muted">${t("file.noCard")}</p>`;
  const column = file.columns.find((c) => c.id === card.columnId);
  const move = async (event) => {
    event.preventDefault();
    const columnId = target || file.columns.find((c) => c.id !== card.columnId)?.id;
    if (!columnId || columnId === card.columnId) return;
    const to = file.columns.find((c) => c.id === columnId);
    const moved = await attempt(t("file.moveCard"), () =>
      api("PATCH", `/funnel-column-card/${path(card.id)}`, { body: { columnId } }));
    if (!moved) return;
    announce(t("file.cardMoved", { column: to?.name ?? "" }));
    setTarget("");
    reload();
  };
  return html`<div class="file-card" data-card-id=${card.id} data-column-id=${card.columnId}>
    <p><span class="muted">${t("file.column")}</span> <strong class="column-name">${n(column?.name ?? "—")}</strong></p>
    <p class="muted">${t("file.inColumnSince", { time: formatTime(card.columnChangedAt) })}</p>
    ${card.user ? html`<p class="muted">${n(t("file.owner", { name: card.user.name }))}</p>` : null}
    ${file.columns.length > 1 ? html`<form class="row" onSubmit=${move}>
      <label for="file-move-column">${t("file.moveTo")}</label>
      <select id="file-move-column" value=${target} onChange=${(e) => setTarget(e.currentTarget.value)}>
        <option value="">${t("file.chooseColumn")}</option>
        ${file.columns.filter((c) => c.id !== card.columnId).map((c) =>
          html`<option value=${c.id}>${n(c.name)}</option>`)}
      </select>
      <button type="submit" class="secondary">${t("file.moveCard")}</button>
    </form>` : null}
  </div>`;
}

function CasesSection({ file }) {
  if (!file.cases.length) return html`<p class="muted">${t("file.noCases")}</p>`;
  return html`<ul class="file-list">${file.cases.map((c) => html`<li data-case-id=${c.id}>
    <p><strong>${n(c.number)}</strong> <span class="muted">${n(c.courtName)}</span></p>
    ${c.movements.length ? html`<ul class="movements">${c.movements.map((m) => html`<li>
      <span class="muted">${formatTime(m.date ?? m.occurredAt ?? m.createdAt)}</span> ${n(m.description)}</li>`)}</ul>`
      : html`<p class="muted">${t("file.noMovements")}</p>`}
  </li>`)}</ul>`;
}

function ConsentSection({ file, me, reload, onErased }) {
  const contact = file.contact;
  const isAdmin = !me || me.role === "ADMIN";
  const record = async (granted) => {
    const done = await attempt(t("file.consent"), () =>
      api("POST", `/people/${path(contact.id)}/consents`, {
        body: { purpose: "marketing", granted, source: "console" },
      }));
    if (!done) return;
    announce(t("file.consentRecorded"));
    reload();
  };
  const exportData = async () => {
    // A zip (the contact, conversations, cards, cases and media), saved as the API names it.
    const done = await attempt(t("file.export"), () =>
      download(`/people/${path(contact.id)}/export`, {
        accept: "application/zip", fileName: `dados-${contact.id}.zip`,
      }));
    if (!done) return;
    announce(t("file.exported"));
  };
  const erase = async () => {
    if (!window.confirm(t("file.eraseConfirm", { name: contact.name }))) return;
    const done = await attempt(t("file.erase"), () => api("POST", `/people/${path(contact.id)}/erase`));
    if (!done) return;
    announce(t("file.erased"));
    onErased?.();
  };
  const hold = async (event) => {
    event.preventDefault();
    const reason = new FormData(event.currentTarget).get("reason")?.toString().trim();
    const done = await attempt(t("file.hold"), () =>
      api("PUT", `/people/${path(contact.id)}/legal-hold`, {
        body: { legalHold: true, legalHoldReason: reason },
      }));
    if (!done) return;
    announce(t("file.held"));
    reload();
  };
  const release = async () => {
    if (!window.confirm(t("file.releaseConfirm", { name: contact.name }))) return;
    const done = await attempt(t("file.release"), () =>
      api("PUT", `/people/${path(contact.id)}/legal-hold`, { body: { legalHold: false } }));
    if (!done) return;
    announce(t("file.released"));
    reload();
  };
  return html`
    <p>${contact.marketingOptOut ? t("file.marketingOut") : t("file.marketingIn")}</p>
    ${contact.legalHold ? html`<p class="badge warn">${t("file.legalHold")}</p>
      ${contact.legalHoldReason ? html`<p class="muted">${t("file.holdReasonShown", { reason: contact.legalHoldReason })}</p>` : null}` : null}
    ${file.consents?.length ? html`<ul class="file-list">${file.consents.map((c) => html`<li>
      ${t(c.granted ? "file.consentGranted" : "file.consentWithdrawn", { purpose: c.purpose })}
      <span class="muted">${n(c.source)} · ${formatTime(c.recordedAt)}</span></li>`)}</ul>` : null}
    <div class="row">
      <button type="button" class="secondary" onClick=${() => record(contact.marketingOptOut)}>
        ${contact.marketingOptOut ? t("file.recordOptIn") : t("file.recordOptOut")}</button>
      <button type="button" class="secondary" onClick=${exportData}>${t("file.export")}</button>
      ${isAdmin && !contact.legalHold ? html`<button type="button" class="danger" onClick=${erase}>
        ${t("file.erase")}</button>` : null}
      ${isAdmin && contact.legalHold ? html`<button type="button" class="secondary" onClick=${release}>
        ${t("file.release")}</button>` : null}
    </div>
    ${isAdmin && !contact.legalHold ? html`<form class="file-hold" onSubmit=${hold}>
      <label for=${`hold-reason-${contact.id}`}>${t("file.holdReason")}</label>
      <input id=${`hold-reason-${contact.id}`} name="reason" required maxlength="500"
        placeholder=${t("file.holdReasonHint")} />
      <button type="submit" class="secondary">${t("file.hold")}</button>
    </form>` : null}`;
}

/** The file of the client `personId`; `conversation` (optional) is the one open beside it;
 * `children` (the open conversation's own tags) go under the client's identity. */
export function ClientFile({ personId, conversation, me, onOpenConversation, onBack, children, version }) {
  const [file, setFile] = useState(null);
  const [reloads, setReloads] = useState(0);
  const reload = () => setReloads((x) => x + 1);
  useEffect(() => {
    let alive = true;
    attempt(t("file.title"), () => loadFile(personId, conversation)).then((loaded) => {
      if (alive && loaded) setFile(loaded);
    });
    return () => { alive = false; };
  }, [personId, conversation?.id, reloads, version]);
  if (!file || file.contact.id !== personId) {
    return html`<div class="client-file"><p class="muted">${t("file.loading")}</p></div>`;
  }
  const { contact } = file;
  const areaId = (conversation ?? file.latest)?.legalAreaId;
  const area = (areaId && file.legalAreas.get(areaId)) || file.card?.legalArea || null;
  return html`<article class="client-file" aria-labelledby="file-title" data-person-id=${contact.id}>
    ${onBack ? html`<button type="button" class="secondary back narrow-only" onClick=${onBack}>${t("file.back")}</button>` : null}
    <header class="file-head">
      <p class="muted eyebrow">${t("file.title")}</p>
      <h2 id="file-title">${n(contact.name)}</h2>
      <${Identity} contact=${contact} />
      <dl class="facts">
        ${contact.document ? html`<dt>${t("file.cpf")}</dt><dd>${n(contact.document)}</dd>` : null}
        ${contact.email ? html`<dt>${t("file.email")}</dt><dd>${n(contact.email)}</dd>` : null}
        <dt>${t("file.legalArea")}</dt><dd>${area ? html`<${Chip} item=${area} />` : t("file.none")}</dd>
        <dt>${t("file.tags")}</dt><dd>${contact.tags?.length
          ? contact.tags.map((tag) => html`<${Chip} item=${tag} />`) : t("file.none")}</dd>
      </dl>
    </header>
    ${children}
    <${Section} id="file-card-title" title=${t("file.card")}><${CardSection} file=${file} reload=${reload} /><//>
    <${Section} id="file-cases-title" title=${t("file.cases")}><${CasesSection} file=${file} /><//>
    <${Section} id="file-tickets-title" title=${t("file.tickets")}>
      ${file.tickets.length ? html`<ul class="file-list">${file.tickets.map((ticket) => html`<li>
        ${n(ticket.title)} <span class="badge">${n(ticket.status?.name ?? "")}</span></li>`)}</ul>`
        : html`<p class="muted">${t("file.noTickets")}</p>`}
    <//>
    <${Section} id="file-notices-title" title=${t("file.notices")}>
      ${file.notices.length ? html`<ul class="file-list">${file.notices.map((notice) => html`<li>
        ${n(notice.movementDescription)} <span class="badge">${t(`noticeStatus.${notice.status}`)}</span></li>`)}</ul>`
        : html`<p class="muted">${t("file.noNotices")}</p>`}
    <//>
    <${Section} id="file-consent-title" title=${t("file.consent")}>
      <${ConsentSection} file=${file} me=${me} reload=${reload} onErased=${onBack} />
    <//>
    <${Section} id="file-history-title" title=${t("file.history")}>
      <ul class="file-list">${file.conversations.map((c) => html`<li>
        ${onOpenConversation && c.id !== conversation?.id
          ? html`<button type="button" class="link" onClick=${() => onOpenConversation(c.id)}>
              ${t("file.conversationOf", { time: formatTime(c.lastMessageAt ?? c.createdAt) })}</button>`
          : html`<span>${t("file.conversationOf", { time: formatTime(c.lastMessageAt ?? c.createdAt) })}</span>`}
        <span class="muted"> ${t(`conversation.${c.status}`)}</span>
        ${c.id === conversation?.id ? html`<span class="badge info">${t("file.thisOne")}</span>` : null}
      </li>`)}</ul>
    <//>
  </article>`;
}
