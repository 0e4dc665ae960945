// "Pessoas": the office's users and their invitations. Everyone sees the team (name,
// email, role, inboxes, whether active); an administrator (the role ADMIN with the admin
// scope, or an API key holding it) also creates people with their role and inboxes, changes
// them, deactivates or reactivates them, and makes the invitation or new-password link to
// copy. Nobody else is offered a write: the API would refuse it (docs/security.md).

import { api, listAll } from "./api.js";
import { html, render, useEffect, useState } from "./html.js";
import { formatDateTime, t } from "./i18n.js";
import { announce, clearError, showError } from "./ui.js";

const ROLES = ["AGENT", "SUPERVISOR", "ADMIN"];
const state = { me: null };

export function signedIn(me) {
  state.me = me;
}

export function reset() {
  state.me = null;
  const root = document.getElementById("view-users");
  if (root) render(null, root);
}

export async function show(element) {
  let me = null;
  try {
    me = await api("GET", "/me");
  } catch (error) {
    showError(error, t("users.title"));
    return;
  }
  render(null, element);
  render(html`<${People} me=${me} />`, element);
  const title = element.querySelector("h1");
  title?.setAttribute("tabindex", "-1");
  title?.focus({ preventScroll: true });
}

/** Whether the caller may manage people: the admin scope, and for a user the role ADMIN. */
function manages(me) {
  return me.scopes.includes("admin") && (me.kind === "apikey" || me.role === "ADMIN");
}

async function attempt(context, work) {
  clearError();
  try {
    return await work();
  } catch (error) {
    showError(error, context);
    return undefined;
  }
}

function People({ me }) {
  const admin = manages(me);
  const [people, setPeople] = useState(null);
  const [inboxes, setInboxes] = useState([]);
  const [search, setSearch] = useState("");
  const [editing, setEditing] = useState(null);
  const [link, setLink] = useState(null);

  async function load(query = search) {
    const found = await attempt(t("users.title"), () =>
      listAll("/user", { search: query || undefined }));
    if (found) setPeople(found);
  }

  useEffect(() => {
    load("");
    attempt(t("users.inboxes"), () => listAll("/inbox")).then((found) => setInboxes(found ?? []));
  }, []);

  async function makeLink(person, purpose) {
    const answer = await attempt(t(purpose === "invite" ? "users.invite" : "users.reset"), () =>
      (purpose === "invite"
        ? api("POST", `/user/${person.id}/invite`)
        : api("POST", "/auth/password-reset", { body: { userId: person.id } })));
    if (!answer) return;
    setLink({
      name: person.name,
      url: answer.inviteUrl ?? answer.resetUrl,
      expiresAt: answer.expiresAt,
    });
  }

  async function created(person) {
    setEditing(null);
    announce(t("users.created", { name: person.name }));
    await load();
    await makeLink(person, "invite");
  }

  async function saved(person) {
    setEditing(null);
    announce(t("users.saved", { name: person.name }));
    await load();
  }

  async function setActive(person, active) {
    if (!active && !window.confirm(t("users.confirmDeactivate", { name: person.name }))) return;
    const answer = await attempt(t(active ? "users.reactivate" : "users.deactivate"), () =>
      api("PATCH", `/user/${person.id}`, { body: { isActive: active } }));
    if (!answer) return;
    announce(t(active ? "users.reactivated" : "users.deactivated", { name: person.name }));
    await load();
  }

  const inboxName = new Map(inboxes.map((inbox) => [inbox.id, inbox.name]));
  return html`
    <h1 id="users-title">${t("users.title")}</h1>
    <p class="hint">${t(admin ? "users.hintAdmin" : "users.hintReadOnly")}</p>
    <form class="toolbar" role="search" onSubmit=${(event) => { event.preventDefault(); load(); }}>
      <label for="users-search">${t("users.search")}</label>
      <input id="users-search" type="search" value=${search} maxlength="200"
             onInput=${(event) => setSearch(event.currentTarget.value)} />
      <button type="submit" class="secondary">${t("users.searchButton")}</button>
      ${admin && editing === null && html`
        <button type="button" onClick=${() => { setLink(null); setEditing("new"); }}>
          ${t("users.new")}</button>`}
    </form>
    ${link && html`<${LinkBox} link=${link} close=${() => setLink(null)} />`}
    ${admin && editing !== null && html`
      <${PersonForm} person=${editing === "new" ? null : editing} inboxes=${inboxes}
        done=${editing === "new" ? created : saved} cancel=${() => setEditing(null)} />`}
    ${people && html`
      <p class="summary">${t("users.count", { count: people.length })}</p>
      ${people.length === 0 && html`<p class="empty">${t("users.empty")}</p>`}
      ${people.length > 0 && html`
        <table class="data people stacked">
          <caption class="visually-hidden">${t("users.caption")}</caption>
          <thead><tr>
            <th scope="col">${t("users.name")}</th>
            <th scope="col">${t("users.email")}</th>
            <th scope="col">${t("users.role")}</th>
            <th scope="col">${t("users.inboxes")}</th>
            <th scope="col">${t("users.state")}</th>
            ${admin && html`<th scope="col">${t("users.actions")}</th>`}
          </tr></thead>
          <tbody>
            ${people.map((person) => html`
              <tr key=${person.id} data-user-id=${person.id}>
                <th scope="row" data-label=${t("users.name")}>
                  ${person.name}${person.id === me.id ? ` ${t("users.you")}` : ""}</th>
                <td data-label=${t("users.email")} class="email">${person.email}</td>
                <td data-label=${t("users.role")}>${t(`role.${person.role}`)}</td>
                <td data-label=${t("users.inboxes")}>
                  ${person.inboxIds.length
                    ? person.inboxIds.map((id) => inboxName.get(id) ?? id).join(", ")
                    : t("users.noInboxes")}</td>
                <td data-label=${t("users.state")}><${State} person=${person} /></td>
                ${admin && html`
                  <td data-label=${t("users.actions")} class="actions">
                    <button type="button" class="secondary"
                            aria-label=${`${t("users.edit")}: ${person.name}`}
                            onClick=${() => { setLink(null); setEditing(person); }}>
                      ${t("users.edit")}</button>
                    ${person.isActive && html`
                      <button type="button" class="secondary"
                              aria-label=${`${t(person.hasPassword ? "users.reset" : "users.invite")}: ${person.name}`}
                              onClick=${() => makeLink(person, person.hasPassword ? "reset" : "invite")}>
                        ${t(person.hasPassword ? "users.reset" : "users.invite")}</button>`}
                    ${person.id !== me.id && html`
                      <button type="button" class="secondary"
                              aria-label=${`${t(person.isActive ? "users.deactivate" : "users.reactivate")}: ${person.name}`}
                              onClick=${() => setActive(person, !person.isActive)}>
                        ${t(person.isActive ? "users.deactivate" : "users.reactivate")}</button>`}
                  </td>`}
              </tr>`)}
          </tbody>
        </table>`}`}`;
}

function State({ person }) {
  if (!person.isActive) return html`<span class="badge">${t("users.inactive")}</span>`;
  if (!person.hasPassword) return html`<span class="badge warn">${t("users.pending")}</span>`;
  return html`<span class="badge ok">${t("users.active")}</span>`;
}

function PersonForm({ person, inboxes, done, cancel }) {
  const [name, setName] = useState(person?.name ?? "");
  const [email, setEmail] = useState(person?.email ?? "");
  const [role, setRole] = useState(person?.role ?? "AGENT");
  const [chosen, setChosen] = useState(new Set(person?.inboxIds ?? []));
  const [busy, setBusy] = useState(false);
  const heading = person ? t("users.editTitle", { name: person.name }) : t("users.new");

  function toggle(id, on) {
    const next = new Set(chosen);
    if (on) next.add(id);
    else next.delete(id);
    setChosen(next);
  }

  async function submit(event) {
    event.preventDefault();
    setBusy(true);
    const body = { name: name.trim(), email: email.trim(), role, inboxIds: [...chosen] };
    const answer = await attempt(heading, () =>
      (person ? api("PATCH", `/user/${person.id}`, { body }) : api("POST", "/user", { body })));
    setBusy(false);
    if (answer) await done(answer);
  }

  return html`
    <section class="person-form" aria-labelledby="person-form-title">
      <h2 id="person-form-title">${heading}</h2>
      <form class="login" onSubmit=${submit}>
        <label for="person-name">${t("users.name")}</label>
        <input id="person-name" value=${name} required maxlength="200" autocomplete="off"
               onInput=${(event) => setName(event.currentTarget.value)} />
        <label for="person-email">${t("users.email")}</label>
        <input id="person-email" type="email" value=${email} required maxlength="320"
               autocomplete="off" spellcheck=${false}
               onInput=${(event) => setEmail(event.currentTarget.value)} />
        <label for="person-role">${t("users.role")}</label>
        <select id="person-role" value=${role} aria-describedby="person-role-help"
                onChange=${(event) => setRole(event.currentTarget.value)}>
          ${ROLES.map((value) => html`<option value=${value}>${t(`role.${value}`)}</option>`)}
        </select>
        <p id="person-role-help" class="hint">${t(`users.roleHelp.${role}`)}</p>
        <fieldset class="inbox-choice">
          <legend>${t("users.inboxes")}</legend>
          ${inboxes.length === 0 && html`<p class="hint">${t("users.noInboxesYet")}</p>`}
          ${inboxes.length > 0 && html`<p class="hint">${t("users.inboxesHint")}</p>`}
          ${inboxes.map((inbox) => html`
            <label class="check" key=${inbox.id}>
              <input type="checkbox" value=${inbox.id} checked=${chosen.has(inbox.id)}
                     onChange=${(event) => toggle(inbox.id, event.currentTarget.checked)} />
              <span>${inbox.name}</span>
            </label>`)}
        </fieldset>
        <div class="row">
          <button type="submit" disabled=${busy}>${t(person ? "users.save" : "users.create")}</button>
          <button type="button" class="secondary" onClick=${cancel}>${t("users.cancel")}</button>
        </div>
      </form>
    </section>`;
}

function LinkBox({ link, close }) {
  async function copy() {
    try {
      await navigator.clipboard.writeText(link.url);
      announce(t("users.copied"));
    } catch {
      document.getElementById("user-link")?.select();
      announce(t("users.copyFailed"));
    }
  }
  return html`
    <section class="link-box" aria-labelledby="user-link-title">
      <h2 id="user-link-title">${t("users.linkTitle", { name: link.name })}</h2>
      <p>${t("users.linkText", { name: link.name, expires: formatDateTime(link.expiresAt) })}</p>
      <label for="user-link">${t("users.linkLabel")}</label>
      <input id="user-link" class="link-url" readonly value=${link.url}
             onFocus=${(event) => event.currentTarget.select()} />
      <div class="row">
        <button type="button" onClick=${copy}>${t("users.copy")}</button>
        <button type="button" class="secondary" onClick=${close}>${t("users.closeLink")}</button>
      </div>
    </section>`;
}
