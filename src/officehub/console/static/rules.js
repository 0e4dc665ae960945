// "Automações": the office's automation rules (an ADMIN's page: the API's "Automation
// rules" are the admins' alone). A rule is a trigger (an event of the catalogue), optional
// conditions, the actions done when they hold and, with conditions, the actions done when
// they do not. Every id a condition or an action takes is chosen from a list of the
// office's own records (columns, people, departments, tags, legal areas, fast messages,
// ticket statuses, channels, the APPROVED templates of the official channels with their
// language; a webhook's method from the five the API takes). A dry run shows which branch an event would take; the run
// log, what the rule did; a rule whose runs fail says so in an alert on its row and its
// form. The list is filtered by trigger (the API's filter) and by channel (on the page:
// the API does not filter by integration).

import { api, listAll } from "./api.js";
import { html, render, useEffect, useState } from "./html.js";
import { formatDateTime, has, t } from "./i18n.js";
import { RecordSelect, attempt } from "./settings-kit.js";
import { announce, clearError, showError } from "./ui.js";

const ACTIONS = [
  "SEND_FAST_MESSAGE", "SCHEDULE_MESSAGE", "MOVE_CARD", "TAG_CONVERSATION",
  "ASSIGN_LEGAL_AREA", "CREATE_TICKET", "FIRE_WEBHOOK", "PAUSE_AUTOMATION",
];
const COLUMN_KEYS = ["funnelColumnId", "fromFunnelColumnId", "toFunnelColumnId"];
const TEXT_KEYS = ["messageText", "templateName"];
const MAX_ACTIONS = 5;
const PRIORITIES = ["LOW", "MEDIUM", "HIGH"];
const METHODS = ["POST", "PUT", "PATCH", "GET", "DELETE"];

/** A webhook's headers typed one a line ("Nome: valor"), or "" for none. */
export function parseHeaders(typed) {
  const headers = {};
  for (const line of typed.split("\n")) {
    const at = line.indexOf(":");
    if (at <= 0) continue;
    headers[line.slice(0, at).trim()] = line.slice(at + 1).trim();
  }
  return Object.keys(headers).length ? headers : "";
}

function formatHeaders(headers) {
  return Object.entries(headers ?? {}).map(([name, value]) => `${name}: ${value}`).join("\n");
}

/** A chosen template's text and what fills its variables (a rule gives none: for a case
 * movement they come from the event, {{1}} the movement, {{2}} the case number, {{3}} the
 * date). */
function TemplatePreview({ chosen, fill = false }) {
  if (!chosen) return null;
  return html`
    <div class="span template-preview" data-template=${chosen.name}>
      <p class="hint">${t("rules.templateBody")} <q>${chosen.body}</q></p>
      <p class="hint">${!chosen.variables ? t("rules.templateNoVariables")
        : t(fill ? "rules.templateFill" : "rules.templateVariables", { count: chosen.variables })}</p>
    </div>`;
}

export function signedIn(me) {
  // Only an administrator may read or change rules: nobody else is shown the page.
  const link = document.querySelector('#nav a[data-view="rules"]')?.closest("li");
  if (link) link.hidden = Boolean(me?.user) && me.role !== "ADMIN";
}

export function reset() {
  const root = document.getElementById("view-rules");
  if (root) render(null, root);
}

export async function show(element) {
  render(null, element);
  render(html`<${Rules} />`, element);
  const title = element.querySelector("h1");
  title?.setAttribute("tabindex", "-1");
  title?.focus({ preventScroll: true });
}

/** The office's records a rule's conditions and actions choose from. */
async function loadChoices() {
  const safe = (work) => work.catch(() => []);
  const [events, funnels, users, departments, tags, areas, fast, statuses, channels] = await Promise.all([
    safe(api("GET", "/webhooks/events").then((answer) => answer.data)),
    safe(listAll("/funnel")),
    safe(listAll("/user")),
    safe(listAll("/department")),
    safe(listAll("/tag")),
    safe(listAll("/legal-areas")),
    safe(listAll("/fast-message")),
    safe(listAll("/ticket-statuses")),
    safe(listAll("/integration")),
  ]);
  const columns = funnels.flatMap((funnel) =>
    funnel.columns.map((column) => ({ id: column.id, name: `${funnel.name} › ${column.name}` })));
  return {
    events: events.map((event) => event.name),
    columns,
    users: users.map((user) => ({ id: user.id, name: user.name })),
    departments: departments.map((d) => ({ id: d.id, name: d.name })),
    tags: tags.map((tag) => ({ id: tag.id, name: tag.name })),
    areas: areas.map((area) => ({ id: area.id, name: area.name })),
    fast: fast.map((message) => ({ id: message.id, name: message.title })),
    statuses: statuses.map((status) => ({ id: status.id, name: status.name })),
    channels: channels.map((channel) => ({ id: channel.id, name: channel.name })),
    templates: await loadTemplates(channels),
  };
}

/** The APPROVED templates of the office's official channels (the templates API lists one
 * channel's, by its deviceId): {integrationId, name, language, body, variables}. */
async function loadTemplates(channels) {
  const official = channels.filter((c) => c.type === "WHATSAPP_OFFICIAL" && c.deviceId);
  const lists = await Promise.all(official.map((channel) =>
    api("GET", "/integration/partner/whatsapp-templates", { query: { deviceId: channel.deviceId } })
      .then((answer) => answer.data.map((template) => templateChoice(channel.id, template)))
      .catch(() => [])));
  return lists.flat();
}

function templateChoice(integrationId, template) {
  const body = template.components.find((c) => String(c.type).toUpperCase() === "BODY")?.text ?? "";
  const numbers = [...body.matchAll(/\{\{\s*(\d+)\s*\}\}/g)].map((found) => Number(found[1]));
  return {
    integrationId, name: template.name, language: template.language, body,
    variables: numbers.length ? Math.max(...numbers) : 0,
  };
}

/** The templates a rule of that channel may name (a rule of every channel: any official
 * channel's), one entry a name with its languages: the API takes the name alone. */
export function templateOptions(templates, integration) {
  const byName = new Map();
  for (const found of templates) {
    if (integration && found.integrationId !== integration) continue;
    const entry = byName.get(found.name) ?? { id: found.name, languages: [], first: found };
    if (!entry.languages.includes(found.language)) entry.languages.push(found.language);
    byName.set(found.name, entry);
  }
  return [...byName.values()]
    .sort((a, b) => a.id.localeCompare(b.id))
    .map((entry) => ({ ...entry.first, id: entry.id, name: `${entry.id} (${entry.languages.join(", ")})` }));
}

/** "Falhou N vezes; última falha em dd/mm/aaaa hh:mm: <motivo>" of a rule whose last runs
 * failed (failureCount above 0), or null. */
export function failureText(rule) {
  if (!rule.failureCount) return null;
  const last = rule.lastFailure;
  const action = last && has(`rules.action.${last.action}`) ? t(`rules.action.${last.action}`) : last?.action;
  return t("rules.failed", {
    count: rule.failureCount,
    at: last ? formatDateTime(last.at) : "—",
    reason: last ? `${action}: ${last.error}` : "—",
  });
}

function FailureAlert({ rule, runs }) {
  const text = failureText(rule);
  if (!text) return null;
  return html`
    <div class="rule-alert" role="alert" data-rule-alert=${rule.id}>
      <span>${text}</span>
      ${runs && html` <button type="button" class="link" onClick=${runs}
        aria-label=${`${t("rules.seeRuns")}: ${rule.name}`}>${t("rules.seeRuns")}</button>`}
    </div>`;
}

export function eventLabel(name) {
  return has(`rules.event.${name}`) ? t(`rules.event.${name}`) : name;
}

function Rules() {
  const [rules, setRules] = useState(null);
  const [choices, setChoices] = useState(null);
  const [editing, setEditing] = useState(null);
  const [panel, setPanel] = useState(null);
  const [trigger, setTrigger] = useState("");
  const [channel, setChannel] = useState("");

  async function load(event = trigger) {
    const query = event ? { triggerEvent: event } : undefined;
    const found = await attempt(t("rules.title"), () => listAll("/automation-rules", query));
    if (found) setRules(found);
  }

  useEffect(() => { loadChoices().then(setChoices); }, []);
  useEffect(() => { load(trigger); }, [trigger]);

  async function saved(rule, isNew) {
    setEditing(null);
    announce(t(isNew ? "rules.created" : "rules.saved", { name: rule.name }));
    for (const warning of rule.warnings ?? []) {
      announce(has(`apiError.${warning.code}`) ? t(`apiError.${warning.code}`) : warning.message);
    }
    await load();
  }

  async function remove(rule) {
    if (!window.confirm(t("rules.confirmDelete", { name: rule.name }))) return;
    const done = await attempt(t("rules.delete"), () => api("DELETE", `/automation-rules/${rule.id}`));
    if (!done) return;
    announce(t("rules.deleted", { name: rule.name }));
    setPanel(null);
    await load();
  }

  async function runs(rule) {
    const answer = await attempt(t("rules.runs"), () =>
      api("GET", `/automation-rules/${rule.id}/runs`, { query: { limit: 20 } }));
    if (answer) setPanel({ kind: "runs", rule, runs: answer.data });
  }

  // A channel's rules: those of that integration and those of every one (no integration).
  const shown = rules && rules.filter((rule) => !channel || !rule.integrationId || rule.integrationId === channel);
  const channelName = new Map((choices?.channels ?? []).map((c) => [c.id, c.name]));

  return html`
    <h1 id="rules-title">${t("rules.title")}</h1>
    <p class="hint">${t("rules.hint")}</p>
    <div class="toolbar">
      ${editing === null && html`
        <button type="button" disabled=${!choices}
                onClick=${() => { setPanel(null); setEditing("new"); }}>${t("rules.new")}</button>`}
    </div>
    ${editing !== null && choices && html`
      <${RuleForm} rule=${editing === "new" ? null : editing} choices=${choices}
        done=${saved} cancel=${() => setEditing(null)} />`}
    ${panel?.kind === "test" && choices && html`<${DryRun} key=${panel.rule.id} rule=${panel.rule} choices=${choices} close=${() => setPanel(null)} />`}
    ${panel?.kind === "runs" && html`<${RunLog} panel=${panel} close=${() => setPanel(null)} />`}
    ${choices && html`
      <div class="rule-filters" role="search" aria-label=${t("rules.filters")}>
        <label>${t("rules.filterTrigger")}
          <select value=${trigger} onChange=${(event) => setTrigger(event.currentTarget.value)}>
            <option value="">${t("rules.filterAll")}</option>
            ${choices.events.map((e) => html`<option value=${e}>${eventLabel(e)}</option>`)}
          </select></label>
        <label>${t("rules.filterChannel")}
          <select value=${channel} onChange=${(event) => setChannel(event.currentTarget.value)}>
            <option value="">${t("rules.filterAll")}</option>
            ${choices.channels.map((i) => html`<option value=${i.id}>${i.name}</option>`)}
          </select></label>
      </div>`}
    ${rules && rules.length === 0 && !trigger && html`<p class="empty">${t("rules.empty")}</p>`}
    ${shown && shown.length === 0 && (trigger || channel) && html`<p class="empty">${t("rules.noneFiltered")}</p>`}
    ${shown && shown.length > 0 && html`
      <table class="data stacked">
        <caption class="visually-hidden">${t("rules.title")}</caption>
        <thead><tr>
          <th scope="col">${t("rules.name")}</th>
          <th scope="col">${t("rules.trigger")}</th>
          <th scope="col">${t("rules.state")}</th>
          <th scope="col">${t("rules.then")}</th>
          <th scope="col">${t("rules.actions")}</th>
        </tr></thead>
        <tbody>
          ${shown.map((rule) => html`
            <tr key=${rule.id} data-rule-id=${rule.id}>
              <th scope="row" data-label=${t("rules.name")}>${rule.name}
                <${FailureAlert} rule=${rule} runs=${() => runs(rule)} /></th>
              <td data-label=${t("rules.trigger")}>${eventLabel(rule.triggerEvent)}
                ${rule.integrationId && html`<br /><span class="muted">${channelName.get(rule.integrationId) ?? rule.integrationId}</span>`}</td>
              <td data-label=${t("rules.state")}>
                <span class=${`badge ${rule.enabled ? "ok" : ""}`}>
                  ${t(rule.enabled ? "rules.enabled" : "rules.disabled")}</span></td>
              <td data-label=${t("rules.then")}>
                ${rule.actions.map((action) => t(`rules.action.${action.action}`)).join(", ")}</td>
              <td data-label=${t("rules.actions")} class="actions">
                <button type="button" class="secondary" aria-label=${`${t("rules.edit")}: ${rule.name}`}
                        onClick=${() => { setPanel(null); setEditing(rule); }}>${t("rules.edit")}</button>
                <button type="button" class="secondary" aria-label=${`${t("rules.dryRun")}: ${rule.name}`}
                        onClick=${() => setPanel({ kind: "test", rule })}>${t("rules.dryRun")}</button>
                <button type="button" class="secondary" aria-label=${`${t("rules.runs")}: ${rule.name}`}
                        onClick=${() => runs(rule)}>${t("rules.runs")}</button>
                <button type="button" class="secondary" aria-label=${`${t("rules.delete")}: ${rule.name}`}
                        onClick=${() => remove(rule)}>${t("rules.delete")}</button>
              </td>
            </tr>`)}
        </tbody>
      </table>`}`;
}

function blankAction() {
  return { action: "SEND_FAST_MESSAGE", actionParams: {} };
}

/** A rule's conditions as the form holds them (every value a string; "" is unset). */
function formConditions(conditions = {}) {
  const held = {};
  for (const key of [...COLUMN_KEYS, "assignedToUserId", "assignedToDepartmentId", ...TEXT_KEYS]) {
    held[key] = conditions[key] ?? "";
  }
  held.withinBusinessHours =
    conditions.withinBusinessHours === undefined || conditions.withinBusinessHours === null
      ? "" : String(conditions.withinBusinessHours);
  return held;
}

function bodyConditions(held) {
  const sent = {};
  for (const [key, value] of Object.entries(held)) {
    if (value === "") continue;
    sent[key] = key === "withinBusinessHours" ? value === "true" : value;
  }
  return sent;
}

function bodyActions(list) {
  return list.map(({ action, actionParams }) => {
    const params = {};
    for (const [key, value] of Object.entries(actionParams)) {
      if (value === "" || value === undefined || value === null) continue;
      params[key] = value;
    }
    return { action, actionParams: params };
  });
}

function RuleForm({ rule, choices, done, cancel }) {
  const [name, setName] = useState(rule?.name ?? "");
  const [trigger, setTrigger] = useState(rule?.triggerEvent ?? choices.events[0] ?? "");
  const [enabled, setEnabled] = useState(rule?.enabled ?? true);
  const [priority, setPriority] = useState(String(rule?.priority ?? 0));
  const [integration, setIntegration] = useState(rule?.integrationId ?? "");
  const [once, setOnce] = useState(rule?.runOncePerConversation ?? false);
  const [standAside, setStandAside] = useState(rule?.skipWhileHumanAssigned ?? false);
  const [conditions, setConditions] = useState(formConditions(rule?.conditions));
  const [actions, setActions] = useState(rule?.actions?.length ? rule.actions : [blankAction()]);
  const [elseActions, setElseActions] = useState(rule?.elseActions ?? []);
  const [busy, setBusy] = useState(false);
  const heading = rule ? t("rules.editTitle", { name: rule.name }) : t("rules.new");
  const conditional = Object.keys(bodyConditions(conditions)).length > 0;

  function setCondition(key, value) {
    setConditions({ ...conditions, [key]: value });
  }

  async function submit(event) {
    event.preventDefault();
    const body = {
      name: name.trim(),
      enabled,
      triggerEvent: trigger,
      priority: Number(priority) || 0,
      integrationId: integration || null,
      runOncePerConversation: once,
      skipWhileHumanAssigned: standAside,
      conditions: bodyConditions(conditions),
      actions: bodyActions(actions),
      elseActions: conditional && elseActions.length ? bodyActions(elseActions) : null,
    };
    setBusy(true);
    const answer = await attempt(heading, () =>
      (rule
        ? api("PATCH", `/automation-rules/${rule.id}`, { body })
        : api("POST", "/automation-rules", { body })));
    setBusy(false);
    if (answer) await done(answer, !rule);
  }

  const recordSelect = (key, records) => html`
    <${RecordSelect} id=${`rule-${key}`} label=${t(`rules.condition.${key}`)} value=${conditions[key]}
      records=${records} empty=${t("rules.any")} onChange=${(value) => setCondition(key, value)} />`;
  const columnSelect = (key) => recordSelect(key, choices.columns);
  // the template a sent message used: one of the channel's APPROVED ones (a rule saved
  // with another keeps it listed)
  const conditionTemplates = templateOptions(choices.templates, integration);
  if (conditions.templateName && !conditionTemplates.some((found) => found.id === conditions.templateName)) {
    conditionTemplates.push({ id: conditions.templateName, name: conditions.templateName });
  }

  return html`
    <section class="rule-form" aria-labelledby="rule-form-title">
      <h2 id="rule-form-title">${heading}</h2>
      ${rule && html`<${FailureAlert} rule=${rule} />`}
      <form onSubmit=${submit}>
        <div class="form-grid">
          <label for="rule-name">${t("rules.name")}</label>
          <input id="rule-name" value=${name} required maxlength="100"
                 onInput=${(event) => setName(event.currentTarget.value)} />
          <label for="rule-trigger">${t("rules.trigger")}</label>
          <select id="rule-trigger" value=${trigger}
                  onChange=${(event) => setTrigger(event.currentTarget.value)}>
            ${choices.events.map((e) => html`<option value=${e}>${eventLabel(e)}</option>`)}
          </select>
          <label for="rule-priority">${t("rules.priority")}</label>
          <input id="rule-priority" type="number" step="any" value=${priority}
                 aria-describedby="rule-priority-hint"
                 onInput=${(event) => setPriority(event.currentTarget.value)} />
          <p id="rule-priority-hint" class="hint span">${t("rules.priorityHint")}</p>
          <${RecordSelect} id="rule-integration" label=${t("rules.integration")} value=${integration}
            records=${choices.channels} empty=${t("rules.everyChannel")} onChange=${setIntegration} />
          <label class="check span">
            <input type="checkbox" checked=${enabled}
                   onChange=${(event) => setEnabled(event.currentTarget.checked)} />
            <span>${t("rules.enabledLabel")}</span>
          </label>
          <label class="check span">
            <input type="checkbox" checked=${once} onChange=${(event) => setOnce(event.currentTarget.checked)} />
            <span>${t("rules.runOnce")}</span>
          </label>
          <label class="check span">
            <input type="checkbox" checked=${standAside}
                   onChange=${(event) => setStandAside(event.currentTarget.checked)} />
            <span>${t("rules.skipWhileHuman")}</span>
          </label>
        </div>
        <fieldset>
          <legend>${t("rules.conditions")}</legend>
          <p class="hint">${t("rules.conditionsHint")}</p>
          <div class="form-grid">
            ${COLUMN_KEYS.map(columnSelect)}
            ${recordSelect("assignedToUserId", choices.users)}
            ${recordSelect("assignedToDepartmentId", choices.departments)}
            ${TEXT_KEYS.filter((key) => key !== "templateName").map((key) => html`
              <label for=${`rule-${key}`}>${t(`rules.condition.${key}`)}</label>
              <input id=${`rule-${key}`} value=${conditions[key]} maxlength="1000"
                     onInput=${(event) => setCondition(key, event.currentTarget.value)} />`)}
            ${recordSelect("templateName", conditionTemplates)}
            <label for="rule-withinBusinessHours">${t("rules.condition.withinBusinessHours")}</label>
            <select id="rule-withinBusinessHours" value=${conditions.withinBusinessHours}
                    onChange=${(event) => setCondition("withinBusinessHours", event.currentTarget.value)}>
              <option value="">${t("rules.any")}</option>
              <option value="true">${t("rules.inHours")}</option>
              <option value="false">${t("rules.outOfHours")}</option>
            </select>
          </div>
        </fieldset>
        <${ActionList} branch="then" items=${actions} setItems=${setActions} choices=${choices} min=${1}
          integration=${integration} />
        ${conditional
          ? html`<${ActionList} branch="else" items=${elseActions} setItems=${setElseActions}
                   choices=${choices} min=${0} integration=${integration} />`
          : html`<p class="hint">${t("rules.elseNeedsConditions")}</p>`}
        <div class="row">
          <button type="submit" disabled=${busy}>${t(rule ? "rules.save" : "rules.create")}</button>
          <button type="button" class="secondary" onClick=${cancel}>${t("rules.cancel")}</button>
        </div>
      </form>
    </section>`;
}

function ActionList({ branch, items, setItems, choices, min, integration }) {
  function change(index, next) {
    setItems(items.map((item, at) => (at === index ? next : item)));
  }
  return html`
    <fieldset class="action-list" data-branch=${branch}>
      <legend>${t(branch === "then" ? "rules.thenLegend" : "rules.elseLegend")}</legend>
      ${items.length === 0 && html`<p class="hint">${t("rules.noElse")}</p>`}
      ${items.map((item, index) => html`
        <${ActionEditor} key=${`${branch}-${index}`} branch=${branch} index=${index} item=${item}
          choices=${choices} integration=${integration} change=${(next) => change(index, next)}
          remove=${items.length > min ? () => setItems(items.filter((_, at) => at !== index)) : null} />`)}
      ${items.length < MAX_ACTIONS && html`
        <button type="button" class="secondary"
                onClick=${() => setItems([...items, blankAction()])}>
          ${t(branch === "then" ? "rules.addThen" : "rules.addElse")}</button>`}
    </fieldset>`;
}

function ActionEditor({ branch, index, item, choices, integration, change, remove }) {
  const id = (key) => `rule-${branch}-${index}-${key}`;
  const params = item.actionParams ?? {};
  const set = (key, value) => change({ ...item, actionParams: { ...params, [key]: value } });
  const templates = templateOptions(choices.templates, integration);
  for (const saved of [params.templateName, params.fallbackTemplate?.name]) {
    // a rule saved with a template no longer listed (another channel's, no longer approved)
    if (saved && !templates.some((found) => found.id === saved)) templates.push({ id: saved, name: saved });
  }
  // a message action sends a fast message or a text, or else an APPROVED template
  const [mode, setMode] = useState(params.templateName ? "template" : "own");
  const [headersTyped, setHeadersTyped] = useState(formatHeaders(params.headers));
  const switchMode = (next) => {
    setMode(next);
    const { templateName, fastMessageId, text: typed, fallbackTemplate, ...rest } = params;
    change({ ...item, actionParams: rest });
  };
  const modeSelect = (own) => html`
    <label for=${id("mode")}>${t("rules.param.send")}</label>
    <select id=${id("mode")} value=${mode} onChange=${(event) => switchMode(event.currentTarget.value)}>
      <option value="own">${t(own)}</option>
      <option value="template">${t("rules.sendTemplate")}</option>
    </select>`;
  const template = () => html`
    <${RecordSelect} id=${id("templateName")} label=${t("rules.param.templateName")} value=${params.templateName}
      records=${templates} required=${true} empty=${t("rules.choose")}
      onChange=${(value) => set("templateName", value)} />
    ${templates.length === 0 && html`<p class="hint span">${t("rules.noTemplates")}</p>`}
    <${TemplatePreview} chosen=${templates.find((found) => found.id === params.templateName)} />`;
  // a text's fallback: the template sent instead once the 24-hour window has closed
  const fallback = params.fallbackTemplate ?? null;
  const chosenFallback = templates.find((found) => found.id === fallback?.name);
  const setFallback = (value) => set("fallbackTemplate", value ?? "");
  const fallbackFields = () => html`
    <${RecordSelect} id=${id("fallbackTemplate")} label=${t("rules.param.fallbackTemplate")}
      value=${fallback?.name} records=${templates} empty=${t("rules.none")}
      onChange=${(value) => {
        const found = templates.find((one) => one.id === value);
        setFallback(found ? { name: value, language: found.language } : null);
      }} />
    ${chosenFallback && html`
      <${TemplatePreview} chosen=${chosenFallback} fill=${true} />
      ${Array.from({ length: chosenFallback.variables }, (_, at) => html`
        <label for=${id(`fallback-${at + 1}`)}>${t("rules.variableN", { n: at + 1 })}</label>
        <input id=${id(`fallback-${at + 1}`)} maxlength="1024" value=${fallback.variables?.[at] ?? ""}
               onInput=${(event) => {
                 const values = Array.from({ length: chosenFallback.variables },
                   (_, k) => fallback.variables?.[k] ?? "");
                 values[at] = event.currentTarget.value;
                 setFallback({ ...fallback, variables: values });
               }} />`)}`}`;
  const pick = (key, records, optional = false) => html`
    <${RecordSelect} id=${id(key)} label=${t(`rules.param.${key}`)} value=${params[key]} records=${records}
      required=${!optional} empty=${t(optional ? "rules.none" : "rules.choose")} onChange=${(value) => set(key, value)} />`;
  // a list parameter chosen one at a time (the ticket's responsible person)
  const pickOne = (key, records) => html`
    <${RecordSelect} id=${id(key)} label=${t(`rules.param.${key}`)} value=${params[key]?.[0]} records=${records}
      empty=${t("rules.none")} onChange=${(value) => set(key, value ? [value] : "")} />`;
  const text = (key, required = true, type = "text") => html`
    <label for=${id(key)}>${t(`rules.param.${key}`)}</label>
    <input id=${id(key)} type=${type} value=${params[key] ?? ""} required=${required} maxlength=${key === "title" ? 200 : null}
           onInput=${(event) => set(key, event.currentTarget.value)} />`;
  // a value of a fixed list (not a record): the ticket's priority, the webhook's method
  const choice = (key, options, empty = t("rules.none")) => html`
    <${RecordSelect} id=${id(key)} label=${t(`rules.param.${key}`)} value=${params[key]} records=${options}
      empty=${empty} onChange=${(value) => set(key, value)} />`;
  const minutes = (key) => html`
    <label for=${id(key)}>${t(`rules.param.${key}`)}</label>
    <input id=${id(key)} type="number" min="1" step="1" value=${params[key] ?? ""}
           onInput=${(event) => {
             const value = event.currentTarget.value;
             set(key, value === "" ? "" : Number(value));
           }} />`;
  const fields = {
    SEND_FAST_MESSAGE: () => html`${modeSelect("rules.sendFast")}
      ${mode === "template" ? template() : html`${pick("fastMessageId", choices.fast)}${fallbackFields()}`}`,
    SCHEDULE_MESSAGE: () => html`${modeSelect("rules.sendText")}
      ${mode === "template" ? template() : html`${text("text")}${fallbackFields()}`}${minutes("delayMinutes")}`,
    MOVE_CARD: () => pick("targetFunnelColumnId", choices.columns),
    TAG_CONVERSATION: () => pick("tagId", choices.tags),
    ASSIGN_LEGAL_AREA: () => pick("legalAreaId", choices.areas),
    // a rule names its ticket status (the API requires it of a rule)
    CREATE_TICKET: () => html`${text("title")}
      <label for=${id("description")}>${t("rules.param.description")}</label>
      <textarea id=${id("description")} maxlength="10000" rows="2" value=${params.description ?? ""}
                onInput=${(event) => set("description", event.currentTarget.value)}></textarea>
      ${pick("ticketStatusId", choices.statuses)}
      ${choice("priority", PRIORITIES.map((p) => ({ id: p, name: t(`rules.priority.${p}`) })))}
      ${pickOne("assigneeIds", choices.users)}${pickOne("departmentIds", choices.departments)}`,
    FIRE_WEBHOOK: () => html`${text("url", true, "url")}
      ${choice("method", METHODS.map((m) => ({ id: m, name: m })), t("rules.methodDefault"))}
      <label for=${id("headers")}>${t("rules.param.headers")}</label>
      <textarea id=${id("headers")} rows="2" aria-describedby=${id("headers-hint")}
                value=${headersTyped}
                onInput=${(event) => {
                  setHeadersTyped(event.currentTarget.value);
                  set("headers", parseHeaders(event.currentTarget.value));
                }}></textarea>
      <p id=${id("headers-hint")} class="hint span">${t("rules.headersHint")}</p>
      <label for=${id("secret")}>${t("rules.param.secret")}</label>
      <input id=${id("secret")} type="password" minlength="8" maxlength="256" autocomplete="new-password"
             value=${params.secret ?? ""} aria-describedby=${id("secret-hint")}
             onInput=${(event) => set("secret", event.currentTarget.value)} />
      <p id=${id("secret-hint")} class="hint span">${t("rules.secretHint")}</p>`,
    PAUSE_AUTOMATION: () => html`${minutes("durationMinutes")}
      <label class="check span">
        <input type="checkbox" checked=${Boolean(params.resumeOnTemplateSent)}
               onChange=${(event) => set("resumeOnTemplateSent", event.currentTarget.checked || "")} />
        <span>${t("rules.param.resumeOnTemplateSent")}</span>
      </label>`,
  };
  return html`
    <div class="action-editor" data-index=${index}>
      <div class="form-grid">
        <label for=${id("action")}>${t("rules.actionN", { n: index + 1 })}</label>
        <select id=${id("action")} value=${item.action}
                onChange=${(event) => {
                  setMode("own");
                  change({ action: event.currentTarget.value, actionParams: {} });
                }}>
          ${ACTIONS.map((name) => html`<option value=${name}>${t(`rules.action.${name}`)}</option>`)}
        </select>
        ${fields[item.action]?.()}
      </div>
      ${remove && html`
        <button type="button" class="link" onClick=${remove}>
          ${t("rules.removeAction", { n: index + 1 })}</button>`}
    </div>`;
}

function DryRun({ rule, choices, close }) {
  const [answer, setAnswer] = useState(null);
  const [missing, setMissing] = useState(false);
  const [sample, setSample] = useState({ fromFunnelColumnId: "", toFunnelColumnId: "", messageText: "" });

  async function run(body) {
    clearError();
    try {
      setAnswer(await api("POST", `/automation-rules/${rule.id}/test`, { body }));
      setMissing(false);
    } catch (error) {
      // No event of the trigger yet: the person gives an example instead.
      if (error.status === 404 && Object.keys(body).length === 0) setMissing(true);
      else showError(error, t("rules.dryRun"));
    }
  }

  useEffect(() => { run({}); }, []);

  function submit(event) {
    event.preventDefault();
    const body = { event: rule.triggerEvent };
    for (const [key, value] of Object.entries(sample)) if (value) body[key] = value;
    run(body);
  }

  const column = (key) => html`
    <label for=${`test-${key}`}>${t(`rules.condition.${key}`)}</label>
    <select id=${`test-${key}`} value=${sample[key]}
            onChange=${(event) => setSample({ ...sample, [key]: event.currentTarget.value })}>
      <option value="">${t("rules.none")}</option>
      ${choices.columns.map((c) => html`<option value=${c.id}>${c.name}</option>`)}
    </select>`;
  return html`
    <section class="link-box dry-run" aria-labelledby="rule-test-title">
      <h2 id="rule-test-title">${t("rules.dryRunTitle", { name: rule.name })}</h2>
      <p class="hint">${t("rules.dryRunHint")}</p>
      ${missing && html`<p>${t("rules.noEventYet")}</p>`}
      ${answer && html`
        <p class="verdict"><strong>${t(`rules.branch.${answer.branch}`)}</strong></p>
        ${answer.conditions.length > 0 && html`
          <ul class="checks">
            ${answer.conditions.map((check) => html`
              <li data-holds=${String(check.holds)}>
                ${t(check.holds ? "rules.holds" : "rules.fails")}:
                ${has(`rules.condition.${check.key}`) ? t(`rules.condition.${check.key}`) : check.key}
              </li>`)}
          </ul>`}
        ${answer.actions.length > 0 && html`
          <p>${t("rules.wouldDo")} ${answer.actions.map((a) => t(`rules.action.${a.action}`)).join(", ")}</p>`}`}
      <form class="form-grid" onSubmit=${submit}>
        <p class="hint span">${t("rules.sampleHint")}</p>
        ${column("fromFunnelColumnId")}
        ${column("toFunnelColumnId")}
        <label for="test-messageText">${t("rules.condition.messageText")}</label>
        <input id="test-messageText" value=${sample.messageText} maxlength="4096"
               onInput=${(event) => setSample({ ...sample, messageText: event.currentTarget.value })} />
        <div class="row span">
          <button type="submit">${t("rules.testSample")}</button>
          <button type="button" class="secondary" onClick=${close}>${t("rules.close")}</button>
        </div>
      </form>
    </section>`;
}

function RunLog({ panel, close }) {
  const { rule, runs } = panel;
  return html`
    <section class="link-box" aria-labelledby="rule-runs-title">
      <h2 id="rule-runs-title">${t("rules.runsTitle", { name: rule.name })}</h2>
      ${runs.length === 0 && html`<p class="empty">${t("rules.noRuns")}</p>`}
      <ul class="runs">
        ${runs.map((run) => html`
          <li key=${run.id}>
            <strong>${formatDateTime(run.createdAt)}</strong> · ${eventLabel(run.event)} ·
            ${t(`rules.branch.${run.branch}`)}
            ${run.actions.length > 0 && html`: ${run.actions.map((a) =>
              `${t(`rules.action.${a.action}`)} (${t(`rules.status.${a.status}`)})`).join(", ")}`}
          </li>`)}
      </ul>
      <button type="button" class="secondary" onClick=${close}>${t("rules.close")}</button>
    </section>`;
}
