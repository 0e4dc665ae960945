// "Fluxos": the office's chat flows. Supervisors and admins read them; admins change them
// (the API's "Flows" rule). A flow is a graph of steps: each step says something (text,
// media, a list of options) or does something (a system action), and names the step that
// follows (a list: one per option). The editor is the graph (each step a node, laid out by
// its depth from the first step; each connection an arrow, an option's arrow labelled with
// the option): a node (a click, or Enter on it) opens its step's editor beside the graph
// (below it on a phone), where the step's next step(s) are chosen from the steps, a step
// is added after it or removed; "Adicionar um passo" adds one to the graph. While an admin
// edits, the API checks the graph without saving (`POST /flow/check`, the check a save
// runs) and its problems and warnings are drawn on the nodes they name and listed.

import { api, listAll } from "./api.js";
import { html, render, useEffect, useRef, useState } from "./html.js";
import { has, t } from "./i18n.js";
import { Form, RecordSelect, attempt } from "./settings-kit.js";
import { announce, clearError, showError } from "./ui.js";

const TYPES = ["text", "list", "media", "system"];
const SYSTEM_ACTIONS = [
  "ASSIGN_USER", "ASSIGN_AGENT", "ADD_LABELS", "CHANGE_CRM_COLUMN", "CREATE_TICKET",
  "FIRE_WEBHOOK", "SEARCH_MOVEMENTS",
];
const PROBLEM = /step '([^']*)': ([A-Z_]+): /g;
const FIELD = /body\.content\.steps\.(\d+)\b/g;
const CHECK_PAUSE_MS = 300;

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
  // the form's first values, kept (a new object at each drawing would reset what was typed)
  const [initial] = useState(() => ({ name: "", inboxId: inboxes[0]?.id ?? "" }));
  const fields = [
    { name: "name", label: t("flows.name"), required: true },
    {
      name: "inboxId", label: t("flows.inbox"), type: "select", required: true,
      options: inboxes.map((inbox) => ({ value: inbox.id, label: inbox.name })),
    },
  ];
  async function submit(values) {
    const body = {
      name: (values.name ?? "").trim(),
      inboxId: values.inboxId || inboxes[0]?.id,
      content: {
        initialStepId: "inicio",
        steps: [{ id: "inicio", type: "text", content: t("flows.firstStepText"), nextStepId: null }],
      },
    };
    await done(await api("POST", "/flow", { body }));
  }
  return html`
    <section class="rule-form" aria-labelledby="flow-new-title">
      <h2 id="flow-new-title">${t("flows.new")}</h2>
      <${Form} fields=${fields} initial=${initial} grid=${true}
        submit=${submit} submitLabel=${t("flows.create")} label=${t("flows.new")} onCancel=${cancel} />
    </section>`;
}

/** The problems of a body the check refused as malformed (a `VALIDATION_ERROR` naming
 * `body.content.steps.N…`), by the id of step N. */
export function fieldProblemsOf(details, steps) {
  const found = {};
  for (const match of String(details ?? "").matchAll(FIELD)) {
    const step = steps[Number(match[1])];
    if (step && !(found[step.id] ?? []).includes("INVALID_FIELD")) (found[step.id] ??= []).push("INVALID_FIELD");
  }
  return found;
}

function byStep(...lists) {
  const found = {};
  for (const list of lists) for (const item of list) (found[item.stepId] ??= []).push(item.reason);
  return found;
}

/** Where `gone` was the next step, the flow now ends. */
function unlinked(step, gone) {
  const next = step.nextStepId === gone ? { ...step, nextStepId: null } : step;
  if (step.type !== "list") return next;
  return {
    ...next,
    options: step.options.map((option) => (option.nextStepId === gone ? { ...option, nextStepId: null } : option)),
  };
}

function renamed(step, old, id) {
  const next = step.nextStepId === old ? { ...step, nextStepId: id } : step;
  if (step.type !== "list") return next;
  return {
    ...next,
    options: step.options.map((option) => (option.nextStepId === old ? { ...option, nextStepId: id } : option)),
  };
}

/** The API's graph check of the steps as they are now, without saving (admins): asked a
 * pause after each change; an answer older than the latest change is dropped. `null`
 * until the first answer and when the check cannot be asked. */
function useLiveCheck(flow, steps, initial, enabled) {
  const [live, setLive] = useState(null);
  const [state, setState] = useState(enabled ? "checking" : "off");
  const latest = useRef(0);
  useEffect(() => {
    if (!enabled) return undefined;
    latest.current += 1;
    const ticket = latest.current;
    setState("checking");
    const timer = setTimeout(async () => {
      const body = { name: flow.name, inboxId: flow.inboxId, content: { steps, initialStepId: initial } };
      try {
        const answer = await api("POST", "/flow/check", { body });
        if (ticket !== latest.current) return;
        setLive({ byStep: byStep(answer.problems, answer.warnings), problems: answer.problems.length, warnings: answer.warnings.length });
        setState("done");
      } catch (error) {
        if (ticket !== latest.current) return;
        if (error.code === "VALIDATION_ERROR") {
          const found = fieldProblemsOf(error.details, steps);
          setLive({ byStep: found, problems: Object.keys(found).length, warnings: 0 });
          setState("done");
        } else {
          setLive(null);
          setState("failed");
        }
      }
    }, CHECK_PAUSE_MS);
    return () => clearTimeout(timer);
  }, [steps, initial]);
  return { live, state };
}

function FlowEditor({ flow, admin, records, close, saved }) {
  const [steps, setSteps] = useState(flow.content.steps ?? []);
  const [initial, setInitial] = useState(flow.content.initialStepId ?? "");
  const [problems, setProblems] = useState({});
  const [busy, setBusy] = useState(false);
  const [selected, setSelected] = useState(() => {
    const at = (flow.content.steps ?? []).findIndex((step) => step.id === flow.content.initialStepId);
    return at >= 0 ? at : null;
  });
  const [focusTo, setFocusTo] = useState(null);
  const { live, state } = useLiveCheck(flow, steps, initial, admin);
  const warned = {};
  for (const warning of flow.warnings) (warned[warning.stepId] ??= []).push(warning.reason);
  const ids = steps.map((step) => step.id);
  const problemsOfStep = (id) => (live
    ? live.byStep[id] ?? []
    : [...(problems[id] ?? []), ...(warned[id] ?? [])]);

  // After a choice in the graph the focus goes where the person will work next: the opened
  // step's heading, or back to the graph once its step is gone.
  useEffect(() => {
    if (focusTo === null) return;
    const target = focusTo === "graph"
      ? document.getElementById("flow-graph-title")
      : document.getElementById("step-editor-title");
    target?.scrollIntoView({ block: "nearest", behavior: "auto" });
    target?.focus({ preventScroll: true });
    setFocusTo(null);
  }, [focusTo]);

  function open(index) {
    setSelected(index);
    setFocusTo({ index });
  }

  /** A renamed step keeps its arrows: the steps (and the first step) that named its old
   * id name the new one, unless another step still has the old id. */
  function change(index, next) {
    const old = steps[index].id;
    let changed = steps.map((step, at) => (at === index ? next : step));
    if (next.id !== old && !changed.some((step) => step.id === old)) {
      changed = changed.map((step) => renamed(step, old, next.id));
      if (initial === old) setInitial(next.id);
    }
    setSteps(changed);
  }

  function freeId() {
    let n = steps.length + 1;
    while (ids.includes(`passo-${n}`)) n += 1;
    return `passo-${n}`;
  }

  function addStep() {
    const id = freeId();
    setSteps([...steps, { id, type: "text", content: "", nextStepId: null }]);
    announce(t("flows.stepAdded", { id }));
    open(steps.length);
  }

  /** A new step right after `index`: it leads where that step led, and that step to it. */
  function addAfter(index) {
    const id = freeId();
    const before = steps[index];
    const added = { id, type: "text", content: "", nextStepId: before.nextStepId ?? null };
    setSteps([...steps.slice(0, index), { ...before, nextStepId: id }, added, ...steps.slice(index + 1)]);
    announce(t("flows.stepAdded", { id }));
    open(index + 1);
  }

  /** The step goes, and so do the arrows into it (those steps now end the flow). */
  function removeStep(index) {
    const gone = steps[index].id;
    let rest = steps.filter((_, at) => at !== index);
    if (!rest.some((step) => step.id === gone)) rest = rest.map((step) => unlinked(step, gone));
    setSteps(rest);
    if (initial === gone && !rest.some((step) => step.id === gone)) setInitial(rest[0].id);
    setSelected(null);
    setFocusTo("graph");
    announce(t("flows.stepRemoved", { id: gone }));
  }

  /** The node's new place; the other nodes keep where they are drawn now (their places
   * are stored with the flow from then on, `position` of each step). */
  function move(index, point, at) {
    setSteps(steps.map((step, i) => {
      if (i === index) return { ...step, position: point };
      if (step.position) return step;
      return { ...step, position: { x: Math.round(at[i].x), y: Math.round(at[i].y) } };
    }));
  }

  /** Back to the layout by depth: every chosen place forgotten. */
  function tidy() {
    setSteps(steps.map(({ position, ...step }) => step));
    announce(t("flows.graph.tidied"));
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

  const step = selected !== null ? steps[selected] : null;
  return html`
    <section class="flow-editor" aria-labelledby="flow-editor-title">
      <h2 id="flow-editor-title">${t(admin ? "flows.editTitle" : "flows.openTitle", { name: flow.name })}</h2>
      <form onSubmit=${save}>
        <div class="flow-workspace">
          <${FlowGraph} steps=${steps} initial=${initial} problemsOf=${problemsOfStep}
            selected=${selected} open=${open} add=${admin ? addStep : null} move=${admin ? move : null}
            tidy=${admin && steps.some((step) => step.position) ? tidy : null} live=${live} state=${state} />
          <fieldset disabled=${!admin} class="flow-fields">
            <div class="form-grid">
              <label for="flow-initial">${t("flows.initial")}</label>
              <select id="flow-initial" value=${initial} onChange=${(event) => setInitial(event.currentTarget.value)}>
                ${ids.map((id) => html`<option value=${id}>${id}</option>`)}
              </select>
            </div>
            ${step
              ? html`<${StepCard} key=${selected} step=${step} index=${selected} ids=${ids} records=${records}
                  problems=${problemsOfStep(step.id)}
                  change=${(next) => change(selected, next)}
                  addAfter=${admin && step.type !== "list" ? () => addAfter(selected) : null}
                  remove=${admin && steps.length > 1 ? () => removeStep(selected) : null} />`
              : html`<p class="hint step-pick">${t("flows.pick")}</p>`}
          </fieldset>
        </div>
        <div class="row">
          ${admin && html`<button type="submit" disabled=${busy}>${t("flows.save")}</button>`}
          <button type="button" class="secondary" onClick=${close}>${t("flows.close")}</button>
        </div>
      </form>
    </section>`;
}

function StepCard({ step, index, ids, records, problems, change, addAfter, remove }) {
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
    ASSIGN_AGENT: () => html`<${RecordSelect} id=${id("agent")} label=${t("flows.meta.agentId")}
      value=${meta.agentId} records=${records.users} empty=${t("flows.choose")}
      onChange=${(value) => setMeta({ agentId: value || null })} />`,
    ADD_LABELS: () => html`<${RecordSelect} id=${id("tag")} label=${t("flows.meta.tagIds")}
      value=${meta.tagIds?.[0]} records=${records.tags} empty=${t("flows.choose")}
      onChange=${(value) => setMeta({ tagIds: value ? [value] : null })} />`,
    CHANGE_CRM_COLUMN: () => html`<${RecordSelect} id=${id("column")} label=${t("flows.meta.funnelColumnId")}
      value=${meta.funnelColumnId} records=${records.columns} empty=${t("flows.choose")}
      onChange=${(value) => {
        const column = records.columns.find((c) => c.id === value);
        setMeta({ funnelColumnId: column?.id ?? null, funnelId: column?.funnelId ?? null });
      }} />`,
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
    <section class="step-card" data-step-id=${step.id} data-index=${index}
        data-problems=${problems.length ? "true" : undefined} aria-labelledby="step-editor-title">
      <h3 id="step-editor-title" tabindex="-1">${t("flows.stepN", { n: index + 1, id: step.id })}</h3>
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
      <div class="row step-actions">
        ${addAfter && html`<button type="button" class="secondary" onClick=${addAfter}>${t("flows.addAfter")}</button>`}
        ${remove && html`<button type="button" class="link" onClick=${remove}>${t("flows.removeStep", { id: step.id })}</button>`}
      </div>
    </section>`;
}

/** What the live check found, in words (nothing while the first answer is awaited). */
function checkSaid(live, state) {
  if (state === "failed") return t("flows.live.failed");
  if (!live) return "";
  const count = Object.keys(live.byStep).length;
  return count ? t("flows.live.found", { count }) : t("flows.live.ok");
}

const ARROWS = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1] };
const STEP_PX = 20;

// The graph's measures, in the SVG's pixels.
const NODE_W = 176;
const NODE_H = 66;
const GAP_X = 44;
const GAP_Y = 78;
const PAD = 16;
const BACK = 56; // room on the right for the arrows going back up

function shorten(text, size) {
  const flat = String(text ?? "").replace(/\s+/g, " ").trim();
  return flat.length > size ? `${flat.slice(0, size - 1)}…` : flat;
}

/** Where each step leads: [{to, label}] (a list step: one per option, labelled with it). */
export function exitsOf(step) {
  if (step.type === "list") {
    return (step.options ?? []).map((option, at) => ({
      to: option.nextStepId ?? null,
      label: option.title || t("flows.optionN", { n: at + 1 }),
    }));
  }
  return [{ to: step.nextStepId ?? null, label: "" }];
}

/** The nodes' places: rows by depth from the first step (breadth first); the steps no path
 * reaches, in a last row of their own. Nodes are the steps' indexes (ids may repeat). */
export function layout(steps, initial, moving = null) {
  const first = new Map();
  steps.forEach((step, index) => { if (!first.has(step.id)) first.set(step.id, index); });
  const depth = new Map();
  const queue = [];
  if (first.has(initial)) {
    depth.set(first.get(initial), 0);
    queue.push(first.get(initial));
  }
  while (queue.length) {
    const index = queue.shift();
    for (const exit of exitsOf(steps[index])) {
      const to = first.get(exit.to);
      if (to !== undefined && !depth.has(to)) {
        depth.set(to, depth.get(index) + 1);
        queue.push(to);
      }
    }
  }
  const reached = depth.size ? Math.max(...depth.values()) + 1 : 0;
  steps.forEach((_, index) => { if (!depth.has(index)) depth.set(index, reached); });
  const rows = [];
  steps.forEach((_, index) => { (rows[depth.get(index)] ??= []).push(index); });
  const filled = rows.filter(Boolean);
  const widest = Math.max(1, ...filled.map((row) => row.length));
  const width = PAD * 2 + widest * NODE_W + (widest - 1) * GAP_X + BACK;
  const height = PAD * 2 + filled.length * NODE_H + (filled.length - 1) * GAP_Y;
  const at = [];
  filled.forEach((row, level) => {
    const used = row.length * NODE_W + (row.length - 1) * GAP_X;
    const left = PAD + (width - BACK - PAD * 2 - used) / 2;
    row.forEach((index, n) => {
      at[index] = { x: left + n * (NODE_W + GAP_X), y: PAD + level * (NODE_H + GAP_Y), level };
    });
  });
  let size = { width, height };
  if (moving || steps.some((step) => step.position)) size = placed(steps, at, moving);
  const edges = [];
  steps.forEach((step, index) => {
    const exits = exitsOf(step);
    exits.forEach((exit, n) => {
      const to = first.get(exit.to);
      if (to === undefined) return;
      edges.push({ from: index, to, label: exit.label, n, of: exits.length });
    });
  });
  return { at, edges, ...size };
}

/** The places the person chose (a step's stored `position`, or the node being dragged);
 * while no step has a stored one, the others keep their place by depth; once some have,
 * the steps without one stand in a row below them. The frame grows to hold every node. */
function placed(steps, at, moving) {
  const ys = steps.filter((step) => step.position).map((step) => step.position.y);
  const below = ys.length ? Math.max(...ys) + NODE_H + GAP_Y : PAD;
  let n = 0;
  steps.forEach((step, index) => {
    if (moving?.index === index) {
      at[index] = { x: moving.x, y: moving.y };
    } else if (step.position) {
      at[index] = { x: step.position.x, y: step.position.y };
    } else if (ys.length) {
      at[index] = { x: PAD + n * (NODE_W + GAP_X), y: below };
      n += 1;
    }
  });
  return {
    width: Math.max(...at.map((point) => point.x)) + NODE_W + BACK + PAD,
    height: Math.max(...at.map((point) => point.y)) + NODE_H + PAD,
  };
}

function edgePath(edge, at) {
  const a = at[edge.from];
  const b = at[edge.to];
  if (b.y >= a.y + NODE_H + 8) {
    const x1 = a.x + (NODE_W * (edge.n + 1)) / (edge.of + 1);
    const y1 = a.y + NODE_H;
    const x2 = b.x + NODE_W / 2;
    const y2 = b.y;
    const bend = (y2 - y1) / 2;
    return {
      d: `M ${x1} ${y1} C ${x1} ${y1 + bend}, ${x2} ${y2 - bend}, ${x2} ${y2}`,
      mid: { x: (x1 + x2) / 2, y: (y1 + y2) / 2 },
    };
  }
  if (Math.abs(b.y - a.y) < NODE_H && edge.from !== edge.to) {
    // across the row: side to side
    const right = b.x > a.x;
    const x1 = right ? a.x + NODE_W : a.x;
    const x2 = right ? b.x - 2 : b.x + NODE_W + 2;
    const y = a.y + (NODE_H * (edge.n + 1)) / (edge.of + 1);
    const y2 = b.y + NODE_H / 2;
    return { d: `M ${x1} ${y} C ${(x1 + x2) / 2} ${y}, ${(x1 + x2) / 2} ${y2}, ${x2} ${y2}`, mid: { x: (x1 + x2) / 2, y: y - 10 } };
  }
  // back up (or to itself): out of the right side, round, into the right side
  const x1 = a.x + NODE_W;
  const y1 = a.y + (NODE_H * (edge.n + 1)) / (edge.of + 1);
  const x2 = b.x + NODE_W;
  const y2 = b.y + NODE_H / 2 + (edge.from === edge.to ? 14 : 0);
  const out = BACK - 8;
  return {
    d: `M ${x1} ${y1} C ${x1 + out} ${y1}, ${x2 + out} ${y2}, ${x2 + 6} ${y2}`,
    mid: { x: Math.max(x1, x2) + out * 0.75, y: (y1 + y2) / 2 },
  };
}

/** The steps as a graph: a node per step (Enter or a click opens its card), an arrow per
 * connection; the graph check's problems on their nodes (outlined in red, said in words)
 * and listed under the graph. Wider than the screen, it scrolls (pans) in its frame. */
function FlowGraph({ steps, initial, problemsOf, selected, open, add, move, tidy, live, state }) {
  const [moving, setMoving] = useState(null);
  const grab = useRef(null);
  const dragged = useRef(false);
  const { at, edges, width, height } = layout(steps, initial, moving);
  const troubled = steps
    .map((step, index) => ({ step, index, reasons: problemsOf(step.id) }))
    .filter((entry) => entry.reasons.length > 0);
  const key = (event, index) => {
    if (event.key === "Enter" || event.key === " ") {
      event.preventDefault();
      open(index);
    } else if (move && event.shiftKey && ARROWS[event.key]) {
      // the keyboard's way to move a node: Shift and an arrow, a step of STEP_PX
      event.preventDefault();
      const [dx, dy] = ARROWS[event.key];
      move(index, {
        x: Math.max(0, Math.round(at[index].x + dx * STEP_PX)),
        y: Math.max(0, Math.round(at[index].y + dy * STEP_PX)),
      }, at);
    }
  };
  // A node dragged with a mouse or a pen takes its new place when let go (a touch pans the
  // frame instead); a drag is not a click.
  const down = (event, index) => {
    if (!move || event.button !== 0 || event.pointerType === "touch") return;
    grab.current = { index, x0: at[index].x, y0: at[index].y, cx: event.clientX, cy: event.clientY, to: null };
    event.currentTarget.setPointerCapture?.(event.pointerId);
  };
  const drag = (event) => {
    const held = grab.current;
    if (!held) return;
    const dx = event.clientX - held.cx;
    const dy = event.clientY - held.cy;
    if (!held.to && Math.hypot(dx, dy) < 6) return;
    held.to = { index: held.index, x: Math.max(0, Math.round(held.x0 + dx)), y: Math.max(0, Math.round(held.y0 + dy)) };
    setMoving(held.to);
  };
  const drop = () => {
    const held = grab.current;
    grab.current = null;
    if (!held?.to) return;
    dragged.current = true;
    setTimeout(() => { dragged.current = false; }, 0); // the click a drop may bring, only
    setMoving(null);
    move(held.index, { x: held.to.x, y: held.to.y }, at);
  };
  const click = (index) => {
    if (dragged.current) {
      dragged.current = false;
      return;
    }
    open(index);
  };
  return html`
    <section class="flow-graph" aria-labelledby="flow-graph-title">
      <h3 id="flow-graph-title" tabindex="-1">${t("flows.graph.title")}</h3>
      <p class="hint">${t("flows.graph.hint")}</p>
      ${add && html`
        <div class="toolbar flow-graph-tools">
          <button type="button" onClick=${add}>${t("flows.addStep")}</button>
          ${tidy && html`<button type="button" class="secondary" onClick=${tidy}>${t("flows.graph.tidy")}</button>`}
          <p class="flow-check-state" data-state=${state} aria-live="polite">${checkSaid(live, state)}</p>
        </div>
        <p class="hint">${t("flows.graph.moveHint")}</p>`}
      <div class="flow-graph-frame">
        <svg width=${width} height=${height} viewBox=${`0 0 ${width} ${height}`}
             role="group" aria-labelledby="flow-graph-title" class="flow-graph-svg">
          <defs>
            <marker id="flow-arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="8" markerHeight="8"
                    orient="auto-start-reverse">
              <path d="M 0 0 L 10 5 L 0 10 z" class="flow-arrow-head" />
            </marker>
          </defs>
          ${edges.map((edge) => {
            const path = edgePath(edge, at);
            return html`
              <g class="flow-edge" data-from=${steps[edge.from].id} data-to=${steps[edge.to].id} aria-hidden="true">
                <path d=${path.d} marker-end="url(#flow-arrow)" />
                ${edge.label && html`
                  <text x=${path.mid.x} y=${path.mid.y} text-anchor="middle" dominant-baseline="middle"
                        class="flow-edge-label">${shorten(edge.label, 18)}</text>`}
              </g>`;
          })}
          ${steps.map((step, index) => {
            const place = at[index];
            const reasons = problemsOf(step.id);
            const type = t(`flows.type.${step.type}`);
            const said = [
              t("flows.graph.node", { id: step.id, type }),
              step.id === initial ? t("flows.graph.start") : "",
              ...reasons.map(problemText),
            ].filter(Boolean).join(". ");
            const classes = ["flow-node", reasons.length && "has-problems", selected === index && "selected"]
              .filter(Boolean).join(" ");
            return html`
              <g class=${classes} data-step-id=${step.id} data-problems=${reasons.length ? "true" : undefined}
                 transform=${`translate(${place.x} ${place.y})`} role="button" tabindex="0"
                 onClick=${() => click(index)} onKeyDown=${(event) => key(event, index)}
                 onPointerDown=${(event) => down(event, index)} onPointerMove=${drag}
                 onPointerUp=${drop} onPointerCancel=${drop}>
                <desc>${said}</desc>
                <rect width=${NODE_W} height=${NODE_H} rx="6" />
                <text x="10" y="19" class="flow-node-id">
                  ${step.id === initial ? "▶ " : ""}${shorten(step.id, 20)}</text>
                <text x="10" y="37" class="flow-node-type">${shorten(step.type === "system"
                  ? t(`flows.system.${step.systemAction}`) : `${type}: ${step.content ?? ""}`, 25)}</text>
                ${reasons.length > 0 && html`
                  <text x="10" y="56" class="flow-node-problem">⚠ ${shorten(problemText(reasons[0]), 21)}</text>`}
              </g>`;
          })}
        </svg>
      </div>
      ${troubled.length > 0 && html`
        <ul class="graph-problems" aria-label=${t("flows.graph.problems")}>
          ${troubled.map(({ step, index, reasons }) => html`
            <li key=${index}>
              <button type="button" class="link" onClick=${() => open(index)}>${step.id}</button>${`: ${reasons.map(problemText).join(" ")}`}
            </li>`)}
        </ul>`}
    </section>`;
}
