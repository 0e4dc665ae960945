// The clients page: a searchable list of the office's clients (GET /people: name, phone or
// WhatsApp username) opening the same client's file as the inbox (client-file.js).

import { api } from "./api.js";
import { html, render } from "./html.js";
import { t } from "./i18n.js";
import { announce, attempt, neutralised } from "./ui.js";
import { ClientFile } from "./client-file.js";

const PAGE_SIZE = 30;
const n = (text) => (text == null ? "" : neutralised(String(text)));
const state = { root: null, me: null, search: "", items: [], page: 1, totalPages: 1, total: 0, chosen: null, loads: 0 };
let timer = null;

function paint() {
  if (!state.root) return;
  render(html`<${Clients} />`, state.root);
  const top = state.root.getBoundingClientRect().top + window.scrollY;
  if (top > 0) state.root.style.setProperty("--inbox-top", `${Math.round(top)}px`);
}

export function reset() {
  if (state.root) render(null, state.root);
  Object.assign(state, { me: null, search: "", items: [], page: 1, totalPages: 1, total: 0, chosen: null });
}

export function signedIn(me) {
  state.me = me?.user ? me : null;
}

export async function show(view) {
  state.root = view.querySelector("#contacts-root");
  paint();
  await load(1);
}

async function load(page) {
  const ticket = ++state.loads;
  const search = state.search.trim();
  const answer = await attempt(t("contacts.title"), () => api("GET", "/people", {
    query: { page, limit: PAGE_SIZE, search: search || undefined },
  }));
  if (!answer || ticket !== state.loads) return;
  state.items = page === 1 ? answer.data : [...state.items, ...answer.data];
  state.page = page;
  state.totalPages = answer.totalPages;
  state.total = answer.totalResults;
  paint();
  announce(t("contacts.count", { count: answer.totalResults }));
}

function searched(event) {
  state.search = event.currentTarget.value;
  clearTimeout(timer);
  timer = setTimeout(() => load(1), 250);
}

function choose(id) {
  state.chosen = id;
  paint();
  if (window.matchMedia("(max-width: 64rem)").matches) state.root.scrollIntoView({ block: "start" });
  document.getElementById("file-title")?.focus?.();
}

function identity(contact) {
  if (contact.phone) return contact.phone;
  if (contact.username) return t("contact.whatsappUsername", { value: contact.username });
  return contact.email ?? contact.claimedPhone ?? "";
}

function Clients() {
  return html`<div class="clients" data-pane=${state.chosen ? "file" : "list"}>
    <section class="pane clients-list" aria-labelledby="contacts-list-title">
      <h2 id="contacts-list-title" class="visually-hidden">${t("contacts.listTitle")}</h2>
      <form class="inbox-filters" onSubmit=${(e) => { e.preventDefault(); load(1); }}>
        <label for="contacts-search">${t("contacts.search")}</label>
        <input id="contacts-search" type="search" value=${state.search} onInput=${searched}
          placeholder=${t("contacts.searchPlaceholder")} />
      </form>
      <p class="muted">${t("contacts.count", { count: state.total })}</p>
      <ul class="conversation-list" id="contact-list">
        ${state.items.length ? state.items.map((contact) => html`<li key=${contact.id}>
          <button type="button" class="conversation-item contact-item" data-person-id=${contact.id}
            aria-current=${contact.id === state.chosen ? "true" : null} onClick=${() => choose(contact.id)}>
            <span class="line first"><span class="name">${n(contact.name)}</span></span>
            <span class="line second"><span class="preview">${n(identity(contact))}</span></span>
          </button></li>`) : html`<li class="empty">${t("contacts.none")}</li>`}
      </ul>
      ${state.page < state.totalPages ? html`<button type="button" class="secondary"
        onClick=${() => load(state.page + 1)}>${t("common.loadMore")}</button>` : null}
    </section>
    <div class="pane clients-file">
      ${state.chosen ? html`<${ClientFile} personId=${state.chosen} me=${state.me}
          onBack=${() => { state.chosen = null; paint(); load(1); }}
          onOpenConversation=${() => { location.hash = "#conversations"; }} />`
        : html`<p class="empty">${t("contacts.choose")}</p>`}
    </div>
  </div>`;
}
