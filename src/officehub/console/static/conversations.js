// The inbox in three panes: the conversations (unread first, SLA and 24-hour window badges,
// filters, search), the open conversation as a chat (inbox-chat.js) and the client's file
// (client-file.js). On a narrow screen one pane at a time, with a way back. Live: the
// stream (live.js) keeps the list and the open chat up to date. Keyboard: j/k next and
// previous conversation, r reply, n note, e close or reopen.

import { api, eachLimited, listAll } from "./api.js";
import { html, render } from "./html.js";
import { t } from "./i18n.js";
import { announce, attempt, attemptInBackground, errorSentence, formatTime, neutralised } from "./ui.js";
import { Chip, ClientFile, Identity } from "./client-file.js";
import { FILE_ICON, Timeline, messageText } from "./inbox-chat.js";

import * as alerts from "./alerts.js";
import * as live from "./live.js";

const PAGE_SIZE = 20;
const MESSAGE_PAGE = 50;
const FAST_SHOWN = 8;
const SLA_AT_RISK_MINUTES = 30;
const WINDOW_MS = 24 * 3600_000;
const SEARCH_PAUSE_MS = 300;

const n = (text) => (text == null ? "" : neutralised(String(text)));
const enc = encodeURIComponent;

function fresh() {
  return {
    root: null, me: null, shown: false, users: new Map(), departments: new Map(),
    integrations: new Map(), inboxes: [], legalAreas: [], allTags: [], people: new Map(),
    items: [], page: 1, totalPages: 1, total: 0, loads: 0, liveSince: new Map(),
    filters: { inboxId: "", tab: "all", status: "OPEN", archived: false, assignee: "", tagId: "", legalAreaId: "", search: "" },
    selectedId: null, selected: null, tags: [], messages: [], notes: [],
    messagePage: 1, messagePages: 1, replyTo: null, mode: "reply", draft: { reply: "", note: "" },
    attachment: null, attachError: "",
    fastMessages: new Map(), fastLoaded: new Set(), fast: null, templates: null, template: "", variables: [],
    pane: "list", fileVersion: 0, unsubscribe: null, ready: false, readHere: new Set(),
  };
}

let S = fresh();
let keysBound = false;

function paint() {
  if (!S.root) return;
  render(html`<${Inbox} />`, S.root);
  fit();
}

const NARROW = "(max-width: 64rem)";

/** Shows one pane (a narrow screen shows one at a time, scrolled to fill the screen). */
function setPane(pane) {
  S.pane = pane;
  paint();
  if (window.matchMedia(NARROW).matches) S.root.scrollIntoView({ block: "start" });
}

/** The panes fill the screen below the page's header (whose height depends on the width):
 * where the inbox starts is given to the CSS (a custom property, set through the CSSOM). */
function fit() {
  const top = S.root.getBoundingClientRect().top + window.scrollY;
  if (top > 0) S.root.style.setProperty("--inbox-top", `${Math.round(top)}px`);
}

export function reset() {
  S.unsubscribe?.();
  if (S.root) render(null, S.root);
  const root = S.root;
  S = fresh();
  S.root = root;
}

/** Who is signed in (null for an API key): "Mine" and the alerts are theirs. The live
 * stream updates the list either way (a key's console reads it with fetch: live.js). */
export function signedIn(me) {
  S.me = me?.user ? me : null;
  S.unsubscribe?.();
  S.unsubscribe = live.subscribe(onLiveEvent);
}

export async function show(view) {
  S.view = view;
  S.root = view.querySelector("#inbox-root");
  bindKeys();
  paint();
  const ready = await attempt(t("conversations.inboxes"), async () => {
    const [inboxes, users, departments, integrations, legalAreas, tags] = await Promise.all([
      listAll("/inbox"), listAll("/user"), listAll("/department"), listAll("/integration"),
      listAll("/legal-areas").catch(() => []), listAll("/tag").catch(() => []),
    ]);
    S.inboxes = inboxes;
    S.users = new Map(users.map((u) => [u.id, u]));
    S.departments = new Map(departments.map((d) => [d.id, d]));
    S.integrations = new Map(integrations.map((i) => [i.id, i]));
    S.legalAreas = legalAreas;
    S.allTags = tags;
    return inboxes.length > 0;
  });
  S.shown = Boolean(ready);
  S.ready = ready !== undefined;
  paint();
  if (ready) await loadList(1);
}

/** "Recarregar": the list again, or, while the office had no inbox, the inboxes first (one
 * made since the page opened is found without leaving it). */
function reload() {
  return S.shown ? loadList(1) : show(S.view);
}

async function person(personId) {
  if (!S.people.has(personId)) {
    S.people.set(personId, api("GET", `/people/${enc(personId)}`));
  }
  try {
    return await S.people.get(personId);
  } catch (error) {
    S.people.delete(personId);
    throw error;
  }
}

const known = (personId) => {
  const entry = S.people.get(personId);
  return entry && !(entry instanceof Promise) ? entry : null;
};

/** The list's filters, all asked of the API (an assignee replaces the mine/unassigned tab). */
function listQuery() {
  const f = S.filters;
  const q = f.search.trim();
  return {
    inboxId: f.inboxId || undefined,
    status: f.status || undefined,
    mine: f.tab === "mine" && !f.assignee ? "true" : undefined,
    unassigned: f.tab === "unassigned" && !f.assignee ? "true" : undefined,
    assigneeId: f.assignee || undefined,
    tagId: f.tagId || undefined,
    legalAreaId: f.legalAreaId || undefined,
    q: q || undefined,
    isArchived: f.archived ? "true" : "false",
  };
}

/** Whether a conversation the stream brought matches the search as far as the console can
 * tell (the API matched those listed; a new one by its contact or its last message). */
function searched(conversation, listed) {
  const wanted = folded(S.filters.search.trim());
  if (!wanted || listed) return true;
  const contact = known(conversation.personId);
  const digits = wanted.replace(/\D/g, "");
  return [contact?.name, contact?.username, conversation.lastMessage?.content]
    .some((text) => text && folded(text).includes(wanted))
    || Boolean(digits.length >= 3 && contact?.phone?.replace(/\D/g, "").includes(digits));
}

/** Whether a conversation belongs in the list as the API filters it now. */
function fits(conversation, listed = false) {
  const f = S.filters;
  if (f.inboxId && conversation.inboxId !== f.inboxId) return false;
  if (f.status && conversation.status !== f.status) return false;
  if (f.assignee) {
    if (conversation.assignedUserId !== f.assignee) return false;
  } else if (f.tab === "mine" && conversation.assignedUserId !== S.me?.id) {
    return false;
  } else if (f.tab === "unassigned" && conversation.assignedUserId) {
    return false;
  }
  if (f.tagId && !(conversation.tags ?? []).some((tag) => tag.id === f.tagId)) return false;
  if (f.legalAreaId && conversation.legalAreaId !== f.legalAreaId) return false;
  if (!searched(conversation, listed)) return false;
  return conversation.isArchived === f.archived;
}

// Unread first, then pinned, then the latest message first.
function byListOrder(a, b) {
  // One read here keeps its place until the list is loaded again (no jump while reading).
  const unread = (c) => ((c.unreadCount ?? 0) > 0 || S.readHere.has(c.id) ? 1 : 0);
  if (unread(a) !== unread(b)) return unread(b) - unread(a);
  if (a.isFixed !== b.isFixed) return a.isFixed ? -1 : 1;
  const at = (c) => c.lastMessageAt ?? c.createdAt ?? "";
  return at(b).localeCompare(at(a));
}

/** `background`: asked by the live stream (a reset), not by the person: clears no error. */
async function loadList(page, background = false) {
  // What the stream brings while this page loads is newer than the page: kept over it.
  const ticket = ++S.loads;
  S.liveSince = new Map();
  const run = background ? attemptInBackground : attempt;
  const answer = await run(t("conversations.title"), () => api("GET", "/conversation", {
    query: { ...listQuery(), page, limit: PAGE_SIZE },
  }));
  if (!answer || ticket !== S.loads) return;
  S.page = page;
  S.totalPages = answer.totalPages;
  S.total = answer.totalResults;
  if (page === 1) {
    S.items = [];
    S.readHere = new Set();
  }
  const arrived = S.liveSince;
  const have = new Set(S.items.map((c) => c.id));
  S.items.push(...answer.data.filter((c) => !have.has(c.id) && !arrived.has(c.id)));
  S.items = S.items.filter((c) => !arrived.has(c.id));
  S.items.push(...[...arrived.values()].filter(fits));
  S.items.sort(byListOrder);
  paint();
  announce(t("conversations.count", { count: answer.totalResults }));
  await fillNames(S.items);
}

/** The names of the conversations' contacts not known yet; also for a conversation the live
 * stream brought, so it clears no error (a client writing must not hide the person's). */
function fillNames(conversations) {
  const missing = conversations.filter((c) => !known(c.personId));
  return attemptInBackground(t("conversations.contacts"), () => eachLimited(missing, 6, async (c) => {
    S.people.set(c.personId, await person(c.personId));
    paint();
  }));
}

/** The search (the contact's name, phone or username, a message's text) is the API's
 * `q`: asked once the typing pauses. */
let searchTimer = null;
function searchChanged(text) {
  const before = S.filters.search.trim();
  S.filters.search = text;
  paint();
  clearTimeout(searchTimer);
  if (text.trim() === before) return;
  searchTimer = setTimeout(() => loadList(1), SEARCH_PAUSE_MS);
}

function upsert(conversation) {
  S.liveSince.set(conversation.id, conversation);
  const listed = S.items.some((c) => c.id === conversation.id);
  S.items = S.items.filter((c) => c.id !== conversation.id);
  if (fits(conversation, listed)) {
    S.items.push(conversation);
    S.items.sort(byListOrder);
  }
  paint();
  if (!known(conversation.personId)) fillNames([conversation]);
}

const integrationOf = (c) => S.integrations.get(c.integrationId);

/** The channels are read when the page opens; a conversation of a channel created since
 * (a web chat set up while the inbox is open) has them read again, once per unknown id,
 * before it is called a removed channel. */
const channelsAsked = new Set();
let channelsLoading = null;
let channelsAgain = false;

function channelOf(conversation) {
  const type = integrationOf(conversation)?.type;
  if (!type && conversation.integrationId && !channelsAsked.has(conversation.integrationId)) {
    channelsAsked.add(conversation.integrationId);
    readChannelsAgain();
  }
  return type ? t(`channel.${type}`) : t("channel.unknown");
}

function readChannelsAgain() {
  if (channelsLoading) {
    channelsAgain = true; // asked while a read is under way: read once more after it
    return;
  }
  channelsLoading = attemptInBackground(t("conversations.inboxes"), async () => {
    const integrations = await listAll("/integration");
    S.integrations = new Map(integrations.map((i) => [i.id, i]));
  }).finally(() => {
    channelsLoading = null;
    if (channelsAgain) {
      channelsAgain = false;
      readChannelsAgain();
    }
    paint();
  });
}

/** The SLA mark of a list item: breached (it missed a due time), at risk (a due time
 * still to meet falls within SLA_AT_RISK_MINUTES), else none. */
function SlaMark({ c }) {
  const sla = c.sla;
  if (!sla) return null;
  if (sla.breachedAt) {
    return html`<span class="badge danger sla" data-sla="breached"
      title=${t("conversations.slaBreachedAt", { time: formatTime(sla.breachedAt) })}>${t("conversations.slaBreached")}</span>`;
  }
  if (c.status !== "OPEN") return null;
  const dues = [c.firstResponseAt ? null : sla.firstResponseDueAt, sla.nextResponseDueAt, sla.resolutionDueAt]
    .filter(Boolean).map((iso) => new Date(iso).getTime());
  if (!dues.length) return null;
  const due = Math.min(...dues);
  if (due - Date.now() > SLA_AT_RISK_MINUTES * 60_000) return null;
  return html`<span class="badge warn sla" data-sla="at-risk"
    title=${t("conversations.slaDueAt", { time: formatTime(new Date(due).toISOString()) })}>${t("conversations.slaAtRisk")}</span>`;
}

/** WhatsApp's 24-hour window, from the client's oldest unanswered message: open at least
 * until 24 hours after it (a later message of theirs keeps it open longer). */
function WindowMark({ c }) {
  if (integrationOf(c)?.type !== "WHATSAPP_OFFICIAL" || !c.awaitingSince) return null;
  const until = new Date(c.awaitingSince).getTime() + WINDOW_MS;
  if (until <= Date.now()) return null;
  return html`<span class="badge info window" data-window="open"
    title=${t("inbox.windowTitle")}>${t("inbox.windowUntil", { time: formatTime(new Date(until).toISOString()).slice(11) })}</span>`;
}

function ListItem({ c }) {
  const contact = known(c.personId);
  const last = c.lastMessage;
  const assignee = c.assignedUserId
    ? (S.users.get(c.assignedUserId)?.name ?? c.responsables?.[0]?.name) : null;
  return html`<li><button type="button" class="conversation-item" data-conversation-id=${c.id}
      data-unread=${String(c.unreadCount ?? 0)} data-fixed=${String(c.isFixed)}
      data-channel=${integrationOf(c)?.type ?? ""}
      aria-current=${c.id === S.selectedId ? "true" : null} onClick=${() => openConversation(c.id)}>
    <span class="line first">
      <span class="name" data-person-id=${c.personId}>${contact ? n(contact.name) : "…"}</span>
      <span class="when">${c.lastMessageAt ? formatTime(c.lastMessageAt) : ""}</span>
    </span>
    <span class="line second">
      <span class="preview">${last ? n(last.content ?? t(`type.${last.type}`)) : "—"}</span>
      ${c.unreadCount ? html`<span class="badge danger unread"
        title=${t("conversations.unread", { count: c.unreadCount })}>${String(c.unreadCount)}</span>` : null}
    </span>
    <span class="line meta">
      <span class="badge muted channel">${channelOf(c)}</span>
      ${c.isFixed ? html`<span class="badge info pinned">${t("conversations.pinned")}</span>` : null}
      <${SlaMark} c=${c} /><${WindowMark} c=${c} />
      <span class="state">${t(`conversation.${c.status}`)}${assignee ? n(t("conversations.assignee", { name: assignee })) : ""}</span>
    </span>
  </button></li>`;
}

function setFilter(name, value) {
  S.filters[name] = value;
  paint();
  loadList(1);
}

/** How many of the filters under "Filtros" narrow the list (said on its summary). */
function narrowing() {
  const f = S.filters;
  return [f.inboxId, f.status !== "OPEN", f.assignee, f.tagId, f.legalAreaId, f.archived]
    .filter(Boolean).length;
}

function Filters() {
  const f = S.filters;
  const inboxTags = S.allTags.filter((tag) => !f.inboxId || tag.inboxId === f.inboxId);
  return html`<div class="inbox-filters">
    <label class="visually-hidden" for="inbox-search">${t("inbox.search")}</label>
    <input id="inbox-search" type="search" placeholder=${t("inbox.searchPlaceholder")} value=${f.search}
      onInput=${(e) => searchChanged(e.currentTarget.value)} />
    <div id="conversation-tabs" class="tabs" role="group" aria-label=${t("conversations.tabs")}>
      ${S.me ? html`<button type="button" id="tab-mine" aria-pressed=${String(f.tab === "mine")}
        onClick=${() => setFilter("tab", "mine")}>${t("conversations.mine")}</button>` : null}
      <button type="button" aria-pressed=${String(f.tab === "unassigned")}
        onClick=${() => setFilter("tab", "unassigned")}>${t("conversations.unassigned")}</button>
      <button type="button" aria-pressed=${String(f.tab === "all")}
        onClick=${() => setFilter("tab", "all")}>${t("conversations.all")}</button>
    </div>
    <details class="more-filters">
      <summary>${t("inbox.filters")}${narrowing()
        ? html` <span class="badge info" id="filters-on">${t("inbox.filtersOn", { count: narrowing() })}</span>` : null}</summary>
      <div class="filter-grid">
        <label for="conversations-inbox">${t("conversations.inbox")}</label>
        <select id="conversations-inbox" value=${f.inboxId} onChange=${(e) => setFilter("inboxId", e.currentTarget.value)}>
          <option value="">${t("conversations.allInboxes")}</option>
          ${S.inboxes.map((i) => html`<option value=${i.id}>${n(i.name)}</option>`)}
        </select>
        <label for="conversations-status">${t("conversations.status")}</label>
        <select id="conversations-status" value=${f.status} onChange=${(e) => setFilter("status", e.currentTarget.value)}>
          <option value="OPEN">${t("conversations.statusOpen")}</option>
          <option value="CLOSED">${t("conversations.statusClosed")}</option>
          <option value="">${t("conversations.statusAll")}</option>
        </select>
        <label for="inbox-assignee">${t("inbox.assignee")}</label>
        <select id="inbox-assignee" value=${f.assignee} onChange=${(e) => setFilter("assignee", e.currentTarget.value)}>
          <option value="">${t("inbox.anyone")}</option>
          ${[...S.users.values()].map((u) => html`<option value=${u.id}>${n(u.name)}</option>`)}
        </select>
        <label for="inbox-tag">${t("inbox.tag")}</label>
        <select id="inbox-tag" value=${f.tagId} onChange=${(e) => setFilter("tagId", e.currentTarget.value)}>
          <option value="">${t("inbox.anyTag")}</option>
          ${inboxTags.map((tag) => html`<option value=${tag.id}>${n(tag.name)}</option>`)}
        </select>
        <label for="inbox-area">${t("inbox.legalArea")}</label>
        <select id="inbox-area" value=${f.legalAreaId} onChange=${(e) => setFilter("legalAreaId", e.currentTarget.value)}>
          <option value="">${t("inbox.anyArea")}</option>
          ${S.legalAreas.map((a) => html`<option value=${a.id}>${n(a.name)}</option>`)}
        </select>
        <label class="check"><input type="checkbox" id="conversations-archived" checked=${f.archived}
          onChange=${(e) => setFilter("archived", e.currentTarget.checked)} />
          <span>${t("conversations.archived")}</span></label>
      </div>
    </details>
    <button type="button" id="conversations-reload" class="secondary" onClick=${reload}>${t("common.reload")}</button>
  </div>`;
}

function ListPane() {
  const shown = S.items;
  let body;
  if (S.ready && !S.shown) body = html`<li class="empty">${t("conversations.noInbox")}</li>`;
  else if (!shown.length) body = html`<li class="empty">${t("conversations.none")}</li>`;
  else body = shown.map((c) => html`<${ListItem} key=${c.id} c=${c} />`);
  return html`<nav class="pane inbox-list" aria-label=${t("conversations.listLabel")}>
    <${Filters} />
    <ul id="conversation-list" class="conversation-list">${body}</ul>
    ${S.page < S.totalPages ? html`<button type="button" id="conversations-more" class="secondary"
      onClick=${() => loadList(S.page + 1)}>${t("common.loadMore")}</button>` : null}
  </nav>`;
}

// The open conversation.

async function openConversation(conversationId, { focus = true } = {}) {
  const loaded = await attempt(t("conversations.conversation"), async () => {
    const conversation = await api("GET", `/conversation/${enc(conversationId)}`);
    const [contact, tags] = await Promise.all([
      person(conversation.personId), listAll("/tag", { inboxId: conversation.inboxId }),
    ]);
    return { conversation, contact, tags };
  });
  if (!loaded) return;
  S.people.set(loaded.conversation.personId, loaded.contact);
  Object.assign(S, {
    selectedId: conversationId, selected: loaded.conversation, tags: loaded.tags, replyTo: null,
    messages: [], notes: [], fast: null, templates: null, template: "", variables: [],
    pane: "chat", mode: "reply", draft: { reply: "", note: "" }, attachment: null, attachError: "",
  });
  setPane("chat");
  // the inbox's fast messages are asked for now, so a `/` typed at once finds them
  fastMessagesOf(loaded.conversation.inboxId).catch(() => null);
  await Promise.all([loadMessages(1), loadNotes()]);
  // someone already writing keeps their place
  if (focus && !writingNow()) document.getElementById("conversation-title")?.focus();
}

const conversationPath = () => `/conversation/${enc(S.selected.id)}`;

async function loadMessages(page, background = false) {
  const run = background ? attemptInBackground : attempt;
  const answer = await run(t("conversation.messages"), () => api("GET", `${conversationPath()}/messages`, {
    query: { page, limit: MESSAGE_PAGE },
  }));
  if (!answer) return;
  S.messagePage = page;
  S.messagePages = answer.totalPages;
  const older = answer.data.slice().reverse();
  S.messages = page === 1 ? older : [...older, ...S.messages];
  paint();
  if (page === 1 && answer.data.some((m) => m.direction === "INBOUND")) markRead(S.selected.id);
}

async function loadNotes(background = false) {
  const run = background ? attemptInBackground : attempt;
  const notes = await run(t("conversation.notes"), () => api("GET", "/conversation/notes", {
    query: { conversationId: S.selected.id, limit: 50 },
  }));
  if (!notes) return;
  S.notes = notes.data;
  paint();
}

async function markRead(conversationId) {
  // The operator has read the conversation: the client sees the blue ticks. A failure
  // here must not hide the messages, so it is only logged.
  try {
    await api("POST", `/conversation/${enc(conversationId)}/read`);
  } catch (error) {
    console.warn("POST /read", error);
    return;
  }
  const item = S.items.find((c) => c.id === conversationId);
  if (item && item.unreadCount) {
    S.readHere.add(item.id);
    item.unreadCount = 0;
    paint();
  }
}

/** Shows a message of the open conversation: replaced where it is, or added at the end. */
function showMessage(message) {
  const at = S.messages.findIndex((m) => m.id === message.id);
  if (at >= 0) S.messages[at] = message;
  else S.messages = [...S.messages, message];
  paint();
}

async function changed(context, call) {
  const answer = await attempt(context, call);
  if (!answer) return;
  showChanged(answer);
  announce(t("common.done", { action: context }));
}

function showChanged(conversation) {
  if (S.selected?.id === conversation.id) {
    S.selected = conversation;
    S.fileVersion += 1;
  }
  upsert(conversation);
}

const patch = (context, body) => changed(context, () => api("PATCH", conversationPath(), { body }));

function toggleStatus() {
  const status = S.selected.status === "OPEN" ? "CLOSED" : "OPEN";
  patch(status === "OPEN" ? t("conversation.reopen") : t("conversation.close"), { status });
}

const valueOf = (id) => document.getElementById(id)?.value;

function stateLine(c) {
  const assignee = c.assignedUserId
    ? (S.users.get(c.assignedUserId)?.name ?? c.assignedUserId) : t("conversation.nobody");
  const department = c.departmentId
    ? t("conversation.inDepartment", { name: S.departments.get(c.departmentId)?.name ?? c.departmentId }) : "";
  return n(t("conversation.stateLine", { priority: t(`priority.${c.priority}`), assignee, department }));
}

function ChatHead({ c, contact }) {
  return html`<header class="conversation-head">
    <div class="head-line">
      <button type="button" class="secondary narrow-only" onClick=${() => setPane("list")}>
        ${t("inbox.backToList")}</button>
      <div class="head-who">
        <h2 id="conversation-title" tabindex="-1">${n(contact.name)}</h2>
        <${Identity} contact=${contact} />
        <p class="muted" id="conversation-channel">${t("conversation.channel", { channel: channelOf(c) })}</p>
      </div>
      <button type="button" class="secondary narrow-only" onClick=${() => setPane("file")}>
        ${t("inbox.openFile")}</button>
    </div>
    <p id="conversation-state" class="conversation-state">
      <span class=${`badge ${c.status === "OPEN" ? "ok" : "muted"}`}>${t(`conversation.${c.status}`)}</span>
      ${c.isFixed ? html` <span class="badge info">${t("conversations.pinned")}</span>` : null}
      ${c.isArchived ? html` <span class="badge muted">${t("conversations.archivedOne")}</span>` : null}
      ${" "}${stateLine(c)}</p>
    <div class="row head-actions">
      <label for="assign-user" class="visually-hidden">${t("conversation.assignTo")}</label>
      <select id="assign-user">
        <option value="">${t("inbox.assignTo")}</option>
        ${[...S.users.values()].map((u) => html`<option value=${u.id}>${n(u.name)}</option>`)}
      </select>
      <button type="button" onClick=${() => valueOf("assign-user")
        && patch(t("conversation.assign"), { assignedUserId: valueOf("assign-user") })}>${t("conversation.assign")}</button>
      <button type="button" class="secondary" id="toggle-status" onClick=${toggleStatus}>
        ${c.status === "OPEN" ? t("conversation.close") : t("conversation.reopen")}</button>
      <button type="button" class="secondary icon" aria-label=${t("common.refresh")} title=${t("common.refresh")}
        onClick=${() => { loadMessages(1); loadNotes(); }}><span aria-hidden="true">⟳</span></button>
      <details class="more-actions">
        <summary>${t("inbox.moreActions")}</summary>
        <div class="more-box">
          ${S.departments.size ? html`<div class="row">
            <label for="assign-department">${t("conversation.department")}</label>
            <select id="assign-department">
              <option value="">${t("conversation.chooseDepartment")}</option>
              ${[...S.departments.values()].map((d) => html`<option value=${d.id}>${n(d.name)}</option>`)}
            </select>
            <button type="button" class="secondary" onClick=${() => valueOf("assign-department")
              && patch(t("conversation.department"), { departmentId: valueOf("assign-department") })}>
              ${t("conversation.sendToDepartment")}</button></div>` : null}
          <div class="row">
            <label for="conversation-priority">${t("conversation.priority")}</label>
            <select id="conversation-priority" value=${c.priority}>
              ${["LOW", "MEDIUM", "HIGH"].map((p) => html`<option value=${p}>${t(`priority.${p}`)}</option>`)}
            </select>
            <button type="button" class="secondary" onClick=${() =>
              patch(t("conversation.priority"), { priority: valueOf("conversation-priority") })}>${t("conversation.setPriority")}</button>
          </div>
          <div class="row">
            <button type="button" class="secondary" onClick=${() => changed(t("conversation.endHuman"),
              () => api("POST", "/conversation/end-human-support", { body: { conversationId: c.id } }))}>
              ${t("conversation.endHuman")}</button>
            <button type="button" class="secondary" id="toggle-fixed" onClick=${() =>
              patch(c.isFixed ? t("conversation.unpin") : t("conversation.pin"), { isFixed: !c.isFixed })}>
              ${c.isFixed ? t("conversation.unpin") : t("conversation.pin")}</button>
            <button type="button" class="secondary" id="toggle-archived" onClick=${() =>
              patch(c.isArchived ? t("conversation.unarchive") : t("conversation.archive"), { isArchived: !c.isArchived })}>
              ${c.isArchived ? t("conversation.unarchive") : t("conversation.archive")}</button>
          </div>
        </div>
      </details>
    </div>
  </header>`;
}

// The composer: a reply (with `/` fast messages and a quote) or a private note.

function folded(text) {
  return text.normalize("NFD").replace(/[\u0300-\u036f]/g, "").toLowerCase();
}

async function fastMessagesOf(inboxId) {
  if (!S.fastMessages.has(inboxId)) {
    S.fastMessages.set(inboxId, listAll("/fast-message", { inboxId }).catch((error) => {
      S.fastMessages.delete(inboxId);
      throw error;
    }));
  }
  return S.fastMessages.get(inboxId);
}

/** The fast messages the reply's `/word` asks for, from those of the open conversation's
 * inbox once they have arrived; while they are on their way the list says so and is made
 * again when they come (a `/` typed as the chat opens is not left with "none"). */
async function listFast() {
  const typed = /^\/(\S*)$/.exec(S.draft.reply);
  if (!typed || !S.selected || S.mode !== "reply") {
    if (S.fast) {
      S.fast = null;
      paint();
    }
    return;
  }
  const selected = S.selected;
  const pending = fastMessagesOf(selected.inboxId);
  if (!S.fastLoaded.has(selected.inboxId)) {
    S.fast = { shown: [], active: -1, loading: true };
    paint();
  }
  const all = await attempt(t("composer.fastMessages"), () => pending);
  if (S.selected?.id !== selected.id) return;
  if (!all) {
    S.fast = null;
    paint();
    return;
  }
  S.fastLoaded.add(selected.inboxId);
  // what is typed now (more letters may have come while the list was on its way)
  const now = /^\/(\S*)$/.exec(S.draft.reply);
  if (!now || S.mode !== "reply") {
    S.fast = null;
    paint();
    return;
  }
  const wanted = folded(now[1]);
  const shown = all.filter((m) => m.text && (folded(m.title).includes(wanted) || folded(m.text).includes(wanted)))
    .slice(0, FAST_SHOWN);
  S.fast = { shown, active: shown.length ? 0 : -1 };
  paint();
}

function replyInput(event) {
  S.draft.reply = event.currentTarget.value;
  paint();
  return listFast();
}

function insertFast(message) {
  S.draft.reply = message.text;
  S.fast = null;
  paint();
  document.getElementById("reply-text")?.focus();
  announce(t("composer.inserted", { title: message.title }));
}

function replyKeys(event) {
  if (!S.fast) return;
  if (event.key === "Escape") {
    event.preventDefault();
    S.fast = null;
    paint();
  } else if (event.key === "ArrowDown" || event.key === "ArrowUp") {
    if (!S.fast.shown.length) return;
    event.preventDefault();
    const step = event.key === "ArrowDown" ? 1 : -1;
    S.fast.active = (S.fast.active + step + S.fast.shown.length) % S.fast.shown.length;
    paint();
  } else if (event.key === "Enter" && S.fast.active >= 0) {
    event.preventDefault();
    insertFast(S.fast.shown[S.fast.active]);
  }
}

function quote(message) {
  S.replyTo = message;
  S.mode = "reply";
  paint();
  document.getElementById("reply-text")?.focus();
}

async function react(message, emoji) {
  const answer = await attempt(t("inbox.react"), () => api("POST",
    `${conversationPath()}/messages/${enc(message.id)}/reaction`, { body: { emoji } }));
  if (answer) showMessage(answer);
}

async function sendReply(event) {
  event.preventDefault();
  const text = S.draft.reply.trim();
  if (!text) return;
  const body = { text };
  if (S.replyTo) body.replyToMessageId = S.replyTo.id;
  const message = await attempt(t("conversation.reply"), () => api("POST", `${conversationPath()}/messages`, { body }));
  if (!message) return;
  S.draft.reply = "";
  S.replyTo = null;
  showMessage(message);
  announce(t("conversation.replied", { status: t(`message.${message.status}`) }));
}

// Attachments: a file chosen is uploaded at once to the conversation (`POST …/media`, its
// type read from the bytes), shown with its name (an image previewed) and a caption field,
// then sent as a message `{mediaPath, caption, fileName}`.

const ATTACH_ACCEPT = "image/jpeg,image/png,video/mp4,video/3gpp,audio/aac,audio/amr,audio/mpeg,"
  + "audio/mp4,audio/ogg,application/pdf,application/msword,application/vnd.ms-excel,"
  + "application/vnd.ms-powerpoint,application/vnd.openxmlformats-officedocument.wordprocessingml.document,"
  + "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet,"
  + "application/vnd.openxmlformats-officedocument.presentationml.presentation,text/plain,"
  + ".jpg,.jpeg,.png,.mp4,.3gp,.aac,.amr,.mp3,.m4a,.ogg,.pdf,.doc,.docx,.xls,.xlsx,.ppt,.pptx,.txt";
const ATTACH_MAX_BYTES = 100 * 1024 * 1024;
// Drawn, not emoji: a machine without an emoji font shows them as empty boxes.
const CLIP_ICON = html`<svg class="icon" viewBox="0 0 24 24" width="20" height="20" aria-hidden="true"
  focusable="false"><path fill="none" stroke="currentColor" stroke-width="2" stroke-linecap="round"
  d="M21 11.5 12.6 19.9a5.5 5.5 0 0 1-7.8-7.8l8.5-8.5a3.7 3.7 0 0 1 5.2 5.2l-8.5 8.5a1.8 1.8 0 0 1-2.6-2.6l7.8-7.8"/></svg>`;

function attachErrorOf(error) {
  if (error?.status === 413) return t("composer.attachTooLarge");
  if (error?.status === 415) return t("composer.attachWrongType");
  return t("composer.attachFailed", { reason: errorSentence(error) });
}

async function chooseFile(event) {
  const input = event.currentTarget;
  const file = input.files?.[0];
  input.value = "";
  if (!file) return;
  const conversation = S.selected;
  S.attachError = "";
  if (file.size > ATTACH_MAX_BYTES) {
    S.attachment = null;
    S.attachError = t("composer.attachTooLarge");
    paint();
    return;
  }
  S.attachment = { uploading: true, fileName: file.name, caption: "" };
  paint();
  const form = new FormData();
  form.append("file", file, file.name);
  let stored = null;
  try {
    stored = await api("POST", `${conversationPath()}/media`, { body: form });
  } catch (error) {
    // The same conversation (the stream may have brought a newer copy of it meanwhile).
    if (S.selected?.id !== conversation?.id) return;
    S.attachment = null;
    S.attachError = attachErrorOf(error);
    paint();
    document.getElementById("attach-button")?.focus();
    return;
  }
  if (S.selected?.id !== conversation?.id) return;
  S.attachment = { ...stored, uploading: false, caption: "" };
  paint();
  document.getElementById(stored.mediaKind === "audio" ? "attach-send" : "attach-caption")?.focus();
  announce(t("composer.attachReady", { name: stored.fileName }));
}

function removeAttachment() {
  S.attachment = null;
  S.attachError = "";
  paint();
  document.getElementById("attach-button")?.focus();
}

async function sendAttachment(event) {
  event.preventDefault();
  const chosen = S.attachment;
  if (!chosen || chosen.uploading) return;
  const body = { mediaPath: chosen.storagePath, fileName: chosen.fileName };
  const caption = chosen.caption.trim();
  if (caption && chosen.mediaKind !== "audio") body.caption = caption;
  if (S.replyTo) body.replyToMessageId = S.replyTo.id;
  const message = await attempt(t("composer.attachSend"), () => api("POST", `${conversationPath()}/messages`, { body }));
  if (!message) return;
  S.attachment = null;
  S.replyTo = null;
  showMessage(message);
  announce(t("composer.attachSent", { status: t(`message.${message.status}`) }));
  document.getElementById("attach-button")?.focus();
}

function AttachmentPanel() {
  const chosen = S.attachment;
  if (!chosen) return null;
  if (chosen.uploading) {
    return html`<div id="attachment" class="attachment" aria-busy="true">
      <p class="muted" role="status">${n(t("composer.attachUploading", { name: chosen.fileName }))}</p></div>`;
  }
  return html`<div id="attachment" class="attachment" data-kind=${chosen.mediaKind}>
    ${chosen.mediaKind === "image"
      ? html`<img class="attachment-preview" src=${chosen.url} alt=${n(t("composer.attachPreview", { name: chosen.fileName }))} />`
      : html`<span class="attachment-icon">${FILE_ICON}</span>`}
    <div class="attachment-fields">
      <p class="attachment-name"><strong>${n(chosen.fileName)}</strong>
        <span class="muted"> · ${t(`composer.attachKind.${chosen.mediaKind}`)}</span></p>
      ${chosen.mediaKind === "audio" ? null : html`<label for="attach-caption">${t("composer.attachCaption")}</label>
        <input id="attach-caption" maxlength="1024" value=${chosen.caption}
          onInput=${(e) => { chosen.caption = e.currentTarget.value; }} />`}
    </div>
    <div class="attachment-actions">
      <button type="button" class="secondary" id="attach-remove" onClick=${removeAttachment}>${t("composer.attachRemove")}</button>
      <button type="submit" id="attach-send">${t("composer.attachSend")}</button>
    </div>
  </div>`;
}

async function addNote(event) {
  event.preventDefault();
  const text = S.draft.note.trim();
  if (!text) return;
  // A signed-in person's note names them (the API takes the author from the body).
  const body = { conversationId: S.selected.id, text };
  if (S.me) body.userId = S.me.id;
  const note = await attempt(t("conversation.note"), () => api("POST", "/conversation/note", { body }));
  if (!note) return;
  S.draft.note = "";
  S.notes = [note, ...S.notes];
  paint();
  announce(t("conversation.noteAdded"));
}

function setMode(mode) {
  S.mode = mode;
  S.fast = null;
  paint();
  document.getElementById(mode === "reply" ? "reply-text" : "note-text")?.focus();
}

/** Whether WhatsApp's 24-hour window is closed: an official channel with no message of the
 * client in the last 24 hours (the API refuses free text then: 409 OUTSIDE_SERVICE_WINDOW). */
function windowClosed() {
  if (integrationOf(S.selected)?.type !== "WHATSAPP_OFFICIAL") return false;
  const inbound = S.messages.filter((m) => m.direction === "INBOUND").map((m) => new Date(m.createdAt).getTime());
  return !inbound.length || Date.now() - Math.max(...inbound) > WINDOW_MS;
}

async function loadTemplates() {
  const deviceId = integrationOf(S.selected)?.deviceId;
  if (!deviceId) {
    S.templates = [];
    paint();
    return;
  }
  const answer = await attempt(t("inbox.templates"), () =>
    api("GET", "/integration/partner/whatsapp-templates", { query: { deviceId } }));
  S.templates = answer?.data ?? [];
  paint();
}

function placeholders(template) {
  const body = (template?.components ?? []).find((c) => String(c.type).toUpperCase() === "BODY");
  return new Set(String(body?.text ?? "").match(/\{\{\s*\w+\s*\}\}/g) ?? []).size;
}

async function sendTemplate(event) {
  event.preventDefault();
  const template = S.templates?.find((x) => x.id === S.template || x.name === S.template);
  if (!template) return;
  const body = { templateName: template.name, language: template.language };
  const count = placeholders(template);
  if (count) body.variables = Array.from({ length: count }, (_, i) => S.variables[i] ?? "");
  const message = await attempt(t("inbox.sendTemplate"), () => api("POST", `${conversationPath()}/messages`, { body }));
  if (!message) return;
  S.template = "";
  S.variables = [];
  showMessage(message);
  announce(t("conversation.replied", { status: t(`message.${message.status}`) }));
}

function TemplatePicker() {
  if (S.templates === null) loadTemplates();
  const chosen = S.templates?.find((x) => x.id === S.template);
  const count = placeholders(chosen);
  return html`<form class="window-closed" onSubmit=${sendTemplate}>
    <p>${t("inbox.windowClosed")}</p>
    ${S.templates?.length ? html`<div class="row">
      <label for="template-choice">${t("inbox.template")}</label>
      <select id="template-choice" value=${S.template} onChange=${(e) => { S.template = e.currentTarget.value; S.variables = []; paint(); }}>
        <option value="">${t("inbox.chooseTemplate")}</option>
        ${S.templates.map((x) => html`<option value=${x.id}>${n(x.name)} (${n(x.language)})</option>`)}
      </select>
      ${Array.from({ length: count }, (_, i) => html`<label for=${`template-var-${i}`} class="visually-hidden">
        ${t("inbox.variable", { number: i + 1 })}</label>
        <input id=${`template-var-${i}`} placeholder=${t("inbox.variable", { number: i + 1 })}
          value=${S.variables[i] ?? ""} onInput=${(e) => { S.variables[i] = e.currentTarget.value; }} />`)}
      <button type="submit" class="secondary" disabled=${!chosen}>${t("inbox.sendTemplate")}</button>
    </div>` : html`<p class="muted">${S.templates ? t("inbox.noTemplates") : t("file.loading")}</p>`}
  </form>`;
}

function Composer() {
  const fast = S.fast;
  const closed = windowClosed();
  const activeId = fast && fast.active >= 0 ? `fast-${fast.shown[fast.active].id}` : null;
  return html`<div class="composer-area">
    ${S.mode === "reply" && closed ? html`<${TemplatePicker} />` : null}
    <div class="modes" role="group" aria-label=${t("inbox.composerMode")}>
      <button type="button" class="mode" aria-pressed=${String(S.mode === "reply")} onClick=${() => setMode("reply")}>
        ${t("inbox.modeReply")}</button>
      <button type="button" class="mode note-mode" aria-pressed=${String(S.mode === "note")} onClick=${() => setMode("note")}>
        ${t("inbox.modeNote")}</button>
    </div>
    ${S.mode === "reply" ? html`<form id="reply-form" class="compose"
        onSubmit=${S.attachment ? sendAttachment : sendReply}>
      ${S.replyTo ? html`<div id="reply-quote" class="quote">
        <p class="muted">${t("composer.replyingTo")}</p>
        <blockquote>${n(messageText(S.replyTo))}</blockquote>
        <button type="button" class="link" onClick=${() => { S.replyTo = null; paint(); }}>${t("composer.cancelQuote")}</button>
      </div>` : null}
      ${S.attachError ? html`<p id="attach-error" class="error-text" role="alert">${n(S.attachError)}</p>` : null}
      <${AttachmentPanel} />
      <input type="file" id="attach-file" hidden accept=${ATTACH_ACCEPT} onChange=${chooseFile} />
      <label for="reply-text" class="visually-hidden">${t("conversation.reply")}</label>
      <div class="composer" hidden=${Boolean(S.attachment)}>
        <button type="button" class="secondary attach-button" id="attach-button"
          aria-label=${t("composer.attach")} title=${closed ? t("composer.attachWindowClosed") : t("composer.attachHint")}
          disabled=${closed} onClick=${() => document.getElementById("attach-file")?.click()}>
          ${CLIP_ICON}</button>
        ${fast ? html`<ul id="fast-list" class="fast-list" role="listbox" aria-label=${t("composer.fastMessages")}>
          ${fast.shown.length ? fast.shown.map((m, index) => html`<li id=${`fast-${m.id}`} role="option"
            class="fast-option" aria-selected=${String(index === fast.active)}
            onMouseDown=${(e) => { e.preventDefault(); insertFast(m); }}>
            <strong>${n(m.title)}</strong> <span class="muted">${n(m.text)}</span></li>`)
            : html`<li class="muted" role="option" aria-disabled="true" aria-selected="false">${fast.loading ? t("composer.fastLoading") : t("composer.noFast")}</li>`}
        </ul>` : null}
        <textarea id="reply-text" rows="2" maxlength="4096" required=${!S.attachment} value=${S.draft.reply}
          placeholder=${t("composer.hint")} aria-describedby="reply-hint"
          role="combobox" aria-autocomplete="list" aria-controls="fast-list" aria-expanded=${String(Boolean(fast))}
          aria-activedescendant=${activeId} onInput=${replyInput} onKeyDown=${replyKeys}></textarea>
        <button type="submit">${t("conversation.sendReply")}</button>
      </div>
      <p class="hint visually-hidden" id="reply-hint">${t("composer.hint")}</p>
    </form>` : html`<form id="note-form" class="compose note-compose" onSubmit=${addNote}>
      <label for="note-text" class="visually-hidden">${t("conversation.addNoteLabel")}</label>
      <div class="composer">
        <textarea id="note-text" rows="2" maxlength="10000" required value=${S.draft.note}
          placeholder=${t("conversation.addNoteLabel")} onInput=${(e) => { S.draft.note = e.currentTarget.value; }}></textarea>
        <button type="submit" class="secondary">${t("conversation.addNote")}</button>
      </div>
    </form>`}
  </div>`;
}

function ChatPane() {
  const c = S.selected;
  const contact = c ? known(c.personId) : null;
  if (!c || !contact) {
    return html`<section class="pane inbox-chat" aria-label=${t("conversations.conversation")}>
      <p class="empty">${t("conversations.choose")}</p></section>`;
  }
  const authorOf = (id) => S.users.get(id)?.name ?? id;
  return html`<article class="pane inbox-chat conversation" aria-labelledby="conversation-title">
    <${ChatHead} c=${c} contact=${contact} />
    <${Timeline} messages=${S.messages} notes=${S.notes} authorOf=${authorOf} onQuote=${quote} onReact=${react}
      hasOlder=${S.messagePage < S.messagePages} onOlder=${() => loadMessages(S.messagePage + 1)}
      empty=${t("conversation.noMessages")} />
    <${Composer} />
  </article>`;
}

function removeTag(tagId) {
  changed(t("conversation.removeTag"), () => api("DELETE", `${conversationPath()}/tags/${enc(tagId)}`));
}

function addTag() {
  const tagId = valueOf("add-tag");
  if (!tagId) return;
  changed(t("conversation.addTag"), () => api("POST", `${conversationPath()}/tags`, { body: { tagId } }));
}

function ConversationTags({ c }) {
  const assigned = new Set(c.tags.map((tag) => tag.id));
  return html`<section class="file-section" aria-labelledby="tags-title">
    <h3 id="tags-title">${t("inbox.thisConversation")}</h3>
    <ul id="conversation-tags" class="tag-list">
      ${c.tags.length ? c.tags.map((tag) => html`<li><${Chip} item=${tag} />
        <button type="button" class="link" aria-label=${n(t("conversation.removeTagNamed", { name: tag.name }))}
          onClick=${() => removeTag(tag.id)}>${t("conversation.remove")}</button></li>`)
        : html`<li class="muted">${t("conversation.noTags")}</li>`}
    </ul>
    <div class="row">
      <label for="add-tag">${t("conversation.addTag")}</label>
      <select id="add-tag">
        ${S.tags.filter((tag) => !assigned.has(tag.id)).map((tag) => html`<option value=${tag.id}>${n(tag.name)}</option>`)}
      </select>
      <button type="button" class="secondary" onClick=${addTag}>${t("conversation.addTag")}</button>
    </div>
  </section>`;
}

function FilePane() {
  const c = S.selected;
  return html`<aside class="pane inbox-file" aria-label=${t("file.title")}>
    ${c ? html`<${ClientFile} personId=${c.personId} conversation=${c} me=${S.me} version=${S.fileVersion}
        onBack=${() => setPane("chat")}
        onOpenConversation=${(id) => openConversation(id)}>
        <${ConversationTags} c=${c} />
      <//>` : html`<p class="empty">${t("inbox.fileEmpty")}</p>`}
  </aside>`;
}

function Shortcuts() {
  const keys = [["J", "inbox.keyNext"], ["K", "inbox.keyPrevious"], ["R", "inbox.keyReply"],
    ["N", "inbox.keyNote"], ["E", "inbox.keyClose"], [t("inbox.keyEsc"), "inbox.keyBack"]];
  return html`<details class="shortcuts">
    <summary>${t("inbox.shortcuts")}</summary>
    <dl>${keys.map(([key, label]) => html`<div><dt><kbd>${key}</kbd></dt><dd>${t(label)}</dd></div>`)}</dl>
  </details>`;
}

function Inbox() {
  return html`<${Shortcuts} />
    <div class="inbox" data-pane=${S.pane}>
      <${ListPane} /><${ChatPane} /><${FilePane} />
    </div>`;
}

// Keyboard: outside a field, j/k move through the list, r and n write, e closes or reopens.

function editable(target) {
  return target instanceof HTMLElement
    && (target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName));
}

/** Whether the person is writing in a field of the inbox (focus there is theirs to move). */
function writingNow() {
  return editable(document.activeElement) && S.root.contains(document.activeElement);
}

function step(by) {
  const shown = S.items;
  if (!shown.length) return;
  const at = shown.findIndex((c) => c.id === S.selectedId);
  const next = shown[Math.min(shown.length - 1, Math.max(0, at < 0 ? 0 : at + by))];
  if (next && next.id !== S.selectedId) {
    openConversation(next.id, { focus: false }).then(() => {
      // a key pressed while it loaded (n, r) already took the person to a field: it stays there
      if (writingNow()) return;
      document.querySelector(`.conversation-item[data-conversation-id="${CSS.escape(next.id)}"]`)?.focus();
    });
  }
}

function onKey(event) {
  const view = document.getElementById("view-conversations");
  if (!view || view.hidden || event.ctrlKey || event.metaKey || event.altKey) return;
  if (event.key === "Escape" && S.pane !== "list") {
    if (editable(event.target) && S.fast) return;
    setPane(S.pane === "file" ? "chat" : "list");
    return;
  }
  if (editable(event.target)) return;
  const key = event.key.toLowerCase();
  if (key === "j") step(1);
  else if (key === "k") step(-1);
  else if (key === "r" && S.selected) setMode("reply");
  else if (key === "n" && S.selected) setMode("note");
  else if (key === "e" && S.selected) toggleStatus();
  else return;
  event.preventDefault();
}

function bindKeys() {
  if (keysBound) return;
  keysBound = true;
  document.addEventListener("keydown", onKey);
  window.addEventListener("resize", () => S.root && fit());
}

// Live: what the stream says changes the list and the open conversation in place.

async function refreshConversation(conversationId) {
  let conversation;
  try {
    conversation = await api("GET", `/conversation/${enc(conversationId)}`);
  } catch (error) {
    if (error.status === 404) {
      // No longer visible to this person (reassigned away from an agent, say).
      S.items = S.items.filter((c) => c.id !== conversationId);
      paint();
    } else {
      console.warn("GET /conversation", error);
    }
    return null;
  }
  if (S.selected?.id === conversation.id) S.selected = conversation;
  upsert(conversation);
  return conversation;
}

async function onLiveEvent(name, body) {
  if (!S.shown) return;
  if (name === "reset") {
    await loadList(1, true);
    if (S.selected) await Promise.all([loadMessages(1, true), loadNotes(true)]);
    return;
  }
  const data = body.data ?? {};
  if (name.startsWith("chat.conversation.") || name === "chat.sla.breached") {
    await refreshConversation(data.id);
    if (data.id === S.selected?.id) S.fileVersion += 1;
    return;
  }
  if (!name.startsWith("chat.message.")) return; // an office alert (app.js), not a message
  const open = S.selected?.id === data.conversationId;
  if (open) showMessage(data);
  if (name === "chat.message.status" || name === "chat.message.updated") return;
  const conversation = await refreshConversation(data.conversationId);
  if (name !== "chat.message.received") return;
  if (open && !document.hidden) markRead(data.conversationId);
  if (conversation && S.me && conversation.assignedUserId === S.me.id) {
    const contact = await person(conversation.personId).catch(() => null);
    alerts.newMessage(contact?.name ?? t("message.contact"), data.text ?? t(`type.${data.type}`));
  }
}
