// The office's cases (with their movements and DJEN publications) and tickets by status
// (issue 42), on settings-kit.js. Every role may read and write both (TAG_ROLES "Cases",
// "Tickets"); the API narrows what a SUPERVISOR or an AGENT sees to their inboxes.

import { html, useEffect, useState } from "./html.js";
import { api, listAll } from "./api.js";
import { t } from "./i18n.js";
import { showError } from "./ui.js";
import { EVERYONE, Page, RecordTable, formatDate, formatDay } from "./settings-kit.js";

const PRIORITIES = ["LOW", "MEDIUM", "HIGH"];

function useLoaded(load, deps = []) {
  const [found, setFound] = useState(null);
  useEffect(() => {
    let current = true;  // a later change of deps wins over an answer still coming
    load().then((value) => { if (current) setFound(value); },
      (error) => { if (current) { setFound({}); showError(error, t("cases.title")); } });
    return () => { current = false; };
  }, deps);
  return found;
}

function CaseHistory({ item }) {
  const [open, setOpen] = useState(false);
  const found = useLoaded(async () => (open ? {
    movements: (await api("GET", `/cases/${item.id}/movements`, { query: { limit: 10 } })).data,
    publications: (await api("GET", "/publications", { query: { caseId: item.id, limit: 10 } })).data,
  } : null), [open]);
  if (!open) {
    return html`<button type="button" class="link" aria-expanded="false"
      onClick=${() => setOpen(true)}>${t("cases.history", { number: item.number })}</button>`;
  }
  return html`<div class="case-history">
    <button type="button" class="link" aria-expanded="true" onClick=${() => setOpen(false)}>${t("cases.hide")}</button>
    ${found === null ? html`<p class="muted">${t("settings.loading")}</p>` : html`
      <h3>${t("cases.movements")}</h3>
      ${found.movements?.length ? html`<ul class="case-movements">${found.movements.map((m) => html`<li>
        <strong>${formatDate(m.occurredAt)}</strong> ${m.description}
        ${m.explanation ? html`<p class="hint">${m.explanation}</p>` : null}</li>`)}</ul>`
        : html`<p class="muted">${t("cases.noMovements")}</p>`}
      <h3>${t("cases.publications")}</h3>
      ${found.publications?.length ? html`<ul class="case-movements">${found.publications.map((p) => html`<li>
        <strong>${formatDay(p.madeAvailableOn)}</strong> ${p.kind} · ${p.court}
        ${p.deadlineOn ? html` · ${t("cases.deadline", { date: formatDay(p.deadlineOn) })}` : null}</li>`)}</ul>`
        : html`<p class="muted">${t("cases.noPublications")}</p>`}`}
  </div>`;
}

export function Cases() {
  const lists = useLoaded(async () => ({
    people: await listAll("/people", {}, 5), areas: await listAll("/legal-areas"),
  }));
  if (!lists) return html`<p class="muted">${t("settings.loading")}</p>`;
  const personName = (id) => lists.people?.find((p) => p.id === id)?.name ?? "—";
  const areaOptions = [{ value: "", label: t("cases.noArea") },
    ...(lists.areas ?? []).map((a) => ({ value: a.id, label: a.name }))];
  const common = [
    { name: "legalAreaId", label: t("cases.area"), type: "select", options: areaOptions },
    { name: "watch", label: t("cases.watch"), type: "checkbox", hint: t("cases.watchHint") },
  ];
  return html`<${Page} id="cases" title=${t("cases.title")} intro=${t("cases.intro")} back=${false}>
    <${RecordTable} caption=${t("cases.caption")} writeRoles=${EVERYONE} addLabel=${t("cases.add")}
      load=${() => listAll("/cases")} nameOf=${(c) => c.number}
      columns=${[
        { label: t("cases.number"), value: (c) => c.number },
        { label: t("cases.client"), value: (c) => personName(c.personId) },
        { label: t("cases.court"), value: (c) => c.courtName },
        { label: t("cases.area"), value: (c) => lists.areas?.find((a) => a.id === c.legalAreaId)?.name ?? "—" },
        { label: t("cases.lastMovement"), value: (c) => formatDate(c.lastMovementAt) },
        { label: t("cases.watch"), value: (c) => (c.watch ? t("cases.watchOn") : t("cases.watchOff")) },
      ]}
      details=${(c) => html`<${CaseHistory} item=${c} />`}
      fields=${[
        { name: "number", label: t("cases.number"), required: true, hint: t("cases.numberHint") },
        { name: "personId", label: t("cases.client"), type: "select", required: true,
          options: (lists.people ?? []).map((p) => ({ value: p.id, label: p.name ?? p.phone ?? p.id })) },
        ...common,
      ]}
      editFields=${common}
      blank=${() => ({ number: "", personId: lists.people?.[0]?.id ?? "", legalAreaId: "", watch: true })}
      valuesOf=${(c) => ({ legalAreaId: c.legalAreaId ?? "", watch: c.watch })}
      create=${(v) => api("POST", "/cases", { body: { number: v.number, personId: v.personId, legalAreaId: v.legalAreaId || null, watch: v.watch } })}
      update=${(c, v) => api("PATCH", `/cases/${c.id}`, { body: { legalAreaId: v.legalAreaId || null, watch: v.watch } })}
      remove=${(c) => api("DELETE", `/cases/${c.id}`)} />
  <//>`;
}

export function Tickets() {
  const [version, setVersion] = useState(0);
  const [statusId, setStatusId] = useState("");
  const statuses = useLoaded(() => listAll("/ticket-statuses"), [version]);
  if (!statuses) return html`<p class="muted">${t("settings.loading")}</p>`;
  const list = Array.isArray(statuses) ? statuses : [];
  const statusOptions = list.map((s) => ({ value: s.id, label: s.name }));
  const fields = [
    { name: "title", label: t("tickets.titleField"), required: true },
    { name: "description", label: t("tickets.description"), type: "textarea" },
    { name: "statusId", label: t("tickets.status"), type: "select", options: statusOptions, required: true },
    { name: "priority", label: t("tickets.priority"), type: "select",
      options: PRIORITIES.map((p) => ({ value: p, label: t(`priority.${p}`) })) },
  ];
  const body = (v) => ({ title: v.title, description: v.description || null, statusId: v.statusId, priority: v.priority });
  return html`<${Page} id="tickets" title=${t("tickets.title")} intro=${t("tickets.intro")} back=${false}>
    <div class="toolbar">
      <label for="tickets-status">${t("tickets.status")}</label>
      <select id="tickets-status" onChange=${(e) => setStatusId(e.target.value)}>
        <option value="" selected=${statusId === ""}>${t("tickets.allStatuses")}</option>
        ${list.map((s) => html`<option value=${s.id} selected=${s.id === statusId}>${s.name}</option>`)}
      </select>
    </div>
    ${list.length === 0 ? html`<p class="hint">${t("tickets.noStatuses")}</p>` : null}
    <${RecordTable} caption=${t("tickets.caption")} writeRoles=${EVERYONE} addLabel=${t("tickets.add")}
      reloadKey=${`${statusId}:${version}`}
      load=${() => listAll("/ticket", { statusId: statusId || undefined })} nameOf=${(x) => x.title}
      columns=${[
        { label: t("tickets.titleField"), value: (x) => x.title },
        { label: t("tickets.status"), value: (x) => x.status.name },
        { label: t("tickets.priority"), value: (x) => t(`priority.${x.priority}`) },
        { label: t("tickets.created"), value: (x) => formatDate(x.createdAt) },
      ]}
      fields=${fields}
      blank=${() => ({ title: "", description: "", statusId: statusId || statusOptions[0]?.value || "", priority: "MEDIUM" })}
      valuesOf=${(x) => ({ title: x.title, description: x.description ?? "", statusId: x.statusId, priority: x.priority })}
      create=${(v) => api("POST", "/ticket", { body: body(v) })}
      update=${(x, v) => api("PATCH", `/ticket/${x.id}`, { body: body(v) })} />
    <h2>${t("tickets.statuses")}</h2>
    <${RecordTable} caption=${t("tickets.statusesCaption")} writeRoles=${EVERYONE} addLabel=${t("tickets.addStatus")}
      reloadKey=${version}
      load=${async () => list} nameOf=${(s) => s.name}
      columns=${[{ label: t("settings.name"), value: (s) => s.name }]}
      fields=${[{ name: "name", label: t("settings.name"), required: true }]}
      blank=${() => ({ name: "" })}
      create=${async (v) => { await api("POST", "/ticket-statuses", { body: { name: v.name } }); setVersion((n) => n + 1); }} />
  <//>`;
}
