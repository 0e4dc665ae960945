// Conversations of an inbox: messages with their delivery status, reply, private notes,
// tags and hand-off (assign, end human support), open/close, all through the API.

import { api, eachLimited, listAll } from "./api.js";
import {
  announce, attempt, badge, clear, formatTime, h, neutralised, option, paintSwatches, plural,
  tagChip,
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
  clear(pane(), h("p", { class: "empty" }, "Choose a conversation."));
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
  const ready = await attempt("Inboxes", async () => {
    const [inboxes, users, departments] = await Promise.all([
      listAll("/inbox"), listAll("/user"), listAll("/department"),
    ]);
    const chosen = inboxSelect().value;
    clear(inboxSelect(), inboxes.map((i) => option(i.id, i.name, i.id === chosen)));
    state.users = new Map(users.map((u) => [u.id, u]));
    state.departments = new Map(departments.map((d) => [d.id, d]));
    if (!inboxes.length) clear(list(), h("li", { class: "empty" }, "This office has no inbox yet."));
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
  const answer = await attempt("Conversations", () => api("GET", "/conversation", {
    query: { inboxId, status: statusSelect().value, page, limit: PAGE_SIZE },
  }));
  if (!answer) return;
  state.page = page;
  state.totalPages = answer.totalPages;
  if (page === 1) clear(list());
  list().append(...answer.data.map(renderListItem));
  if (!list().children.length) list().append(h("li", { class: "empty" }, "No conversations."));
  moreButton().hidden = page >= answer.totalPages;
  announce(`${plural(answer.totalResults, "conversation")}.`);
  await attempt("Contacts", () => eachLimited(answer.data, 6, async (conversation) => {
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
    `${conversation.status.toLowerCase()} · ${conversation.priority.toLowerCase()} priority`,
    conversation.lastMessageAt ? ` · ${formatTime(conversation.lastMessageAt)}` : ""));
  return h("li", {}, button);
}

async function openConversation(conversationId) {
  const loaded = await attempt("Conversation", async () => {
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
    h("span", { class: "badge warn", title: "Contato informado no chat do site, ainda não verificado" },
      "não verificado"),
    claimed ? ` ${claimed} (informado pelo visitante)` : "");
}

function renderPane(contact) {
  const c = state.selected;
  clear(pane(), h("article", { "aria-labelledby": "conversation-title", class: "conversation" },
    h("header", { class: "conversation-head" },
      h("h2", { id: "conversation-title", tabindex: "-1" }, contact.name),
      identityLine(contact)),
    h("p", { id: "conversation-state", class: "conversation-state" }),
    h("section", { "aria-labelledby": "handoff-title", class: "panel" },
      h("h3", { id: "handoff-title" }, "Hand-off"),
      h("div", { class: "row" },
        h("label", { for: "assign-user" }, "Assign to"),
        h("select", { id: "assign-user" }, option("", "Choose a user"),
          [...state.users.values()].map((u) => option(u.id, u.name))),
        h("button", { type: "button", onclick: assign }, "Assign")),
      state.departments.size ? h("div", { class: "row" },
        h("label", { for: "assign-department" }, "Department"),
        h("select", { id: "assign-department" }, option("", "Choose a department"),
          [...state.departments.values()].map((d) => option(d.id, d.name))),
        h("button", { type: "button", class: "secondary", onclick: assignDepartment },
          "Send to department")) : null,
      h("div", { class: "row" },
        h("label", { for: "conversation-priority" }, "Priority"),
        h("select", { id: "conversation-priority" },
          ["LOW", "MEDIUM", "HIGH"].map((p) => option(p, p.toLowerCase(), p === c.priority))),
        h("button", { type: "button", class: "secondary", onclick: changePriority },
          "Set priority")),
      h("div", { class: "row" },
        h("button", { type: "button", class: "secondary", onclick: endHumanSupport },
          "End human support"),
        h("button", { type: "button", class: "secondary", id: "toggle-status", onclick: toggleStatus }))),
    h("section", { "aria-labelledby": "tags-title", class: "panel" },
      h("h3", { id: "tags-title" }, "Tags"),
      h("ul", { id: "conversation-tags", class: "tag-list" }),
      h("div", { class: "row" },
        h("label", { for: "add-tag" }, "Add tag"),
        h("select", { id: "add-tag" }),
        h("button", { type: "button", onclick: addTag }, "Add tag"))),
    h("section", { "aria-labelledby": "messages-title", class: "panel" },
      h("div", { class: "row spread" },
        h("h3", { id: "messages-title" }, "Messages"),
        h("button", { type: "button", class: "secondary", onclick: () => loadMessages(1) }, "Refresh")),
      h("button", {
        type: "button", class: "secondary", id: "older-messages", hidden: true,
        onclick: () => loadMessages(state.messagePage + 1),
      }, "Load older messages"),
      h("ol", { id: "message-list", class: "message-list", "aria-live": "polite" }),
      h("form", { id: "reply-form", class: "compose", onsubmit: reply },
        h("label", { for: "reply-text" }, "Reply"),
        h("textarea", { id: "reply-text", rows: "3", maxlength: "4096", required: true }),
        h("button", { type: "submit" }, "Send reply"))),
    h("section", { "aria-labelledby": "notes-title", class: "panel" },
      h("h3", { id: "notes-title" }, "Private notes"),
      h("ul", { id: "note-list", class: "note-list" }),
      h("form", { id: "note-form", class: "compose", onsubmit: addNote },
        h("label", { for: "note-text" }, "Add a note (operators only)"),
        h("textarea", { id: "note-text", rows: "2", maxlength: "10000", required: true }),
        h("button", { type: "submit", class: "secondary" }, "Add note")))));
  fillState();
}

function fillState() {
  const c = state.selected;
  const assignee = c.assignedUserId
    ? (state.users.get(c.assignedUserId)?.name ?? c.assignedUserId) : "nobody (flow or queue)";
  const department = c.departmentId
    ? ` · department ${state.departments.get(c.departmentId)?.name ?? c.departmentId}` : "";
  clear(document.getElementById("conversation-state"),
    badge(c.status, c.status === "OPEN" ? "ok" : "muted"), " ",
    `${c.priority.toLowerCase()} priority · assigned to ${assignee}${department}`);
  document.getElementById("toggle-status").textContent =
    c.status === "OPEN" ? "Close conversation" : "Reopen conversation";
  const assigned = new Set(c.tags.map((t) => t.id));
  const tagList = document.getElementById("conversation-tags");
  clear(tagList, c.tags.length ? c.tags.map((tag) => h("li", {},
    tagChip(tag),
    h("button", {
      type: "button", class: "link", "aria-label": `Remove tag ${tag.name}`,
      onclick: () => removeTag(tag.id),
    }, "Remove"))) : h("li", { class: "muted" }, "No tags."));
  paintSwatches(tagList);
  clear(document.getElementById("add-tag"),
    state.tags.filter((t) => !assigned.has(t.id)).map((t) => option(t.id, t.name)));
}

async function changed(context, call) {
  const answer = await attempt(context, call);
  if (!answer) return;
  state.selected = answer;
  fillState();
  announce(`${context}: done.`);
  const item = list().querySelector(`[data-conversation-id="${CSS.escape(answer.id)}"] .meta`);
  if (item) item.textContent = `${answer.status.toLowerCase()} · ${answer.priority.toLowerCase()} priority`;
}

const conversationPath = () => `/conversation/${encodeURIComponent(state.selected.id)}`;

function assign() {
  const userId = document.getElementById("assign-user").value;
  if (!userId) return;
  changed("Assign", () => api("PATCH", conversationPath(), { body: { assignedUserId: userId } }));
}

function assignDepartment() {
  const departmentId = document.getElementById("assign-department").value;
  if (!departmentId) return;
  changed("Department", () => api("PATCH", conversationPath(), { body: { departmentId } }));
}

function changePriority() {
  const priority = document.getElementById("conversation-priority").value;
  changed("Priority", () => api("PATCH", conversationPath(), { body: { priority } }));
}

function endHumanSupport() {
  changed("End human support", () => api("POST", "/conversation/end-human-support", {
    body: { conversationId: state.selected.id },
  }));
}

function toggleStatus() {
  const status = state.selected.status === "OPEN" ? "CLOSED" : "OPEN";
  changed(status === "OPEN" ? "Reopen" : "Close",
    () => api("PATCH", conversationPath(), { body: { status } }));
}

function addTag() {
  const tagId = document.getElementById("add-tag").value;
  if (!tagId) return;
  changed("Add tag", () => api("POST", `${conversationPath()}/tags`, { body: { tagId } }));
}

function removeTag(tagId) {
  changed("Remove tag", () =>
    api("DELETE", `${conversationPath()}/tags/${encodeURIComponent(tagId)}`));
}

function renderMessage(message) {
  const outbound = message.direction === "OUTBOUND";
  const kind = { FAILED: "danger", READ: "ok", DELIVERED: "ok", SENT: "info" }[message.status] ?? "muted";
  return h("li", {
    class: `message ${outbound ? "outbound" : "inbound"}`, dataset: { messageId: message.id },
  },
  h("p", { class: "who" }, outbound ? "Office" : "Contact"),
  h("p", { class: "text" }, message.text ?? (message.templateName
    ? `Template ${message.templateName}` : message.mediaUrl ?? "")),
  h("p", { class: "meta" }, formatTime(message.createdAt), " ",
    badge(message.status, kind)),
  message.error ? h("p", { class: "error-text" }, message.error) : null);
}

async function loadMessages(page) {
  const answer = await attempt("Messages", () => api("GET", `${conversationPath()}/messages`, {
    query: { page, limit: MESSAGE_PAGE },
  }));
  if (!answer) return;
  state.messagePage = page;
  const box = document.getElementById("message-list");
  const items = answer.data.slice().reverse().map(renderMessage);
  if (page === 1) clear(box, items);
  else box.prepend(...items);
  if (!box.children.length) box.append(h("li", { class: "muted" }, "No messages yet."));
  document.getElementById("older-messages").hidden = page >= answer.totalPages;
  if (page === 1 && answer.data.some((m) => m.direction === "INBOUND")) {
    // The operator has read the conversation: the client sees the blue ticks. A failure
    // here must not hide the messages, so it is only logged.
    api("POST", `${conversationPath()}/read`).catch((error) => console.warn("read mark", error));
  }
}

async function reply(event) {
  event.preventDefault();
  const field = document.getElementById("reply-text");
  const text = field.value.trim();
  if (!text) return;
  const message = await attempt("Reply", () =>
    api("POST", `${conversationPath()}/messages`, { body: { text } }));
  if (!message) return;
  field.value = "";
  const box = document.getElementById("message-list");
  box.querySelector(".muted")?.remove();
  box.append(renderMessage(message));
  announce(`Reply stored: ${message.status}.`);
}

async function loadNotes() {
  const notes = await attempt("Notes", () => api("GET", "/conversation/notes", {
    query: { conversationId: state.selected.id, limit: 50 },
  }));
  if (!notes) return;
  clear(document.getElementById("note-list"), notes.data.length
    ? notes.data.map(renderNote) : h("li", { class: "muted" }, "No notes."));
}

function renderNote(note) {
  const author = note.userId ? (state.users.get(note.userId)?.name ?? note.userId) : null;
  return h("li", { class: "note", dataset: { noteId: note.id } },
    h("p", {}, note.text),
    h("p", { class: "meta" }, formatTime(note.createdAt), author ? ` · ${author}` : ""));
}

async function addNote(event) {
  event.preventDefault();
  const field = document.getElementById("note-text");
  const text = field.value.trim();
  if (!text) return;
  const note = await attempt("Note", () => api("POST", "/conversation/note", {
    body: { conversationId: state.selected.id, text },
  }));
  if (!note) return;
  field.value = "";
  const box = document.getElementById("note-list");
  box.querySelector(".muted")?.remove();
  box.prepend(renderNote(note));
  announce("Note added.");
}
