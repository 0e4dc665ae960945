// Conversations of an inbox: messages with their delivery status, reply, private notes,
// tags and hand-off (assign, end human support), open/close, all through the API.

import { api, eachLimited, listAll } from "./api.js";
import { t } from "./i18n.js";
import {
  announce, attempt, badge, clear, formatTime, h, neutralised, option, paintSwatches, tagChip,
} from "./ui.js";

const PAGE_SIZE = 20;
const MESSAGE_PAGE = 50;
const state = {
  bound: false, users: new Map(), departments: new Map(), people: new Map(), tags: [],
  page: 1, totalPages: 1, selected: null, messagePage: 1, messagePages: 1,
};

const inboxSelect = () => document.getElementById("conversations-inbox");
const statusSelect = () => document.getElementById("conversations-status");
const list = () => document.getElementById("conversation-list");
const pane = () => document.getElementById("conversation-pane");
const moreButton = () => document.getElementById("conversations-more");

export function reset() {
  Object.assign(state, { users: new Map(), people: new Map(), tags: [], selected: null });
  clear(inboxSelect());
  clear(list());
  clear(pane(), h("p", { class: "empty" }, t("conversations.choose")));
}

function bind() {
  if (state.bound) return;
  state.bound = true;
  inboxSelect().addEventListener("change", () => loadList(1));
  statusSelect().addEventListener("change", () => loadList(1));
  document.getElementById("conversations-reload").addEventListener("click", () => loadList(1));
  moreButton().addEventListener("click", () => loadList(state.page + 1));
}

export async function show() {
  bind();
  const ready = await attempt(t("conversations.inboxes"), async () => {
    const [inboxes, users, departments] = await Promise.all([
      listAll("/inbox"), listAll("/user"), listAll("/department"),
    ]);
    const chosen = inboxSelect().value;
    clear(inboxSelect(), inboxes.map((i) => option(i.id, i.name, i.id === chosen)));
    state.users = new Map(users.map((u) => [u.id, u]));
    state.departments = new Map(departments.map((d) => [d.id, d]));
    if (!inboxes.length) clear(list(), h("li", { class: "empty" }, t("conversations.noInbox")));
    return inboxes.length > 0;
  });
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

async function loadList(page) {
  const inboxId = inboxSelect().value;
  if (!inboxId) return;
  const answer = await attempt(t("conversations.title"), () => api("GET", "/conversation", {
    query: { inboxId, status: statusSelect().value, page, limit: PAGE_SIZE },
  }));
  if (!answer) return;
  state.page = page;
  state.totalPages = answer.totalPages;
  if (page === 1) clear(list());
  list().append(...answer.data.map(renderListItem));
  if (!list().children.length) list().append(h("li", { class: "empty" }, t("conversations.none")));
  moreButton().hidden = page >= answer.totalPages;
  announce(t("conversations.count", { count: answer.totalResults }));
  await attempt(t("conversations.contacts"), () => eachLimited(answer.data, 6, async (conversation) => {
    const contact = await person(conversation.personId);
    for (const slot of list().querySelectorAll(`[data-person-id="${CSS.escape(contact.id)}"]`)) {
      slot.textContent = neutralised(contact.name);
    }
  }));
}

function renderListItem(conversation) {
  const button = h("button", {
    type: "button", class: "conversation-item",
    dataset: { conversationId: conversation.id },
    "aria-current": conversation.id === state.selected?.id ? "true" : null,
    onclick: () => openConversation(conversation.id),
  },
  h("span", { class: "name", dataset: { personId: conversation.personId } }, "…"),
  h("span", { class: "meta" },
    t("conversations.meta", {
      status: t(`conversation.${conversation.status}`),
      priority: t(`priority.${conversation.priority}`),
    }),
    conversation.lastMessageAt ? ` · ${formatTime(conversation.lastMessageAt)}` : ""));
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
  for (const item of list().querySelectorAll(".conversation-item")) {
    if (item.dataset.conversationId === conversationId) item.setAttribute("aria-current", "true");
    else item.removeAttribute("aria-current");
  }
  renderPane(loaded.contact);
  await Promise.all([loadMessages(1), loadNotes()]);
  document.getElementById("conversation-title").focus();
}

// A web chat visitor's contact is unverified: what they typed is a claim, shown as such.
function identityLine(contact) {
  if (contact.verified !== false) {
    return h("p", { class: "muted" }, contact.phone ?? contact.email ?? "");
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
      identityLine(contact)),
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
        h("button", { type: "button", class: "secondary", id: "toggle-status", onclick: toggleStatus }))),
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
        h("label", { for: "reply-text" }, t("conversation.reply")),
        h("textarea", { id: "reply-text", rows: "3", maxlength: "4096", required: true }),
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
    t("conversation.stateLine", { priority: t(`priority.${c.priority}`), assignee, department }));
  document.getElementById("toggle-status").textContent =
    c.status === "OPEN" ? t("conversation.close") : t("conversation.reopen");
  const assigned = new Set(c.tags.map((t) => t.id));
  const tagList = document.getElementById("conversation-tags");
  clear(tagList, c.tags.length ? c.tags.map((tag) => h("li", {},
    tagChip(tag),
    h("button", {
      type: "button", class: "link", "aria-label": t("conversation.removeTagNamed", { name: tag.name }),
      onclick: () => removeTag(tag.id),
    }, t("conversation.remove")))) : h("li", { class: "muted" }, t("conversation.noTags")));
  paintSwatches(tagList);
  clear(document.getElementById("add-tag"),
    state.tags.filter((t) => !assigned.has(t.id)).map((t) => option(t.id, t.name)));
}

async function changed(context, call) {
  const answer = await attempt(context, call);
  if (!answer) return;
  state.selected = answer;
  fillState();
  announce(t("common.done", { action: context }));
  const item = list().querySelector(`[data-conversation-id="${CSS.escape(answer.id)}"] .meta`);
  if (item) {
    item.textContent = t("conversations.meta", {
      status: t(`conversation.${answer.status}`), priority: t(`priority.${answer.priority}`),
    });
  }
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

function addTag() {
  const tagId = document.getElementById("add-tag").value;
  if (!tagId) return;
  changed(t("conversation.addTag"), () => api("POST", `${conversationPath()}/tags`, { body: { tagId } }));
}

function removeTag(tagId) {
  changed(t("conversation.removeTag"), () =>
    api("DELETE", `${conversationPath()}/tags/${encodeURIComponent(tagId)}`));
}

function renderMessage(message) {
  const outbound = message.direction === "OUTBOUND";
  const kind = { FAILED: "danger", READ: "ok", DELIVERED: "ok", SENT: "info" }[message.status] ?? "muted";
  return h("li", {
    class: `message ${outbound ? "outbound" : "inbound"}`, dataset: { messageId: message.id, status: message.status },
  },
  h("p", { class: "who" }, outbound ? t("message.office") : t("message.contact")),
  h("p", { class: "text" }, message.text ?? (message.templateName
    ? t("message.template", { name: message.templateName }) : message.mediaUrl ?? "")),
  h("p", { class: "meta" }, formatTime(message.createdAt), " ",
    badge(t(`message.${message.status}`), kind)),
  message.error ? h("p", { class: "error-text" }, message.error) : null);
}

async function loadMessages(page) {
  const answer = await attempt(t("conversation.messages"), () => api("GET", `${conversationPath()}/messages`, {
    query: { page, limit: MESSAGE_PAGE },
  }));
  if (!answer) return;
  state.messagePage = page;
  const box = document.getElementById("message-list");
  const items = answer.data.slice().reverse().map(renderMessage);
  if (page === 1) clear(box, items);
  else box.prepend(...items);
  if (!box.children.length) box.append(h("li", { class: "muted" }, t("conversation.noMessages")));
  document.getElementById("older-messages").hidden = page >= answer.totalPages;
  if (page === 1 && answer.data.some((m) => m.direction === "INBOUND")) {
    // The operator has read the conversation: the client sees the blue ticks. A failure
    // here must not hide the messages, so it is only logged.
    api("POST", `${conversationPath()}/read`).catch((error) => console.warn("POST /read", error));
  }
}

async function reply(event) {
  event.preventDefault();
  const field = document.getElementById("reply-text");
  const text = field.value.trim();
  if (!text) return;
  const message = await attempt(t("conversation.reply"), () =>
    api("POST", `${conversationPath()}/messages`, { body: { text } }));
  if (!message) return;
  field.value = "";
  const box = document.getElementById("message-list");
  box.querySelector(".muted")?.remove();
  box.append(renderMessage(message));
  announce(t("conversation.replied", { status: t(`message.${message.status}`) }));
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
  const note = await attempt(t("conversation.note"), () => api("POST", "/conversation/note", {
    body: { conversationId: state.selected.id, text },
  }));
  if (!note) return;
  field.value = "";
  const box = document.getElementById("note-list");
  box.querySelector(".muted")?.remove();
  box.prepend(renderNote(note));
  announce(t("conversation.noteAdded"));
}
