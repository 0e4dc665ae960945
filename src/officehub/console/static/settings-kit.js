// The settings pages' shared parts (issue 42): a page frame, a table of records, a form
// whose fields are described by data, and the API's refusals said in Portuguese next to
// the field a 400 names. Every write a role cannot make is left out (kit.auth.TAG_ROLES):
// the page offers only what the API would accept from the signed-in person.

import { html, render, useEffect, useRef, useState } from "./html.js";
import { formatDateTime, t } from "./i18n.js";
import { announce, clearError, showError } from "./ui.js";

export const ADMINS = ["ADMIN"];
export const MANAGERS = ["ADMIN", "SUPERVISOR"];
export const EVERYONE = ["ADMIN", "SUPERVISOR", "AGENT"];

let actor = null;

/** The app tells who signed in ({role, user} or null for an API key). */
export function setActor(me) {
  actor = me;
}

/** Whether the signed-in person's role is one of `roles`; a key's scopes decide for a key
 * (the API refuses what they lack, said as any refusal). */
export function can(roles) {
  return !actor?.role || roles.includes(actor.role);
}

/** dd/mm/aaaa of an ISO date or time (the calendar day as written: dates carry no zone). */
export function formatDay(iso) {
  if (!iso) return "—";
  const [year, month, day] = iso.slice(0, 10).split("-");
  return `${day}/${month}/${year}`;
}

/** dd/mm/aaaa of an ISO time, the day in the office's time zone. */
export function formatDate(iso) {
  return iso ? formatDateTime(iso).slice(0, 10) : "—";
}

/** yyyy-mm-dd of a typed dd/mm/aaaa, or null when it is not a day of the calendar. */
export function parseDay(text) {
  const found = /^\s*(\d{1,2})\/(\d{1,2})\/(\d{4})\s*$/.exec(text);
  if (!found) return null;
  const [day, month, year] = [Number(found[1]), Number(found[2]), Number(found[3])];
  const when = new Date(Date.UTC(year, month - 1, day));
  if (when.getUTCMonth() !== month - 1 || when.getUTCDate() !== day) return null;
  return `${year}-${String(month).padStart(2, "0")}-${String(day).padStart(2, "0")}`;
}

/** A list of days typed as "dd/mm/aaaa, dd/mm/aaaa"; throws a field error on a bad one. */
export function parseDays(text, field) {
  const days = [];
  for (const piece of (text ?? "").split(/[,;\s]+/).filter(Boolean)) {
    const day = parseDay(piece);
    if (!day) throw new FieldError(field, t("settings.badDate", { value: piece }));
    days.push(day);
  }
  return days;
}

/** A refusal of the page itself (before the API is asked), shown at its field. */
export class FieldError extends Error {
  constructor(field, message) {
    super(message);
    this.field = field;
  }
}

// pydantic's reasons (the API's details, "body.name: String should have at least 1
// character") turned into the catalogue's sentences.
const REASONS = [
  [/field required|missing/i, "settings.reason.required"],
  [/at least 1 character|at least 1 item/i, "settings.reason.required"],
  [/should have at most|too long/i, "settings.reason.tooLong"],
  [/should have at least/i, "settings.reason.tooShort"],
  [/pattern|valid url|url/i, "settings.reason.format"],
  [/greater than|less than|multiple of/i, "settings.reason.range"],
  [/valid integer|valid number|parsing/i, "settings.reason.number"],
  [/input should be|enum|literal/i, "settings.reason.choice"],
  [/time zone/i, "settings.reason.zone"],
  [/origin/i, "settings.reason.origin"],
];

function reasonSentence(reason) {
  for (const [pattern, key] of REASONS) if (pattern.test(reason)) return t(key);
  return t("settings.reason.other");
}

/** The form's messages by field name from a 400's details ("body.a.b: reason; …"): the
 * first part of the path after "body" names the field; unknown paths go to "". */
export function fieldErrors(error, names) {
  const found = {};
  if (!error || error.status !== 400 || !error.details) return found;
  for (const part of String(error.details).split("; ")) {
    const at = part.indexOf(": ");
    if (at < 0) continue;
    const path = part.slice(0, at).split(".").filter((piece) => piece !== "body");
    const reason = part.slice(at + 2);
    const name = path.find((piece) => names.includes(piece)) ?? "";
    if (!(name in found)) found[name] = reasonSentence(reason);
  }
  return found;
}

/** A page: its title, a way back to the settings index, the intro and its parts. */
export function Page({ id, title, intro, back = true, children }) {
  return html`
    ${back ? html`<p class="settings-back"><a href="#settings">${t("settings.back")}</a></p>` : null}
    <h1 id=${`${id}-title`} tabindex="-1">${title}</h1>
    ${intro ? html`<p class="hint">${intro}</p>` : null}
    ${children}`;
}

/** Draws `component` in a view's section and puts the focus on its title. */
export function mount(section, component) {
  render(component, section);
  section.querySelector("h1")?.focus({ preventScroll: true });
}

function choices(field, values) {
  return typeof field.options === "function" ? field.options(values) : field.options ?? [];
}

/** One field of a form, drawn from its description:
 * {name, label, type: text|textarea|number|color|select|checks|checkbox|time|days|password,
 *  options: [{value, label}] (or a function of the values), hint, required, showIf(values)}. */
let fieldCount = 0;

export function Field({ field, value, error, onChange, values }) {
  // Preact's useId starts again in every render root (each view is one): ids of our own.
  const [id] = useState(() => { fieldCount += 1; return `settings-field-${fieldCount}`; });
  const hintId = `${id}-hint`;
  const errorId = `${id}-error`;
  const described = [field.hint ? hintId : null, error ? errorId : null].filter(Boolean).join(" ") || undefined;
  const common = {
    id, name: field.name, "aria-describedby": described, "aria-invalid": error ? "true" : undefined,
  };
  let control;
  if (field.type === "textarea") {
    control = html`<textarea ...${common} rows=${field.rows ?? 3} required=${field.required}
      value=${value ?? ""} onInput=${(e) => onChange(e.target.value)}></textarea>`;
  } else if (field.type === "select") {
    control = html`<select ...${common} required=${field.required}
      onChange=${(e) => onChange(e.target.value)}>
      ${choices(field, values).map((o) => html`<option value=${o.value} selected=${String(value ?? "") === String(o.value)}>${o.label}</option>`)}
    </select>`;
  } else if (field.type === "checkbox") {
    return html`<div class="settings-field settings-check">
      <label><input type="checkbox" ...${common} checked=${Boolean(value)}
        onChange=${(e) => onChange(e.target.checked)} /> ${field.label}</label>
      ${field.hint ? html`<p class="hint" id=${hintId}>${field.hint}</p>` : null}
      ${error ? html`<p class="field-error" id=${errorId}>${error}</p>` : null}
    </div>`;
  } else if (field.type === "checks") {
    const chosen = new Set(value ?? []);
    return html`<fieldset class="settings-field settings-checks" aria-describedby=${described}>
      <legend>${field.label}</legend>
      ${choices(field, values).map((o) => html`<label class="check"><input type="checkbox"
        name=${field.name} value=${o.value} checked=${chosen.has(o.value)}
        onChange=${(e) => {
          const next = new Set(chosen);
          if (e.target.checked) next.add(o.value); else next.delete(o.value);
          onChange(choices(field, values).map((c) => c.value).filter((v) => next.has(v)));
        }} /> ${o.label}</label>`)}
      ${field.hint ? html`<p class="hint" id=${hintId}>${field.hint}</p>` : null}
      ${error ? html`<p class="field-error" id=${errorId}>${error}</p>` : null}
    </fieldset>`;
  } else {
    const type = { days: "text", number: "number", color: "color", time: "time", password: "password" }[field.type] ?? "text";
    control = html`<input ...${common} type=${type} required=${field.required}
      inputmode=${field.type === "days" ? "numeric" : undefined}
      placeholder=${field.type === "days" ? t("settings.dayPlaceholder") : undefined}
      autocomplete=${field.type === "password" ? "new-password" : "off"}
      min=${field.min} max=${field.max} step=${field.step}
      value=${value ?? ""} onInput=${(e) => onChange(e.target.value)} />`;
  }
  return html`<div class=${field.wide ? "settings-field wide" : "settings-field"}>
    <label for=${id}>${field.label}</label>
    ${control}
    ${field.hint ? html`<p class="hint" id=${hintId}>${field.hint}</p>` : null}
    ${error ? html`<p class="field-error" id=${errorId}>${error}</p>` : null}
  </div>`;
}

/** A form of `fields`; `submit(values)` calls the API. A 400 puts its sentences at the
 * fields it names (and the notice above says the code); a field error of the page itself
 * (FieldError) too. */
export function Form({ fields, initial, submit, submitLabel, onCancel, label, grid = false }) {
  const [values, setValues] = useState(initial);
  const [errors, setErrors] = useState({});
  const [busy, setBusy] = useState(false);
  // Another record opened in the same form: its values. Not on the first render (the
  // effect runs after the paint, and would wipe what a quick person already typed).
  const shownInitial = useRef(initial);
  useEffect(() => {
    if (shownInitial.current === initial) return;
    shownInitial.current = initial;
    setValues(initial);
    setErrors({});
  }, [initial]);
  const shown = fields.filter((f) => !f.showIf || f.showIf(values));
  async function onSubmit(event) {
    event.preventDefault();
    setBusy(true);
    clearError();
    try {
      await submit(values);
      setErrors({});
    } catch (error) {
      if (error instanceof FieldError) {
        setErrors({ [error.field]: error.message });
      } else {
        const found = fieldErrors(error, shown.map((f) => f.apiName ?? f.name));
        const byField = {};
        for (const [name, sentence] of Object.entries(found)) {
          const field = shown.find((f) => (f.apiName ?? f.name) === name);
          byField[field ? field.name : ""] = sentence;
        }
        setErrors(byField);
        showError(error, label);
      }
    } finally {
      setBusy(false);
    }
  }
  return html`<form class=${grid ? "settings-form settings-grid" : "settings-form"} onSubmit=${onSubmit} aria-label=${label}>
    ${shown.map((field) => html`<${Field} key=${field.name} field=${field} values=${values}
      value=${values[field.name]} error=${errors[field.name]}
      onChange=${(v) => setValues((old) => ({ ...old, [field.name]: v }))} />`)}
    ${errors[""] ? html`<p class="field-error">${errors[""]}</p>` : null}
    <div class="settings-actions">
      <button type="submit" disabled=${busy}>${submitLabel ?? t("settings.save")}</button>
      ${onCancel ? html`<button type="button" class="secondary" onClick=${onCancel}>${t("settings.cancel")}</button>` : null}
    </div>
  </form>`;
}

/** A list of records with create, edit and delete.
 * props: caption, load() → items, columns [{label, value(item)}], fields, blank() → values,
 * valuesOf(item) → values, create(values), update(item, values), remove(item),
 * writeRoles (who may create and edit), deleteRoles (default writeRoles), editable(item),
 * nameOf(item), details(item, reload) → more under the row, editFields (default fields),
 * reloadKey (a change reloads). */
export function RecordTable(props) {
  const {
    caption, load, columns, fields, blank, valuesOf, create, update, remove, nameOf,
    writeRoles = ADMINS, deleteRoles = writeRoles, editable = () => true, details,
    editFields = fields, reloadKey, addLabel,
  } = props;
  const [items, setItems] = useState(null);
  const [mode, setMode] = useState(null); // null | {create: true} | {item}
  const [confirming, setConfirming] = useState(null);
  const [formValues, setFormValues] = useState(null);
  const loads = useRef(0);  // a later reload wins over an answer still coming
  async function reload() {
    const ticket = ++loads.current;
    try {
      const found = await load();
      if (ticket === loads.current) setItems(found);
    } catch (error) {
      if (ticket !== loads.current) return;
      setItems([]);
      showError(error, caption);
    }
  }
  useEffect(() => { reload(); }, [reloadKey]);
  const mayWrite = can(writeRoles) && (create || update);
  const mayDelete = can(deleteRoles) && remove;
  function openCreate() {
    setConfirming(null);
    setFormValues(blank());
    setMode({ create: true });
  }
  function openEdit(item) {
    setConfirming(null);
    setFormValues(valuesOf(item));
    setMode({ item });
  }
  async function submit(values) {
    // the list is read again before the change is announced: what follows sees it
    if (mode.create) await create(values);
    else await update(mode.item, values);
    const done = mode.create ? t("settings.created") : t("settings.saved");
    setMode(null);
    await reload();
    announce(done);
  }
  async function reallyRemove(item) {
    try {
      clearError();
      await remove(item);
      setConfirming(null);
      await reload();
      announce(t("settings.deleted", { name: nameOf(item) }));
    } catch (error) {
      showError(error, t("settings.delete"));
    }
  }
  const withActions = (mayWrite && update) || mayDelete;
  return html`<div class="settings-records">
    ${mayWrite && create && !mode ? html`<div class="toolbar">
      <button type="button" onClick=${openCreate}>${addLabel ?? t("settings.add")}</button></div>` : null}
    ${mode ? html`<section class="settings-editor" aria-label=${mode.create ? addLabel ?? t("settings.add") : t("settings.editing", { name: nameOf(mode.item) })}>
      <h2>${mode.create ? addLabel ?? t("settings.add") : t("settings.editing", { name: nameOf(mode.item) })}</h2>
      <${Form} fields=${mode.create ? fields : editFields} initial=${formValues} submit=${submit}
        label=${mode.create ? addLabel ?? t("settings.add") : t("settings.editing", { name: nameOf(mode.item) })}
        onCancel=${() => setMode(null)} />
    </section>` : null}
    <div class="table-scroll">
      <table class="data settings-table">
        <caption>${caption}</caption>
        <thead><tr>
          ${columns.map((c) => html`<th scope="col">${c.label}</th>`)}
          ${withActions ? html`<th scope="col">${t("settings.actions")}</th>` : null}
        </tr></thead>
        <tbody>
          ${items === null ? html`<tr><td colspan=${columns.length + 1} class="muted">${t("settings.loading")}</td></tr>` : null}
          ${items && items.length === 0 ? html`<tr><td colspan=${columns.length + 1} class="muted">${t("settings.none")}</td></tr>` : null}
          ${(items ?? []).map((item) => html`<tr key=${item.id} data-id=${item.id}>
            ${columns.map((c) => html`<td class=${c.class} data-label=${c.label}>${c.value(item)}</td>`)}
            ${withActions ? html`<td class="actions">
              ${mayWrite && update && editable(item) ? html`<button type="button" class="secondary"
                aria-label=${t("settings.editNamed", { name: nameOf(item) })}
                onClick=${() => openEdit(item)}>${t("settings.edit")}</button>` : null}
              ${mayDelete && editable(item) && confirming !== item.id ? html`<button type="button" class="secondary"
                aria-label=${t("settings.deleteNamed", { name: nameOf(item) })}
                onClick=${() => setConfirming(item.id)}>${t("settings.delete")}</button>` : null}
              ${confirming === item.id ? html`<span class="settings-confirm">
                <button type="button" class="danger" onClick=${() => reallyRemove(item)}>${t("settings.confirmDelete")}</button>
                <button type="button" class="secondary" onClick=${() => setConfirming(null)}>${t("settings.cancel")}</button>
              </span>` : null}
            </td>` : null}
          </tr>
          ${details ? html`<tr class="settings-details" key=${`${item.id}-details`}><td colspan=${columns.length + (withActions ? 1 : 0)}>${details(item, reload)}</td></tr>` : null}`)}
        </tbody>
      </table>
    </div>
  </div>`;
}

/** A setting edited as one form (no list): `load()` gives the values, `save(values)` puts
 * them; read-only (the values shown) for a role that may not change it. */
export function SettingForm({ load, save, fields, writeRoles = ADMINS, label, view, grid = false }) {
  const [values, setValues] = useState(null);
  async function reload() {
    try {
      setValues(await load());
    } catch (error) {
      showError(error, label);
    }
  }
  useEffect(() => { reload(); }, []);
  if (values === null) return html`<p class="muted">${t("settings.loading")}</p>`;
  if (!can(writeRoles)) {
    return html`<p class="hint">${t("settings.readOnly")}</p>${view ? view(values) : null}`;
  }
  return html`<${Form} fields=${fields} initial=${values} label=${label} grid=${grid}
    submit=${async (v) => { await save(v); await reload(); announce(t("settings.saved")); }} />`;
}

/** `work()`'s answer, or undefined when it was refused (the refusal said in the notice,
 * `context` naming what was tried): the rules' and flows' pages' calls. */
export async function attempt(context, work) {
  clearError();
  try {
    return await work();
  } catch (error) {
    showError(error, context);
    return undefined;
  }
}

/** A labelled list of the office's records ({id, name}) to choose one from: the first
 * option is `empty` (its value ""), `onChange` gets the chosen id or "". */
export function RecordSelect({ id, label, value, records, empty, required = false, onChange }) {
  return html`
    <label for=${id}>${label}</label>
    <select id=${id} value=${value ?? ""} required=${required}
            onChange=${(event) => onChange(event.currentTarget.value)}>
      ${empty === null ? null : html`<option value="">${empty}</option>`}
      ${records.map((r) => html`<option value=${r.id}>${r.name}</option>`)}
    </select>`;
}
