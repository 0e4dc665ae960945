// Conversations of an inbox: messages with their delivery status, reply, private notes,
// tags and hand-off (assign, end human support), open/close, all through the API.

import { api, eachLimited, listAll } from "./api.js";
import { t } from "./i18n.js";
import {
  announce, attempt, badge, clear, formatTime, h, neutralised, option, paintSwatches, tagChip,
} from "./ui.js";

import * as alerts from "./alerts.js";
import * as live from "./live.js";

const PAGE_SIZE = 20;
const MESSAGE_PAGE = 50;
const FAST_SHOWN = 8;
const SLA_AT_RISK_MINUTES = 30;
const state = {
  bound: false, users: new Map(), departments: new Map(), integrations: new Map(),
  people: new Map(), tags: [], items: [], page: 1, totalPages: 1, selected: null,
  messagePage: 1, messagePages: 1, tab: "all", archived: false, me: null, unsubscribe: null,
  replyTo: null, fastMessages: new Map(), fastShown: [], fastActive: -1, shown: false,
  loads: 0, liveSince: new Map(),
};

const inboxSelect = () => document.getElementById("conversations-inbox");
const statusSelect = () => document.getElementById("conversations-status");
const archivedBox = () => document.getElementById("conversations-archived");
const list = () => document.getElementById("conversation-list");
const pane = () => document.getElementById("conversation-pane");
const moreButton = () => document.getElementById("conversations-more");

export function reset() {
  state.unsubscribe?.();
  Object.assign(state, {
    users: new Map(), people: new Map(), tags: [], items: [], selected: null, me: null,
    unsubscribe: null, replyTo: null, fastMessages: new Map(), tab: "all", shown: false,
  });
  clear(inboxSelect());
  clear(list());
  clear(pane(), h("p", { class: "empty" }, t("conversations.choose")));
}

/** Who is signed in (null for an API key): "Mine" and the alerts are theirs. The live
 * stream updates the list either way (a key's console reads it with fetch: live.js). */
export function signedIn(me) {
  state.me = me?.user ? me : null;
  document.getElementById("tab-mine").hidden = !state.me;
  state.unsubscribe?.();
  state.unsubscribe = live.subscribe(onLiveEvent);
}

function bind() {
  if (state.bound) return;
  state.bound = true;
  inboxSelect().addEventListener("change", () => loadList(1));
  statusSelect().addEventListener("change", () => loadList(1));
  archivedBox().addEventListener("change", () => {
    state.archived = archivedBox().checked;
    loadList(1);
  });
  for (const tab of document.querySelectorAll("#conversation-tabs [data-tab]")) {
    tab.addEventListener("click", () => {
      state.tab = tab.dataset.tab;
      loadList(1);
    });
  }
  document.getElementById("conversations-reload").addEventListener("click", () => loadList(1));
  moreButton().addEventListener("click", () => loadList(state.page + 1));
}

export async function show() {
  bind();
  const ready = await attempt(t("conversations.inboxes"), async () => {
    const [inboxes, users, departments, integrations] = await Promise.all([
      listAll("/inbox"), listAll("/user"), listAll("/department"), listAll("/integration"),
    ]);
    const chosen = inboxSelect().value;
    clear(inboxSelect(), option("", t("conversations.allInboxes")),
      inboxes.map((i) => option(i.id, i.name, i.id === chosen)));
    state.users = new Map(users.map((u) => [u.id, u]));
    state.departments = new Map(departments.map((d) => [d.id, d]));
    state.integrations = new Map(integrations.map((i) => [i.id, i]));
    if (!inboxes.length) clear(list(), h("li", { class: "empty" }, t("conversations.noInbox")));
    return inboxes.length > 0;
  });
  state.shown = Boolean(ready);
  if (ready) await loadList(1);
}

async function person(personId) {
  if (!state.people.has(personId)) {
    state.people.set(personId, api("GET", `/people/${encodeURIComponent(personId)}`));
  }
  try {
    return await state.people.get(personId);
  } catch (error) {
    state.people.delete(personId);
    throw error;
  }
}

function listQuery() {
  return {
    inboxId: inboxSelect().value,
    status: statusSelect().value,
    mine: state.tab === "mine" ? "true" : undefined,
    unassigned: state.tab === "unassigned" ? "true" : undefined,
    isArchived: state.archived ? "true" : "false",
  };
}

/** Whether a conversation belongs in the list as it is filtered now. */
function fits(conversation) {
  const query = listQuery();
  if (query.inboxId && conversation.inboxId !== query.inboxId) return false;
  if (query.status && conversation.status !== query.status) return false;
  if (state.tab === "mine" && conversation.assignedUserId !== state.me?.id) return false;
  if (state.tab === "unassigned" && conversation.assignedUserId) return false;
  return conversation.isArchived === state.archived;
}

// The API's order: pinned first, then the latest message first.
function byListOrder(a, b) {
  if (a.isFixed !== b.isFixed) return a.isFixed ? -1 : 1;
  const at = (c) => c.lastMessageAt ?? c.createdAt ?? "";
  return at(b).localeCompare(at(a));
}

async function loadList(page) {
  for (const tab of document.querySelectorAll("#conversation-tabs [data-tab]")) {
    tab.setAttribute("aria-pressed", String(tab.dataset.tab === state.tab));
  }
  // What the stream brings while this page loads is newer than the page: kept over it.
  const ticket = ++state.loads;
  state.liveSince = new Map();
  const answer = await attempt(t("conversations.title"), () => api("GET", "/conversation", {
    query: { ...listQuery(), page, limit: PAGE_SIZE },
  }));
  if (!answer || ticket !== state.loads) return;
  state.page = page;
  state.totalPages = answer.totalPages;
  if (page === 1) state.items = [];
  const arrived = state.liveSince;
  const known = new Set(state.items.map((c) => c.id));
  state.items.push(...answer.data.filter((c) => !known.has(c.id) && !arrived.has(c.id)));
  state.items = state.items.filter((c) => !arrived.has(c.id));
  state.items.push(...[...arrived.values()].filter(fits));
  state.items.sort(byListOrder);
  renderList();
  moreButton().hidden = page >= answer.totalPages;
  announce(t("conversations.count", { count: answer.totalResults }));
}

function renderList() {
  clear(list(), state.items.length ? state.items.map(renderListItem)
    : h("li", { class: "empty" }, t("conversations.none")));
  fillNames(state.items);
}

function fillNames(conversations) {
  return attempt(t("conversations.contacts"), () => eachLimited(conversations, 6, async (c) => {
    const contact = await person(c.personId);
    for (const slot of list().querySelectorAll(`[data-person-id="${CSS.escape(contact.id)}"]`)) {
      slot.textContent = neutralised(contact.name);
    }
  }));
}

/** Puts a conversation in the list, where the order says, or takes it out when it no
 * longer fits the filters. */
function upsert(conversation) {
  state.liveSince.set(conversation.id, conversation);
  state.items = state.items.filter((c) => c.id !== conversation.id);
  if (fits(conversation)) {
    state.items.push(conversation);
    state.items.sort(byListOrder);
  }
  renderList();
}

function channelOf(conversation) {
  const type = state.integrations.get(conversation.integrationId)?.type;
  return type ? t(`channel.${type}`) : t("channel.unknown");
}

/** The SLA mark of a list item: breached (it missed a due time), at risk (a due time
 * still to meet falls within SLA_AT_RISK_MINUTES), else none. */
function slaMark(conversation) {
  const sla = conversation.sla;
  if (!sla) return null;
  if (sla.breachedAt) {
    return h("span", {
      class: "badge danger sla", dataset: { sla: "breached" },
      title: t("conversations.slaBreachedAt", { time: formatTime(sla.breachedAt) }),
    }, t("conversations.slaBreached"));
  }
  if (conversation.status !== "OPEN") return null;
  const dues = [
    conversation.firstResponseAt ? null : sla.firstResponseDueAt,
    sla.nextResponseDueAt, sla.resolutionDueAt,
  ].filter(Boolean).map((iso) => new Date(iso).getTime());
  if (!dues.length) return null;
  const due = Math.min(...dues);
  if (due - Date.now() > SLA_AT_RISK_MINUTES * 60_000) return null;
  return h("span", {
    class: "badge warn sla", dataset: { sla: "at-risk" },
    title: t("conversations.slaDueAt", { time: formatTime(new Date(due).toISOString()) }),
  }, t("conversations.slaAtRisk"));
}

function renderListItem(conversation) {
  const last = conversation.lastMessage;
  const assignee = conversation.assignedUserId
    ? (state.users.get(conversation.assignedUserId)?.name ?? conversation.responsables?.[0]?.name)
    : null;
  const button = h("button", {
    type: "button", class: "conversation-item",
    dataset: {
      conversationId: conversation.id, unread: String(conversation.unreadCount ?? 0),
      fixed: String(conversation.isFixed), channel: state.integrations.get(conversation.integrationId)?.type ?? "",
    },
    "aria-current": conversation.id === state.selected?.id ? "true" : null,
    onclick: () => openConversation(conversation.id),
  },
  h("span", { class: "line" },
    h("span", { class: "name", dataset: { personId: conversation.personId } }, "…"),
    conversation.isFixed ? badge(t("conversations.pinned"), "info pinned") : null,
    slaMark(conversation),
    conversation.unreadCount
      ? h("span", {
        class: "badge danger unread", title: t("conversations.unread", { count: conversation.unreadCount }),
      }, String(conversation.unreadCount))
      : null),
  h("span", { class: "line" },
    badge(channelOf(conversation), "muted channel"),
    h("span", { class: "preview" }, last ? (last.content ?? t(`type.${last.type}`)) : "—")),
  h("span", { class: "meta" },
    t("conversations.meta", {
      status: t(`conversation.${conversation.status}`),
      priority: t(`priority.${conversation.priority}`),
    }),
    conversation.lastMessageAt ? ` · ${formatTime(conversation.lastMessageAt)}` : "",
    assignee ? t("conversations.assignee", { name: assignee }) : ""));
  return h("li", {}, button);
}

async function openConversation(conversationId) {
  const loaded = await attempt(t("conversations.conversation"), async () => {
    const conversation = await api("GET", `/conversation/${encodeURIComponent(conversationId)}`);
    const [contact, tags] = await Promise.all([
      person(conversation.personId),
      listAll("/tag", { inboxId: conversation.inboxId }),
    ]);
    return { conversation, contact, tags };
  });
  if (!loaded) return;
  state.selected = loaded.conversation;
  state.tags = loaded.tags;
  state.replyTo = null;
  for (const item of list().querySelectorAll(".conversation-item")) {
    if (item.dataset.conversationId === conversationId) item.setAttribute("aria-current", "true");
    else item.removeAttribute("aria-current");
  }
  renderPane(loaded.contact);
  await Promise.all([loadMessages(1), loadNotes()]);
  document.getElementById("conversation-title").focus();
}

// A web chat visitor's contact is unverified: what they typed is a claim, shown as such.
// A WhatsApp client known by a username only (no phone) is shown by it.
function identityLine(contact) {
  if (contact.verified !== false) {
    const username = contact.username
      ? t("contact.whatsappUsername", { value: contact.username }) : null;
    return h("p", { class: "muted" }, contact.phone ?? username ?? contact.email ?? "");
  }
  const claimed = contact.claimedPhone ?? contact.claimedEmail ?? "";
  return h("p", { class: "muted", dataset: { verified: "false" } },
    h("span", { class: "badge warn", title: t("contact.unverifiedTitle") },
      t("contact.unverified")),
    claimed ? t("contact.claimed", { value: claimed }) : "");
}

function renderPane(contact) {
  const c = state.selected;
  clear(pane(), h("article", { "aria-labelledby": "conversation-title", class: "conversation" },
    h("header", { class: "conversation-head" },
      h("h2", { id: "conversation-title", tabindex: "-1" }, contact.name),
      identityLine(contact),
      h("p", { class: "muted", id: "conversation-channel" },
        t("conversation.channel", { channel: channelOf(c) }))),
    h("p", { id: "conversation-state", class: "conversation-state" }),
    h("section", { "aria-labelledby": "handoff-title", class: "panel" },
      h("h3", { id: "handoff-title" }, t("conversation.handoff")),
      h("div", { class: "row" },
        h("label", { for: "assign-user" }, t("conversation.assignTo")),
        h("select", { id: "assign-user" }, option("", t("conversation.chooseUser")),
          [...state.users.values()].map((u) => option(u.id, u.name))),
        h("button", { type: "button", onclick: assign }, t("conversation.assign"))),
      state.departments.size ? h("div", { class: "row" },
        h("label", { for: "assign-department" }, t("conversation.department")),
        h("select", { id: "assign-department" }, option("", t("conversation.chooseDepartment")),
          [...state.departments.values()].map((d) => option(d.id, d.name))),
        h("button", { type: "button", class: "secondary", onclick: assignDepartment },
          t("conversation.sendToDepartment"))) : null,
      h("div", { class: "row" },
        h("label", { for: "conversation-priority" }, t("conversation.priority")),
        h("select", { id: "conversation-priority" },
          ["LOW", "MEDIUM", "HIGH"].map((p) => option(p, t(`priority.${p}`), p === c.priority))),
        h("button", { type: "button", class: "secondary", onclick: changePriority },
          t("conversation.setPriority"))),
      h("div", { class: "row" },
        h("button", { type: "button", class: "secondary", onclick: endHumanSupport },
          t("conversation.endHuman")),
        h("button", { type: "button", class: "secondary", id: "toggle-status", onclick: toggleStatus }),
        h("button", { type: "button", class: "secondary", id: "toggle-fixed", onclick: toggleFixed }),
        h("button", {
          type: "button", class: "secondary", id: "toggle-archived", onclick: toggleArchived,
        }))),
    h("section", { "aria-labelledby": "tags-title", class: "panel" },
      h("h3", { id: "tags-title" }, t("conversation.tags")),
      h("ul", { id: "conversation-tags", class: "tag-list" }),
      h("div", { class: "row" },
        h("label", { for: "add-tag" }, t("conversation.addTag")),
        h("select", { id: "add-tag" }),
        h("button", { type: "button", onclick: addTag }, t("conversation.addTag")))),
    h("section", { "aria-labelledby": "messages-title", class: "panel" },
      h("div", { class: "row spread" },
        h("h3", { id: "messages-title" }, t("conversation.messages")),
        h("button", { type: "button", class: "secondary", onclick: () => loadMessages(1) }, t("common.refresh"))),
      h("button", {
        type: "button", class: "secondary", id: "older-messages", hidden: true,
        onclick: () => loadMessages(state.messagePage + 1),
      }, t("conversation.older")),
      h("ol", { id: "message-list", class: "message-list", "aria-live": "polite" }),
      h("form", { id: "reply-form", class: "compose", onsubmit: reply },
        h("div", { id: "reply-quote", class: "quote", hidden: true }),
        h("label", { for: "reply-text" }, t("conversation.reply")),
        h("p", { class: "hint", id: "reply-hint" }, t("composer.hint")),
        h("div", { class: "composer" },
          h("textarea", {
            id: "reply-text", rows: "3", maxlength: "4096", required: true,
            "aria-describedby": "reply-hint", "aria-autocomplete": "list",
            "aria-controls": "fast-list", "aria-expanded": "false",
            oninput: fastInput, onkeydown: fastKeys,
          }),
          h("ul", {
            id: "fast-list", class: "fast-list", role: "listbox",
            "aria-label": t("composer.fastMessages"), hidden: true,
          })),
        h("button", { type: "submit" }, t("conversation.sendReply")))),
    h("section", { "aria-labelledby": "notes-title", class: "panel" },
      h("h3", { id: "notes-title" }, t("conversation.notes")),
      h("ul", { id: "note-list", class: "note-list" }),
      h("form", { id: "note-form", class: "compose", onsubmit: addNote },
        h("label", { for: "note-text" }, t("conversation.addNoteLabel")),
        h("textarea", { id: "note-text", rows: "2", maxlength: "10000", required: true }),
        h("button", { type: "submit", class: "secondary" }, t("conversation.addNote"))))));
  fillState();
}

function fillState() {
  const c = state.selected;
  const assignee = c.assignedUserId
    ? (state.users.get(c.assignedUserId)?.name ?? c.assignedUserId) : t("conversation.nobody");
  const department = c.departmentId
    ? t("conversation.inDepartment", {
      name: state.departments.get(c.departmentId)?.name ?? c.departmentId,
    }) : "";
  clear(document.getElementById("conversation-state"),
    badge(t(`conversation.${c.status}`), c.status === "OPEN" ? "ok" : "muted"), " ",
    c.isFixed ? [badge(t("conversations.pinned"), "info"), " "] : null,
    c.isArchived ? [badge(t("conversations.archivedOne"), "muted"), " "] : null,
    t("conversation.stateLine", { priority: t(`priority.${c.priority}`), assignee, department }));
  document.getElementById("toggle-status").textContent =
    c.status === "OPEN" ? t("conversation.close") : t("conversation.reopen");
  document.getElementById("toggle-fixed").textContent =
    c.isFixed ? t("conversation.unpin") : t("conversation.pin");
  document.getElementById("toggle-archived").textContent =
    c.isArchived ? t("conversation.unarchive") : t("conversation.archive");
  const assigned = new Set(c.tags.map((tag) => tag.id));
  const tagList = document.getElementById("conversation-tags");
  clear(tagList, c.tags.length ? c.tags.map((tag) => h("li", {},
    tagChip(tag),
    h("button", {
      type: "button", class: "link", "aria-label": t("conversation.removeTagNamed", { name: tag.name }),
      onclick: () => removeTag(tag.id),
    }, t("conversation.remove")))) : h("li", { class: "muted" }, t("conversation.noTags")));
  paintSwatches(tagList);
  clear(document.getElementById("add-tag"),
    state.tags.filter((tag) => !assigned.has(tag.id)).map((tag) => option(tag.id, tag.name)));
}

async function changed(context, call) {
  const answer = await attempt(context, call);
  if (!answer) return;
  showChanged(answer);
  announce(t("common.done", { action: context }));
}

function showChanged(conversation) {
  if (state.selected?.id === conversation.id) {
    state.selected = conversation;
    fillState();
  }
  upsert(conversation);
}

const conversationPath = () => `/conversation/${encodeURIComponent(state.selected.id)}`;

function assign() {
  const userId = document.getElementById("assign-user").value;
  if (!userId) return;
  changed(t("conversation.assign"), () => api("PATCH", conversationPath(), { body: { assignedUserId: userId } }));
}

function assignDepartment() {
  const departmentId = document.getElementById("assign-department").value;
  if (!departmentId) return;
  changed(t("conversation.department"), () => api("PATCH", conversationPath(), { body: { departmentId } }));
}

function changePriority() {
  const priority = document.getElementById("conversation-priority").value;
  changed(t("conversation.priority"), () => api("PATCH", conversationPath(), { body: { priority } }));
}

function endHumanSupport() {
  changed(t("conversation.endHuman"), () => api("POST", "/conversation/end-human-support", {
    body: { conversationId: state.selected.id },
  }));
}

function toggleStatus() {
  const status = state.selected.status === "OPEN" ? "CLOSED" : "OPEN";
  changed(status === "OPEN" ? t("conversation.reopen") : t("conversation.close"),
    () => api("PATCH", conversationPath(), { body: { status } }));
}

function toggleFixed() {
  const isFixed = !state.selected.isFixed;
  changed(isFixed ? t("conversation.pin") : t("conversation.unpin"),
    () => api("PATCH", conversationPath(), { body: { isFixed } }));
}

function toggleArchived() {
  const isArchived = !state.selected.isArchived;
  changed(isArchived ? t("conversation.archive") : t("conversation.unarchive"),
    () => api("PATCH", conversationPath(), { body: { isArchived } }));
}

function addTag() {
  const tagId = document.getElementById("add-tag").value;
  if (!tagId) return;
  changed(t("conversation.addTag"), () => api("POST", `${conversationPath()}/tags`, { body: { tagId } }));
}

function removeTag(tagId) {
  changed(t("conversation.removeTag"), () =>
    api("DELETE", `${conversationPath()}/tags/${encodeURIComponent(tagId)}`));
}

const STATUS_KIND = { FAILED: "danger", READ: "ok", DELIVERED: "ok", SENT: "info" };

function messageText(message) {
  if (message.text) return message.text;
  if (message.templateName) return t("message.template", { name: message.templateName });
  return message.mediaUrl ?? t(`type.${message.type}`);
}

/** Why the platform refused a message: its code, title and details, as it said them. */
function failureReason(message) {
  const detail = message.errorDetail;
  const said = [detail?.code, detail?.title, detail?.details && detail.details !== detail.title
    ? detail.details : null].filter(Boolean).join(" · ");
  return said || message.error || t("message.noReason");
}

function quotedOf(message) {
  if (!message.replyTo) return null;
  const quoted = document.querySelector(
    `#message-list [data-message-id="${CSS.escape(message.replyTo)}"] .text`);
  return h("blockquote", { class: "quoted", dataset: { replyTo: message.replyTo } },
    quoted ? quoted.textContent : t("message.quotedElsewhere"));
}

function renderMessage(message) {
  const outbound = message.direction === "OUTBOUND";
  return h("li", {
    class: `message ${outbound ? "outbound" : "inbound"}`,
    dataset: { messageId: message.id, status: message.status },
  },
  h("p", { class: "who" }, outbound
    ? (message.userName ?? t("message.office")) : t("message.contact")),
  quotedOf(message),
  h("p", { class: "text" }, messageText(message)),
  h("p", { class: "meta" }, formatTime(message.createdAt), " ",
    badge(t(`message.${message.status}`), STATUS_KIND[message.status] ?? "muted"), " ",
    h("button", {
      type: "button", class: "link quote-button",
      "aria-label": t("message.quoteLabel", { text: messageText(message).slice(0, 40) }),
      onclick: () => quote(message),
    }, t("message.quote"))),
  message.status === "FAILED"
    ? h("p", { class: "error-text" }, t("message.failedBecause", { reason: failureReason(message) }))
    : null);
}

function quote(message) {
  state.replyTo = message;
  const box = document.getElementById("reply-quote");
  if (!box) return;
  box.hidden = false;
  clear(box, h("p", { class: "muted" }, t("composer.replyingTo")),
    h("blockquote", {}, messageText(message)),
    h("button", { type: "button", class: "link", onclick: unquote }, t("composer.cancelQuote")));
  document.getElementById("reply-text").focus();
}

function unquote() {
  state.replyTo = null;
  const box = document.getElementById("reply-quote");
  if (box) {
    box.hidden = true;
    box.replaceChildren();
  }
}

function messageList() {
  return document.getElementById("message-list");
}

/** Shows a message of the open conversation: replaced where it is, or added at the end. */
function showMessage(message) {
  const box = messageList();
  if (!box) return;
  const fresh = renderMessage(message);
  const there = box.querySelector(`[data-message-id="${CSS.escape(message.id)}"]`);
  if (there) {
    there.replaceWith(fresh);
    return;
  }
  box.querySelector(":scope > .muted")?.remove();
  box.append(fresh);
}

async function markRead(conversationId) {
  // The operator has read the conversation: the client sees the blue ticks. A failure
  // here must not hide the messages, so it is only logged.
  try {
    await api("POST", `/conversation/${encodeURIComponent(conversationId)}/read`);
  } catch (error) {
    console.warn("POST /read", error);
    return;
  }
  const item = state.items.find((c) => c.id === conversationId);
  if (item && item.unreadCount) {
    item.unreadCount = 0;
    renderList();
  }
}

async function loadMessages(page) {
  const answer = await attempt(t("conversation.messages"), () => api("GET", `${conversationPath()}/messages`, {
    query: { page, limit: MESSAGE_PAGE },
  }));
  if (!answer) return;
  state.messagePage = page;
  const box = messageList();
  const items = answer.data.slice().reverse().map(renderMessage);
  if (page === 1) clear(box, items);
  else box.prepend(...items);
  if (!box.children.length) box.append(h("li", { class: "muted" }, t("conversation.noMessages")));
  document.getElementById("older-messages").hidden = page >= answer.totalPages;
  if (page === 1 && answer.data.some((m) => m.direction === "INBOUND")) {
    markRead(state.selected.id);
  }
}

async function reply(event) {
  event.preventDefault();
  const field = document.getElementById("reply-text");
  const text = field.value.trim();
  if (!text) return;
  const body = { text };
  if (state.replyTo) body.replyToMessageId = state.replyTo.id;
  const message = await attempt(t("conversation.reply"), () =>
    api("POST", `${conversationPath()}/messages`, { body }));
  if (!message) return;
  field.value = "";
  unquote();
  showMessage(message);
  announce(t("conversation.replied", { status: t(`message.${message.status}`) }));
}

// Fast messages: "/" at the start of the reply lists the inbox's fast messages, filtered
// by what follows; arrows choose, Enter (or a click) puts the text in the reply.

function folded(text) {
  return text.normalize("NFD").replace(/[\u0300-\u036f]/g, "").toLowerCase();
}

async function fastMessagesOf(inboxId) {
  if (!state.fastMessages.has(inboxId)) {
    state.fastMessages.set(inboxId, listAll("/fast-message", { inboxId }).catch((error) => {
      state.fastMessages.delete(inboxId);
      throw error;
    }));
  }
  return state.fastMessages.get(inboxId);
}

function fastBox() {
  return document.getElementById("fast-list");
}

function closeFast() {
  const box = fastBox();
  if (!box) return;
  box.hidden = true;
  box.replaceChildren();
  state.fastShown = [];
  state.fastActive = -1;
  const field = document.getElementById("reply-text");
  field.setAttribute("aria-expanded", "false");
  field.removeAttribute("aria-activedescendant");
}

async function fastInput(event) {
  const field = event.currentTarget;
  const typed = /^\/(\S*)$/.exec(field.value);
  if (!typed || !state.selected) {
    closeFast();
    return;
  }
  const all = await attempt(t("composer.fastMessages"), () => fastMessagesOf(state.selected.inboxId));
  if (!all || field.value !== `/${typed[1]}`) return;
  const wanted = folded(typed[1]);
  state.fastShown = all
    .filter((m) => m.text && (folded(m.title).includes(wanted) || folded(m.text).includes(wanted)))
    .slice(0, FAST_SHOWN);
  state.fastActive = state.fastShown.length ? 0 : -1;
  renderFast();
}

function renderFast() {
  const box = fastBox();
  const field = document.getElementById("reply-text");
  box.hidden = false;
  field.setAttribute("aria-expanded", "true");
  clear(box, state.fastShown.length ? state.fastShown.map((m, index) => h("li", {
    id: `fast-${m.id}`, role: "option", class: "fast-option",
    "aria-selected": String(index === state.fastActive),
    onmousedown: (event) => {
      event.preventDefault();
      insertFast(m);
    },
  }, h("strong", {}, m.title), " ", h("span", { class: "muted" }, m.text)))
    : h("li", { class: "muted", role: "option", "aria-disabled": "true" }, t("composer.noFast")));
  if (state.fastActive >= 0) {
    field.setAttribute("aria-activedescendant", `fast-${state.fastShown[state.fastActive].id}`);
  } else {
    field.removeAttribute("aria-activedescendant");
  }
}

function insertFast(message) {
  const field = document.getElementById("reply-text");
  field.value = message.text;
  closeFast();
  field.focus();
  announce(t("composer.inserted", { title: message.title }));
}

function fastKeys(event) {
  if (fastBox()?.hidden !== false) return;
  if (event.key === "Escape") {
    event.preventDefault();
    closeFast();
  } else if (event.key === "ArrowDown" || event.key === "ArrowUp") {
    if (!state.fastShown.length) return;
    event.preventDefault();
    const step = event.key === "ArrowDown" ? 1 : -1;
    state.fastActive = (state.fastActive + step + state.fastShown.length) % state.fastShown.length;
    renderFast();
  } else if (event.key === "Enter" && state.fastActive >= 0) {
    event.preventDefault();
    insertFast(state.fastShown[state.fastActive]);
  }
}

// Live: what the stream says changes the list and the open conversation in place.

async function refreshConversation(conversationId) {
  let conversation;
  try {
    conversation = await api("GET", `/conversation/${encodeURIComponent(conversationId)}`);
  } catch (error) {
    if (error.status === 404) {
      // No longer visible to this person (reassigned away from an agent, say).
      state.items = state.items.filter((c) => c.id !== conversationId);
      renderList();
    } else {
      console.warn("GET /conversation", error);
    }
    return null;
  }
  if (state.selected?.id === conversation.id) {
    state.selected = conversation;
    fillState();
  }
  upsert(conversation);
  return conversation;
}

async function onLiveEvent(name, body) {
  if (!state.shown) return;
  if (name === "reset") {
    await loadList(1);
    if (state.selected) await loadMessages(1);
    return;
  }
  const data = body.data ?? {};
  if (name.startsWith("chat.conversation.") || name === "chat.sla.breached") {
    await refreshConversation(data.id);
    return;
  }
  if (!name.startsWith("chat.message.")) return; // an office alert (app.js), not a message
  const open = state.selected?.id === data.conversationId;
  if (open) showMessage(data);
  if (name === "chat.message.status" || name === "chat.message.updated") return;
  const conversation = await refreshConversation(data.conversationId);
  if (name !== "chat.message.received") return;
  if (open && !document.hidden) markRead(data.conversationId);
  if (conversation && state.me && conversation.assignedUserId === state.me.id) {
    const contact = await person(conversation.personId).catch(() => null);
    alerts.newMessage(contact?.name ?? t("message.contact"), data.text ?? t(`type.${data.type}`));
  }
}

async function loadNotes() {
  const notes = await attempt(t("conversation.notes"), () => api("GET", "/conversation/notes", {
    query: { conversationId: state.selected.id, limit: 50 },
  }));
  if (!notes) return;
  clear(document.getElementById("note-list"), notes.data.length
    ? notes.data.map(renderNote) : h("li", { class: "muted" }, t("conversation.noNotes")));
}

function renderNote(note) {
  const author = note.userId ? (state.users.get(note.userId)?.name ?? note.userId) : null;
  return h("li", { class: "note", dataset: { noteId: note.id } },
    h("p", {}, note.text),
    h("p", { class: "meta" }, formatTime(note.createdAt), author ? t("note.by", { name: author }) : ""));
}

async function addNote(event) {
  event.preventDefault();
  const field = document.getElementById("note-text");
  const text = field.value.trim();
  if (!text) return;
  // A signed-in person's note names them (the API takes the author from the body).
  const body = { conversationId: state.selected.id, text };
  if (state.me) body.userId = state.me.id;
  const note = await attempt(t("conversation.note"), () => api("POST", "/conversation/note", { body }));
  if (!note) return;
  field.value = "";
  const box = document.getElementById("note-list");
  box.querySelector(".muted")?.remove();
  box.prepend(renderNote(note));
  announce(t("conversation.noteAdded"));
}
