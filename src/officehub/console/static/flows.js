// "Fluxos": the office's chat flows. Supervisors and admins read them; admins change them
// (the API's "Flows" rule). A flow is a graph of steps: each step says something (text,
// media, a list of options) or does something (a system action), and names the step that
// follows (a list: one per option). The editor shows the steps as cards with their
// connections as lists of the other steps; the graph check the API runs on save is shown
// on the steps it names (refusals and the unreachable-step warnings alike).

import { api, listAll } from "./api.js";
import { html, render, useEffect, useState } from "./html.js";
import { has, t } from "./i18n.js";
import { announce, clearError, showError } from "./ui.js";

const TYPES = ["text", "list", "media", "system"];
const SYSTEM_ACTIONS = [
  "ASSIGN_USER", "ASSIGN_AGENT", "ADD_LABELS", "CHANGE_CRM_COLUMN", "CREATE_TICKET",
  "FIRE_WEBHOOK", "SEARCH_MOVEMENTS",
];
const PROBLEM = /step '([^']*)': ([A-Z_]+): /g;

export function signedIn(me) {
  // Flows are read by supervisors and admins: an agent is not shown the page.
  const link = document.querySelector('#nav a[data-view="flows"]')?.closest("li");
  if (link) link.hidden = Boolean(me?.user) && me.role === "AGENT";
}

export function reset() {
  const root = document.getElementById("view-flows");
  if (root) render(null, root);
}

export async function show(element) {
  let me = null;
  try {
    me = await api("GET", "/me");
  } catch (error) {
    showError(error, t("flows.title"));
    return;
  }
  render(null, element);
  render(html`<${Flows} admin=${me.kind === "apikey" || me.role === "ADMIN"} />`, element);
  const title = element.querySelector("h1");
  title?.setAttribute("tabindex", "-1");
  title?.focus({ preventScroll: true });
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

/** The problems of a refused graph (`INVALID_FLOW_GRAPH`'s details), by step id. */
export function problemsOf(details) {
  const found = {};
  for (const match of String(details ?? "").matchAll(PROBLEM)) {
    (found[match[1]] ??= []).push(match[2]);
  }
  return found;
}

function problemText(reason) {
  return has(`flows.problem.${reason}`) ? t(`flows.problem.${reason}`) : reason;
}

function Flows({ admin }) {
  const [flows, setFlows] = useState(null);
  const [inboxes, setInboxes] = useState([]);
  const [records, setRecords] = useState({ tags: [], users: [], columns: [] });
  const [editing, setEditing] = useState(null);
  const [creating, setCreating] = useState(false);

  async function load() {
    const found = await attempt(t("flows.title"), () => listAll("/flow"));
    if (found) setFlows(found);
    return found;
  }

  useEffect(() => {
    load();
    const safe = (work) => work.catch(() => []);
    Promise.all([
      safe(listAll("/inbox")), safe(listAll("/tag")), safe(listAll("/user")), safe(listAll("/funnel")),
    ]).then(([foundInboxes, tags, users, funnels]) => {
      setInboxes(foundInboxes);
      setRecords({
        tags,
        users,
        columns: funnels.flatMap((funnel) => funnel.columns.map((column) => ({
          id: column.id, funnelId: funnel.id, name: `${funnel.name} › ${column.name}`,
        }))),
      });
    });
  }, []);

  async function remove(flow) {
    if (!window.confirm(t("flows.confirmDelete", { name: flow.name }))) return;
    const done = await attempt(t("flows.delete"), () => api("DELETE", `/flow/${flow.id}`));
    if (!done) return;
    announce(t("flows.deleted", { name: flow.name }));
    setEditing(null);
    await load();
  }

  const inboxName = new Map(inboxes.map((inbox) => [inbox.id, inbox.name]));
  return html`
    <h1 id="flows-title">${t("flows.title")}</h1>
    <p class="hint">${t(admin ? "flows.hint" : "flows.hintReadOnly")}</p>
    ${admin && !creating && !editing && html`
      <div class="toolbar">
        <button type="button" onClick=${() => setCreating(true)}>${t("flows.new")}</button>
      </div>`}
    ${creating && html`<${NewFlow} inboxes=${inboxes} cancel=${() => setCreating(false)}
      done=${async (flow) => { setCreating(false); announce(t("flows.created", { name: flow.name })); await load(); setEditing(flow); }} />`}
    ${editing && html`<${FlowEditor} key=${editing.id} flow=${editing} admin=${admin} records=${records}
      close=${() => setEditing(null)}
      saved=${async (flow) => { announce(t("flows.saved", { name: flow.name })); await load(); setEditing(flow); }} />`}
    ${flows && flows.length === 0 && html`<p class="empty">${t("flows.empty")}</p>`}
    ${flows && flows.length > 0 && html`
      <table class="data stacked">
        <caption class="visually-hidden">${t("flows.title")}</caption>
        <thead><tr>
          <th scope="col">${t("flows.name")}</th>
          <th scope="col">${t("flows.inbox")}</th>
          <th scope="col" class="num">${t("flows.steps")}</th>
          <th scope="col">${t("flows.check")}</th>
          <th scope="col">${t("flows.actions")}</th>
        </tr></thead>
        <tbody>
          ${flows.map((flow) => html`
            <tr key=${flow.id} data-flow-id=${flow.id}>
              <th scope="row" data-label=${t("flows.name")}>${flow.name}</th>
              <td data-label=${t("flows.inbox")}>${inboxName.get(flow.inboxId) ?? "—"}</td>
              <td data-label=${t("flows.steps")} class="num">${flow.content.steps?.length ?? 0}</td>
              <td data-label=${t("flows.check")}>
                ${flow.warnings.length
                  ? html`<span class="badge warn">${t("flows.warnings", { count: flow.warnings.length })}</span>`
                  : html`<span class="badge ok">${t("flows.ok")}</span>`}</td>
              <td data-label=${t("flows.actions")} class="actions">
                <button type="button" class="secondary" aria-label=${`${t(admin ? "flows.edit" : "flows.open")}: ${flow.name}`}
                        onClick=${() => { setCreating(false); setEditing(flow); }}>
                  ${t(admin ? "flows.edit" : "flows.open")}</button>
                ${admin && html`
                  <button type="button" class="secondary" aria-label=${`${t("flows.delete")}: ${flow.name}`}
                          onClick=${() => remove(flow)}>${t("flows.delete")}</button>`}
              </td>
            </tr>`)}
        </tbody>
      </table>`}`;
}

function NewFlow({ inboxes, cancel, done }) {
  const [name, setName] = useState("");
  const [inbox, setInbox] = useState(inboxes[0]?.id ?? "");
  async function submit(event) {
    event.preventDefault();
    const body = {
      name: name.trim(),
      inboxId: inbox,
      content: {
        initialStepId: "inicio",
        steps: [{ id: "inicio", type: "text", content: t("flows.firstStepText"), nextStepId: null }],
      },
    };
    const flow = await attempt(t("flows.new"), () => api("POST", "/flow", { body }));
    if (flow) await done(flow);
  }
  return html`
    <section class="rule-form" aria-labelledby="flow-new-title">
      <h2 id="flow-new-title">${t("flows.new")}</h2>
      <form class="form-grid" onSubmit=${submit}>
        <label for="flow-name">${t("flows.name")}</label>
        <input id="flow-name" value=${name} required maxlength="200"
               onInput=${(event) => setName(event.currentTarget.value)} />
        <label for="flow-inbox">${t("flows.inbox")}</label>
        <select id="flow-inbox" value=${inbox} required onChange=${(event) => setInbox(event.currentTarget.value)}>
          ${inboxes.map((i) => html`<option value=${i.id}>${i.name}</option>`)}
        </select>
        <div class="row span">
          <button type="submit">${t("flows.create")}</button>
          <button type="button" class="secondary" onClick=${cancel}>${t("flows.cancel")}</button>
        </div>
      </form>
    </section>`;
}

function FlowEditor({ flow, admin, records, close, saved }) {
  const [steps, setSteps] = useState(flow.content.steps ?? []);
  const [initial, setInitial] = useState(flow.content.initialStepId ?? "");
  const [problems, setProblems] = useState({});
  const [busy, setBusy] = useState(false);
  const warned = {};
  for (const warning of flow.warnings) (warned[warning.stepId] ??= []).push(warning.reason);
  const ids = steps.map((step) => step.id);

  function change(index, next) {
    setSteps(steps.map((step, at) => (at === index ? next : step)));
  }

  function addStep() {
    let n = steps.length + 1;
    while (ids.includes(`passo-${n}`)) n += 1;
    setSteps([...steps, { id: `passo-${n}`, type: "text", content: "", nextStepId: null }]);
  }

  async function save(event) {
    event.preventDefault();
    setBusy(true);
    clearError();
    try {
      const answer = await api("PATCH", `/flow/${flow.id}`, {
        body: { content: { steps, initialStepId: initial } },
      });
      setProblems({});
      await saved(answer);
    } catch (error) {
      showError(error, t("flows.save"));
      if (error.code === "INVALID_FLOW_GRAPH") setProblems(problemsOf(error.details));
    } finally {
      setBusy(false);
    }
  }

  return html`
    <section class="flow-editor" aria-labelledby="flow-editor-title">
      <h2 id="flow-editor-title">${t(admin ? "flows.editTitle" : "flows.openTitle", { name: flow.name })}</h2>
      <form onSubmit=${save}>
        <fieldset disabled=${!admin} class="flow-fields">
          <div class="form-grid">
            <label for="flow-initial">${t("flows.initial")}</label>
            <select id="flow-initial" value=${initial} onChange=${(event) => setInitial(event.currentTarget.value)}>
              ${ids.map((id) => html`<option value=${id}>${id}</option>`)}
            </select>
          </div>
          <ol class="steps">
            ${steps.map((step, index) => html`
              <${StepCard} key=${index} step=${step} index=${index} ids=${ids} records=${records}
                problems=${[...(problems[step.id] ?? []), ...(warned[step.id] ?? [])]}
                change=${(next) => change(index, next)}
                remove=${steps.length > 1 ? () => setSteps(steps.filter((_, at) => at !== index)) : null} />`)}
          </ol>
        </fieldset>
        <div class="row">
          ${admin && html`
            <button type="button" class="secondary" onClick=${addStep}>${t("flows.addStep")}</button>
            <button type="submit" disabled=${busy}>${t("flows.save")}</button>`}
          <button type="button" class="secondary" onClick=${close}>${t("flows.close")}</button>
        </div>
      </form>
    </section>`;
}

function StepCard({ step, index, ids, records, problems, change, remove }) {
  const id = (key) => `step-${index}-${key}`;
  const meta = step.metadata ?? {};
  const set = (key, value) => change({ ...step, [key]: value });
  const setMeta = (patch) => change({ ...step, metadata: { ...meta, ...patch } });
  const nextSelect = (value, onChange, label, key) => html`
    <label for=${id(key)}>${label}</label>
    <select id=${id(key)} value=${value ?? ""} onChange=${(event) => onChange(event.currentTarget.value || null)}>
      <option value="">${t("flows.end")}</option>
      ${ids.filter((other) => other !== step.id).map((other) => html`<option value=${other}>${other}</option>`)}
    </select>`;

  function setType(type) {
    const next = { id: step.id, type, content: step.content, nextStepId: step.nextStepId ?? null };
    if (step.position) next.position = step.position;
    if (type === "list") next.options = [{ title: "", text: "", value: "", nextStepId: null }];
    if (type === "system") next.systemAction = "ASSIGN_USER";
    change(next);
  }

  function setOption(at, patch) {
    set("options", step.options.map((option, i) => (i === at ? { ...option, ...patch } : option)));
  }

  const system = {
    ASSIGN_AGENT: () => html`
      <label for=${id("agent")}>${t("flows.meta.agentId")}</label>
      <select id=${id("agent")} value=${meta.agentId ?? ""} onChange=${(event) => setMeta({ agentId: event.currentTarget.value || null })}>
        <option value="">${t("flows.choose")}</option>
        ${records.users.map((u) => html`<option value=${u.id}>${u.name}</option>`)}
      </select>`,
    ADD_LABELS: () => html`
      <label for=${id("tag")}>${t("flows.meta.tagIds")}</label>
      <select id=${id("tag")} value=${meta.tagIds?.[0] ?? ""}
              onChange=${(event) => setMeta({ tagIds: event.currentTarget.value ? [event.currentTarget.value] : null })}>
        <option value="">${t("flows.choose")}</option>
        ${records.tags.map((tag) => html`<option value=${tag.id}>${tag.name}</option>`)}
      </select>`,
    CHANGE_CRM_COLUMN: () => html`
      <label for=${id("column")}>${t("flows.meta.funnelColumnId")}</label>
      <select id=${id("column")} value=${meta.funnelColumnId ?? ""}
              onChange=${(event) => {
                const column = records.columns.find((c) => c.id === event.currentTarget.value);
                setMeta({ funnelColumnId: column?.id ?? null, funnelId: column?.funnelId ?? null });
              }}>
        <option value="">${t("flows.choose")}</option>
        ${records.columns.map((c) => html`<option value=${c.id}>${c.name}</option>`)}
      </select>`,
    CREATE_TICKET: () => html`
      <label for=${id("ticket")}>${t("flows.meta.ticketTitle")}</label>
      <input id=${id("ticket")} value=${meta.ticketTitle ?? ""} maxlength="500"
             onInput=${(event) => setMeta({ ticketTitle: event.currentTarget.value || null })} />`,
    FIRE_WEBHOOK: () => html`
      <label for=${id("webhook")}>${t("flows.meta.webhookUrl")}</label>
      <input id=${id("webhook")} type="url" value=${meta.webhookUrl ?? ""} maxlength="2048"
             onInput=${(event) => setMeta({ webhookUrl: event.currentTarget.value || null })} />`,
  };

  return html`
    <li class="step-card" data-step-id=${step.id} data-problems=${problems.length ? "true" : undefined}>
      <h3>${t("flows.stepN", { n: index + 1, id: step.id })}</h3>
      ${problems.length > 0 && html`
        <ul class="step-problems" aria-label=${t("flows.problemsLabel")}>
          ${problems.map((reason) => html`<li>${problemText(reason)}</li>`)}
        </ul>`}
      <div class="form-grid">
        <label for=${id("id")}>${t("flows.stepId")}</label>
        <input id=${id("id")} value=${step.id} required maxlength="128" spellcheck=${false}
               onInput=${(event) => set("id", event.currentTarget.value)} />
        <label for=${id("type")}>${t("flows.type")}</label>
        <select id=${id("type")} value=${step.type} onChange=${(event) => setType(event.currentTarget.value)}>
          ${TYPES.map((type) => html`<option value=${type}>${t(`flows.type.${type}`)}</option>`)}
        </select>
        ${step.type === "system" && html`
          <label for=${id("action")}>${t("flows.systemAction")}</label>
          <select id=${id("action")} value=${step.systemAction}
                  onChange=${(event) => change({ ...step, systemAction: event.currentTarget.value, metadata: null })}>
            ${SYSTEM_ACTIONS.map((name) => html`<option value=${name}>${t(`flows.system.${name}`)}</option>`)}
          </select>
          ${system[step.systemAction]?.()}`}
        <label for=${id("content")}>${t(step.type === "media" ? "flows.mediaUrl" : step.type === "system" ? "flows.note" : "flows.content")}</label>
        <textarea id=${id("content")} rows="2" maxlength="4096" required=${step.type !== "system"}
                  value=${step.content} onInput=${(event) => set("content", event.currentTarget.value)}></textarea>
        ${step.type !== "list" && nextSelect(step.nextStepId, (value) => set("nextStepId", value), t("flows.next"), "next")}
      </div>
      ${step.type === "list" && html`
        <fieldset class="options">
          <legend>${t("flows.options")}</legend>
          ${step.options.map((option, at) => html`
            <div class="form-grid option" key=${at}>
              <label for=${id(`option-${at}`)}>${t("flows.optionN", { n: at + 1 })}</label>
              <input id=${id(`option-${at}`)} value=${option.title} required maxlength="200"
                     onInput=${(event) => setOption(at, { title: event.currentTarget.value, text: event.currentTarget.value, value: event.currentTarget.value })} />
              ${nextSelect(option.nextStepId, (value) => setOption(at, { nextStepId: value }), t("flows.optionNext", { n: at + 1 }), `option-${at}-next`)}
            </div>`)}
          <button type="button" class="secondary"
                  onClick=${() => set("options", [...step.options, { title: "", text: "", value: "", nextStepId: null }])}>
            ${t("flows.addOption")}</button>
        </fieldset>`}
      ${remove && html`<button type="button" class="link" onClick=${remove}>${t("flows.removeStep", { id: step.id })}</button>`}
    </li>`;
}
