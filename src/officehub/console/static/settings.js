// What the office configures (issue 42): the settings index and a page for each of inboxes
// and channels, tags, legal areas, fast messages, business hours, SLAs, case-notice
// settings and retention, each a RecordTable or a SettingForm of settings-kit.js. Every
// page is a view of the shell (`views` below, by the URL's hash).

import { html, useEffect, useState } from "./html.js";
import { api, apiUrl, listAll } from "./api.js";
import { t, timeZone } from "./i18n.js";
import { announce, showError } from "./ui.js";
import {
  ADMINS, MANAGERS, FieldError, Page, RecordTable, SettingForm, can, formatDate, formatDay, mount,
  parseDays, setActor,
} from "./settings-kit.js";
import * as workspace from "./cases.js";

const inboxesOf = () => listAll("/inbox");
const areasOf = () => listAll("/legal-areas");
const PRIORITIES = ["LOW", "MEDIUM", "HIGH"];
const TAG_MODULES = ["crm", "conversas", "pessoas", "fast-messages", "tickets"];
const CHANNELS = ["WHATSAPP_OFFICIAL", "WEBCHAT", "WHATSAPP", "INSTAGRAM"];
const DAYS = [0, 1, 2, 3, 4, 5, 6];
const NOTICE_CATEGORIES = ["hearing", "decision", "deadline", "filing", "archive"];

/** Loads the lists a page's fields choose from (inboxes, legal areas), once per show. */
function useLists(load) {
  const [lists, setLists] = useState(null);
  useEffect(() => {
    load().then(setLists, (error) => { setLists({}); showError(error, t("settings.title")); });
  }, []);
  return lists;
}

const swatch = (color) => html`<span class="settings-swatch" data-color=${color}
  ref=${(el) => { if (el && /^#[0-9a-fA-F]{6}$/.test(color ?? "")) el.style.backgroundColor = color; }}
  aria-hidden="true"></span>`;
const named = (items, id) => items?.find((i) => i.id === id)?.name ?? "—";
const blankToNull = (text) => (text === undefined || text === null || String(text).trim() === "" ? null : String(text).trim());

// ---- the index ----

const PAGES = [
  ["inboxes", ADMINS], ["tags", MANAGERS], ["areas", ADMINS], ["fast", MANAGERS],
  ["hours", ADMINS], ["sla", ADMINS], ["notice-settings", ADMINS], ["retention", ADMINS],
];
const PAGE_KEY = {
  inboxes: "inboxes", tags: "tags", areas: "areas", fast: "fast", hours: "hours", sla: "sla",
  "notice-settings": "noticeSettings", retention: "retention",
};

function Index() {
  return html`<${Page} id="settings" title=${t("settings.title")} intro=${t("settings.intro")} back=${false}>
    <ul class="settings-index">
      ${PAGES.filter(([name]) => name !== "retention" || can(ADMINS)).map(([name, roles]) => html`<li>
        <a href=${`#${name}`}>${t(`${PAGE_KEY[name]}.title`)}</a>
        <p class="hint">${t(`${PAGE_KEY[name]}.summary`)}${can(roles) ? "" : ` ${t("settings.youRead")}`}</p>
      </li>`)}
    </ul>
  <//>`;
}

// ---- inboxes and channels ----

function webhookUrl(channel) {
  return String(apiUrl(`/channels/whatsapp/${channel.id}/webhook`));
}

function snippet(channel) {
  return `<script src="${apiUrl(`/webchat/${channel.id}/widget.js`)}" async></script>`;
}

function ChannelDetails({ channel }) {
  const [testing, setTesting] = useState(false);
  const [result, setResult] = useState(null);
  if (channel.type === "WHATSAPP_OFFICIAL") {
    async function test() {
      setTesting(true);
      setResult(null);
      try {
        const answer = await api("POST", `/integration/${channel.id}/whatsapp-templates/sync`);
        setResult({ ok: true, text: t("inboxes.testOk", { count: answer.data.length }) });
        announce(t("inboxes.testOk", { count: answer.data.length }));
      } catch (error) {
        setResult({ ok: false, text: t("inboxes.testFailed") });
        showError(error, t("inboxes.test"));
      } finally {
        setTesting(false);
      }
    }
    return html`<div class="channel-paste">
      <p><strong>${t("inboxes.pasteIntro")}</strong></p>
      <dl>
        <dt>${t("inboxes.callbackUrl")}</dt><dd><code class="paste">${webhookUrl(channel)}</code></dd>
        <dt>${t("inboxes.verifyToken")}</dt><dd>${channel.whatsapp?.verifyTokenSet ? t("inboxes.verifyTokenSet") : t("inboxes.verifyTokenMissing")}</dd>
      </dl>
      ${can(ADMINS) ? html`<button type="button" class="secondary" disabled=${testing} onClick=${test}>${t("inboxes.test")}</button>` : null}
      ${result ? html`<p class=${result.ok ? "badge ok" : "badge danger"} role="status">${result.text}</p>` : null}
    </div>`;
  }
  if (channel.type === "WEBCHAT") {
    return html`<div class="channel-paste">
      <p><strong>${t("inboxes.snippetIntro")}</strong></p>
      <pre class="paste"><code>${snippet(channel)}</code></pre>
      <p class="hint">${t("inboxes.origins", { origins: (channel.webchat?.allowedOrigins ?? []).join(", ") })}</p>
    </div>`;
  }
  return html`<p class="hint">${t("inboxes.bridgeNote", { url: channel.bridge?.bridgeUrl ?? "—" })}</p>`;
}

function channelBody(values, creating) {
  const body = { name: values.name };
  if (creating) Object.assign(body, { inboxId: values.inboxId, type: values.type });
  if (values.type === "WHATSAPP_OFFICIAL") {
    body.deviceId = blankToNull(values.deviceId) ?? undefined;
    const secrets = ["accessToken", "appSecret", "verifyToken"].some((n) => blankToNull(values[n]));
    if (creating || secrets) {
      body.whatsapp = {
        phoneNumberId: values.phoneNumberId ?? "", businessAccountId: values.businessAccountId ?? "",
        accessToken: values.accessToken ?? "", appSecret: values.appSecret ?? "", verifyToken: values.verifyToken ?? "",
      };
    }
  } else if (values.type === "WEBCHAT") {
    body.webchat = {
      allowedOrigins: (values.allowedOrigins ?? "").split(/[\s,]+/).filter(Boolean),
      ask: values.ask || "PHONE", greeting: values.greeting || undefined,
    };
  } else if (creating || blankToNull(values.secret)) {
    body.bridge = { bridgeUrl: values.bridgeUrl ?? "", secret: values.secret ?? "" };
  }
  return body;
}

function Inboxes() {
  const [inboxes, setInboxes] = useState([]);
  const [version, setVersion] = useState(0);
  const lists = { inboxes };
  const inboxOptions = inboxes.map((i) => ({ value: i.id, label: i.name }));
  const official = (v) => v.type === "WHATSAPP_OFFICIAL";
  const bridged = (v) => v.type === "WHATSAPP" || v.type === "INSTAGRAM";
  const channelFields = (creating) => [
    ...(creating ? [
      { name: "inboxId", label: t("settings.inbox"), type: "select", options: inboxOptions, required: true },
      { name: "type", label: t("inboxes.type"), type: "select", options: CHANNELS.map((c) => ({ value: c, label: t(`inboxes.kind.${c}`) })) },
    ] : []),
    { name: "name", label: t("settings.name"), required: true },
    { name: "deviceId", label: t("inboxes.deviceId"), showIf: official, hint: t("inboxes.deviceIdHint") },
    { name: "phoneNumberId", apiName: "phoneNumberId", label: t("inboxes.phoneNumberId"), showIf: official, required: creating },
    { name: "businessAccountId", label: t("inboxes.businessAccountId"), showIf: official, required: creating },
    { name: "accessToken", label: t("inboxes.accessToken"), type: "password", showIf: official, required: creating, hint: creating ? undefined : t("inboxes.secretsHint") },
    { name: "appSecret", label: t("inboxes.appSecret"), type: "password", showIf: official, required: creating },
    { name: "verifyToken", label: t("inboxes.verifyTokenField"), showIf: official, required: creating, hint: t("inboxes.verifyTokenHint") },
    { name: "allowedOrigins", label: t("inboxes.allowedOrigins"), showIf: (v) => v.type === "WEBCHAT", hint: t("inboxes.allowedOriginsHint") },
    { name: "ask", label: t("inboxes.ask"), type: "select", showIf: (v) => v.type === "WEBCHAT",
      options: [{ value: "PHONE", label: t("inboxes.askPhone") }, { value: "EMAIL", label: t("inboxes.askEmail") }] },
    { name: "greeting", label: t("inboxes.greeting"), showIf: (v) => v.type === "WEBCHAT" },
    { name: "bridgeUrl", label: t("inboxes.bridgeUrl"), showIf: bridged },
    { name: "secret", label: t("inboxes.bridgeSecret"), type: "password", showIf: bridged },
  ];
  return html`<${Page} id="inboxes" title=${t("inboxes.title")} intro=${t("inboxes.intro")}>
    <${RecordTable} caption=${t("inboxes.caption")} writeRoles=${ADMINS} addLabel=${t("inboxes.add")}
      load=${async () => { const found = await inboxesOf(); setInboxes(found); return found; }}
      nameOf=${(i) => i.name}
      columns=${[
        { label: t("settings.name"), value: (i) => i.name },
        { label: t("inboxes.assignment"), value: (i) => t(`inboxes.policy.${i.assignment.policy}`) + (i.assignment.byLegalArea ? ` · ${t("inboxes.byArea")}` : "") },
        { label: t("settings.createdAt"), value: (i) => formatDate(i.createdAt) },
      ]}
      fields=${[
        { name: "name", label: t("settings.name"), required: true },
        { name: "policy", label: t("inboxes.assignment"), type: "select",
          options: ["MANUAL", "ROUND_ROBIN", "LEAST_BUSY"].map((p) => ({ value: p, label: t(`inboxes.policy.${p}`) })) },
        { name: "byLegalArea", label: t("inboxes.byArea"), type: "checkbox" },
      ]}
      blank=${() => ({ name: "", policy: "MANUAL", byLegalArea: false })}
      valuesOf=${(i) => ({ name: i.name, policy: i.assignment.policy, byLegalArea: i.assignment.byLegalArea })}
      create=${async (v) => { await api("POST", "/inbox", { body: { name: v.name, assignment: { policy: v.policy, byLegalArea: v.byLegalArea } } }); setVersion((n) => n + 1); }}
      update=${(i, v) => api("PATCH", `/inbox/${i.id}`, { body: { name: v.name, assignment: { policy: v.policy, byLegalArea: v.byLegalArea } } })}
      remove=${async (i) => { await api("DELETE", `/inbox/${i.id}`); setVersion((n) => n + 1); }} />
    <h2 id="channels-title">${t("inboxes.channels")}</h2>
    <p class="hint">${t("inboxes.channelsIntro")}</p>
    <${RecordTable} caption=${t("inboxes.channelsCaption")} writeRoles=${ADMINS} addLabel=${t("inboxes.addChannel")}
      reloadKey=${version}
      load=${() => listAll("/integration")}
      nameOf=${(c) => c.name}
      columns=${[
        { label: t("settings.name"), value: (c) => c.name },
        { label: t("inboxes.type"), value: (c) => t(`inboxes.kind.${c.type}`) },
        { label: t("settings.inbox"), value: (c) => named(lists.inboxes, c.inboxId) },
      ]}
      details=${(c) => html`<${ChannelDetails} channel=${c} />`}
      fields=${channelFields(true)}
      editFields=${channelFields(false)}
      blank=${() => ({ inboxId: inboxOptions[0]?.value ?? "", type: "WHATSAPP_OFFICIAL", name: "", ask: "PHONE" })}
      valuesOf=${(c) => ({
        type: c.type, name: c.name, deviceId: c.deviceId ?? "",
        phoneNumberId: c.whatsapp?.phoneNumberId ?? "", businessAccountId: c.whatsapp?.businessAccountId ?? "",
        allowedOrigins: (c.webchat?.allowedOrigins ?? []).join(", "), ask: c.webchat?.ask ?? "PHONE",
        greeting: c.webchat?.greeting ?? "", bridgeUrl: c.bridge?.bridgeUrl ?? "",
      })}
      create=${(v) => api("POST", "/integration", { body: channelBody(v, true) })}
      update=${(c, v) => api("PATCH", `/integration/${c.id}`, { body: channelBody(v, false) })}
      remove=${(c) => api("DELETE", `/integration/${c.id}`)} />
  <//>`;
}

// ---- tags ----

function Tags() {
  const lists = useLists(async () => ({ inboxes: await inboxesOf() }));
  if (!lists) return html`<p class="muted">${t("settings.loading")}</p>`;
  const modules = TAG_MODULES.map((m) => ({ value: m, label: t(`tags.module.${m}`) }));
  const common = [
    { name: "name", label: t("settings.name"), required: true },
    { name: "color", label: t("settings.color"), type: "color" },
    { name: "modules", label: t("tags.modules"), type: "checks", options: modules },
  ];
  return html`<${Page} id="tags" title=${t("tags.title")} intro=${t("tags.intro")}>
    <${RecordTable} caption=${t("tags.caption")} writeRoles=${MANAGERS} addLabel=${t("tags.add")}
      load=${() => listAll("/tag")} nameOf=${(x) => x.name}
      columns=${[
        { label: t("settings.name"), value: (x) => html`${swatch(x.color)} ${x.name}` },
        { label: t("settings.inbox"), value: (x) => named(lists.inboxes, x.inboxId) },
        { label: t("tags.modules"), value: (x) => x.modules.map((m) => t(`tags.module.${m}`)).join(", ") },
      ]}
      fields=${[{ name: "inboxId", label: t("settings.inbox"), type: "select", required: true,
        options: (lists.inboxes ?? []).map((i) => ({ value: i.id, label: i.name })) }, ...common]}
      editFields=${common}
      blank=${() => ({ inboxId: lists.inboxes?.[0]?.id ?? "", name: "", color: "#0b4f8a", modules: ["conversas"] })}
      valuesOf=${(x) => ({ name: x.name, color: x.color, modules: x.modules })}
      create=${(v) => api("POST", "/tag", { body: { inboxId: v.inboxId, name: v.name, color: v.color, modules: v.modules } })}
      update=${(x, v) => api("PATCH", `/tag/${x.id}`, { body: { name: v.name, color: v.color, modules: v.modules } })}
      remove=${(x) => api("DELETE", `/tag/${x.id}`)} />
  <//>`;
}

// ---- legal areas ----

function Areas() {
  const fields = [
    { name: "name", label: t("settings.name"), required: true },
    { name: "color", label: t("settings.color"), type: "color" },
  ];
  return html`<${Page} id="areas" title=${t("areas.title")} intro=${t("areas.intro")}>
    <${RecordTable} caption=${t("areas.caption")} writeRoles=${ADMINS} addLabel=${t("areas.add")}
      load=${areasOf} nameOf=${(x) => x.name} editable=${(x) => x.officeId !== null}
      columns=${[
        { label: t("settings.name"), value: (x) => html`${swatch(x.color)} ${x.name}` },
        { label: t("areas.kind"), value: (x) => (x.officeId === null ? t("areas.default") : t("areas.own")) },
      ]}
      fields=${fields}
      blank=${() => ({ name: "", color: "#7a3e9d" })}
      valuesOf=${(x) => ({ name: x.name, color: x.color })}
      create=${(v) => api("POST", "/legal-areas", { body: v })}
      update=${(x, v) => api("PATCH", `/legal-areas/${x.id}`, { body: v })}
      remove=${(x) => api("DELETE", `/legal-areas/${x.id}`)} />
  <//>`;
}

// ---- fast messages ----

const MEDIA_LINE = /^(IMAGE|AUDIO|VIDEO|DOCUMENT)\s+(\S+)$/;

function blocksOf(text) {
  return (text ?? "").split("\n").map((line) => line.trim()).filter(Boolean).map((line) => {
    const media = MEDIA_LINE.exec(line);
    return media ? { kind: media[1], mediaUrl: media[2] } : { kind: "TEXT", text: line };
  });
}

function linesOf(blocks) {
  return (blocks ?? []).map((b) => (b.kind === "TEXT" ? b.text : `${b.kind} ${b.mediaUrl}`)).join("\n");
}

function fastBody(v) {
  const body = { title: v.title, kind: v.kind };
  if (v.kind === "TEXT") body.text = v.text;
  if (v.kind === "AUDIO") body.audioUrl = v.audioUrl;
  if (v.kind === "SEQUENCE") {
    body.blocks = blocksOf(v.blocks);
    if (body.blocks.length === 0) throw new FieldError("blocks", t("settings.reason.required"));
  }
  return body;
}

function FastMessages() {
  const lists = useLists(async () => ({ inboxes: await inboxesOf() }));
  if (!lists) return html`<p class="muted">${t("settings.loading")}</p>`;
  const common = [
    { name: "title", label: t("fast.titleField"), required: true, hint: t("fast.titleHint") },
    { name: "kind", label: t("fast.kind"), type: "select",
      options: ["TEXT", "AUDIO", "SEQUENCE"].map((k) => ({ value: k, label: t(`fast.kind.${k}`) })) },
    { name: "text", label: t("fast.text"), type: "textarea", showIf: (v) => v.kind === "TEXT" },
    { name: "audioUrl", label: t("fast.audioUrl"), showIf: (v) => v.kind === "AUDIO" },
    { name: "blocks", label: t("fast.blocks"), type: "textarea", rows: 5, hint: t("fast.blocksHint"), showIf: (v) => v.kind === "SEQUENCE" },
  ];
  return html`<${Page} id="fast" title=${t("fast.title")} intro=${t("fast.intro")}>
    <${RecordTable} caption=${t("fast.caption")} writeRoles=${MANAGERS} addLabel=${t("fast.add")}
      load=${() => listAll("/fast-message")} nameOf=${(x) => x.title}
      columns=${[
        { label: t("fast.titleField"), value: (x) => x.title },
        { label: t("fast.kind"), value: (x) => t(`fast.kind.${x.kind}`) },
        { label: t("fast.content"), class: "settings-text", value: (x) => x.text ?? x.audioUrl ?? linesOf(x.blocks) },
        { label: t("settings.inbox"), value: (x) => named(lists.inboxes, x.inboxId) },
      ]}
      fields=${[{ name: "inboxId", label: t("settings.inbox"), type: "select", required: true,
        options: (lists.inboxes ?? []).map((i) => ({ value: i.id, label: i.name })) }, ...common]}
      editFields=${common}
      blank=${() => ({ inboxId: lists.inboxes?.[0]?.id ?? "", title: "", kind: "TEXT", text: "" })}
      valuesOf=${(x) => ({ title: x.title, kind: x.kind, text: x.text ?? "", audioUrl: x.audioUrl ?? "", blocks: linesOf(x.blocks) })}
      create=${(v) => api("POST", "/fast-message", { body: { inboxId: v.inboxId, ...fastBody(v) } })}
      update=${(x, v) => api("PATCH", `/fast-message/${x.id}`, { body: fastBody(v) })}
      remove=${(x) => api("DELETE", `/fast-message/${x.id}`)} />
  <//>`;
}

// ---- business hours ----

function hoursValues(found) {
  const values = { timezone: found?.timezone ?? timeZone, closedDates: (found?.closedDates ?? []).map(formatDay).join(", "),
    openDates: (found?.openDates ?? []).map(formatDay).join(", "), away: found?.awayMessage?.text ?? "" };
  for (const day of DAYS) {
    const range = found?.week?.find((r) => r.day === day);
    values[`open${day}`] = range?.open ?? "";
    values[`close${day}`] = range?.close ?? "";
  }
  return values;
}

function hoursBody(v) {
  const week = [];
  for (const day of DAYS) {
    const open = v[`open${day}`];
    const close = v[`close${day}`];
    if (open || close) {
      if (!open || !close) throw new FieldError(`open${day}`, t("hours.bothTimes"));
      week.push({ day, open, close: close === "00:00" ? "24:00" : close });
    }
  }
  return {
    timezone: v.timezone, week,
    closedDates: parseDays(v.closedDates, "closedDates"),
    openDates: parseDays(v.openDates, "openDates"),
    awayMessage: blankToNull(v.away) ? { text: v.away.trim() } : null,
  };
}

function hoursFields() {
  const fields = [{ name: "timezone", label: t("hours.timezone"), required: true, wide: true }];
  for (const day of DAYS) {
    fields.push({ name: `open${day}`, label: t("hours.opens", { day: t(`hours.day.${day}`) }), type: "time" });
    fields.push({ name: `close${day}`, label: t("hours.closes", { day: t(`hours.day.${day}`) }), type: "time" });
  }
  fields.push(
    { name: "closedDates", label: t("hours.closedDates"), type: "days", hint: t("hours.datesHint"), wide: true },
    { name: "openDates", label: t("hours.openDates"), type: "days", hint: t("hours.openDatesHint"), wide: true },
    { name: "away", label: t("hours.away"), type: "textarea", hint: t("hours.awayHint"), wide: true },
  );
  return fields;
}

function hoursSummary(found) {
  if (!found) return html`<p>${t("hours.always")}</p>`;
  return html`<ul class="settings-week">${DAYS.map((day) => {
    const ranges = found.week.filter((r) => r.day === day).map((r) => `${r.open}–${r.close}`);
    return html`<li>${t(`hours.day.${day}`)}: ${ranges.length ? ranges.join(", ") : t("hours.closed")}</li>`;
  })}</ul>
  ${found.closedDates.length ? html`<p>${t("hours.closedDates")}: ${found.closedDates.map(formatDay).join(", ")}</p>` : null}`;
}

function Hours() {
  const lists = useLists(async () => ({ inboxes: await inboxesOf() }));
  const [inboxId, setInboxId] = useState(null);
  if (!lists) return html`<p class="muted">${t("settings.loading")}</p>`;
  const chosen = inboxId ?? lists.inboxes?.[0]?.id;
  return html`<${Page} id="hours" title=${t("hours.title")} intro=${t("hours.intro")}>
    <div class="toolbar">
      <label for="hours-inbox">${t("settings.inbox")}</label>
      <select id="hours-inbox" onChange=${(e) => setInboxId(e.target.value)}>
        ${(lists.inboxes ?? []).map((i) => html`<option value=${i.id} selected=${i.id === chosen}>${i.name}</option>`)}
      </select>
    </div>
    ${chosen ? html`<${SettingForm} key=${chosen} label=${t("hours.title")} writeRoles=${ADMINS} grid=${true}
      fields=${hoursFields()}
      load=${async () => {
        const found = await api("GET", `/inbox/${chosen}/business-hours`);
        return { ...hoursValues(found), found };
      }}
      view=${(v) => hoursSummary(v.found)}
      save=${(v) => api("PUT", `/inbox/${chosen}/business-hours`, { body: hoursBody(v) })} />` : html`<p class="muted">${t("settings.noInbox")}</p>`}
  <//>`;
}

// ---- SLAs ----

function slaBody(v, creating) {
  const body = {
    priority: v.priority || null, legalAreaId: v.legalAreaId || null,
    firstResponseMinutes: Number(v.firstResponseMinutes), nextResponseMinutes: Number(v.nextResponseMinutes),
    resolutionBusinessDays: Number(v.resolutionBusinessDays),
  };
  if (creating) body.inboxId = v.inboxId;
  return body;
}

function Slas() {
  const lists = useLists(async () => ({ inboxes: await inboxesOf(), areas: await areasOf() }));
  if (!lists) return html`<p class="muted">${t("settings.loading")}</p>`;
  const common = [
    { name: "priority", label: t("sla.priority"), type: "select",
      options: [{ value: "", label: t("sla.any") }, ...PRIORITIES.map((p) => ({ value: p, label: t(`priority.${p}`) }))] },
    { name: "legalAreaId", label: t("sla.area"), type: "select",
      options: [{ value: "", label: t("sla.any") }, ...(lists.areas ?? []).map((a) => ({ value: a.id, label: a.name }))] },
    { name: "firstResponseMinutes", label: t("sla.first"), type: "number", min: 1, required: true },
    { name: "nextResponseMinutes", label: t("sla.next"), type: "number", min: 1, required: true },
    { name: "resolutionBusinessDays", label: t("sla.resolution"), type: "number", min: 1, required: true },
  ];
  return html`<${Page} id="sla" title=${t("sla.title")} intro=${t("sla.intro")}>
    <${RecordTable} caption=${t("sla.caption")} writeRoles=${ADMINS} addLabel=${t("sla.add")}
      load=${() => listAll("/sla-policies")}
      nameOf=${(x) => `${named(lists.inboxes, x.inboxId)} · ${x.priority ? t(`priority.${x.priority}`) : t("sla.any")}`}
      columns=${[
        { label: t("settings.inbox"), value: (x) => named(lists.inboxes, x.inboxId) },
        { label: t("sla.priority"), value: (x) => (x.priority ? t(`priority.${x.priority}`) : t("sla.any")) },
        { label: t("sla.area"), value: (x) => (x.legalAreaId ? named(lists.areas, x.legalAreaId) : t("sla.any")) },
        { label: t("sla.first"), class: "num", value: (x) => x.firstResponseMinutes },
        { label: t("sla.next"), class: "num", value: (x) => x.nextResponseMinutes },
        { label: t("sla.resolution"), class: "num", value: (x) => x.resolutionBusinessDays },
      ]}
      fields=${[{ name: "inboxId", label: t("settings.inbox"), type: "select", required: true,
        options: (lists.inboxes ?? []).map((i) => ({ value: i.id, label: i.name })) }, ...common]}
      editFields=${common}
      blank=${() => ({ inboxId: lists.inboxes?.[0]?.id ?? "", priority: "", legalAreaId: "", firstResponseMinutes: "30", nextResponseMinutes: "60", resolutionBusinessDays: "5" })}
      valuesOf=${(x) => ({ priority: x.priority ?? "", legalAreaId: x.legalAreaId ?? "", firstResponseMinutes: String(x.firstResponseMinutes), nextResponseMinutes: String(x.nextResponseMinutes), resolutionBusinessDays: String(x.resolutionBusinessDays) })}
      create=${(v) => api("POST", "/sla-policies", { body: slaBody(v, true) })}
      update=${(x, v) => api("PATCH", `/sla-policies/${x.id}`, { body: slaBody(v, false) })}
      remove=${(x) => api("DELETE", `/sla-policies/${x.id}`)} />
  <//>`;
}

// ---- case-notice settings ----

function noticeValues(s) {
  const values = {
    templateName: s.templateName ?? "", templateLanguage: s.templateLanguage ?? "", timeZone: s.timeZone ?? "",
    quietEnabled: s.quietHours.enabled, quietFrom: s.quietHours.from, quietUntil: s.quietHours.until, quietSundays: s.quietHours.sundays,
  };
  for (const c of NOTICE_CATEGORIES) values[c] = s.categories[c];
  return values;
}

function noticeBody(v) {
  return {
    categories: Object.fromEntries(NOTICE_CATEGORIES.map((c) => [c, v[c]])),
    templateName: blankToNull(v.templateName), templateLanguage: blankToNull(v.templateLanguage),
    quietHours: { enabled: v.quietEnabled, from: v.quietFrom, until: v.quietUntil, sundays: v.quietSundays },
    timeZone: blankToNull(v.timeZone),
  };
}

function NoticeSettings() {
  const policies = ["ASK", "SEND", "NEVER"].map((p) => ({ value: p, label: t(`noticeSettings.policy.${p}`) }));
  const fields = [
    ...NOTICE_CATEGORIES.map((c) => ({ name: c, label: t(`noticeSettings.category.${c}`), type: "select", options: policies })),
    { name: "templateName", label: t("noticeSettings.template"), hint: t("noticeSettings.templateHint") },
    { name: "templateLanguage", label: t("noticeSettings.language") },
    { name: "quietEnabled", label: t("noticeSettings.quiet"), type: "checkbox" },
    { name: "quietFrom", label: t("noticeSettings.quietFrom"), type: "time", showIf: (v) => v.quietEnabled },
    { name: "quietUntil", label: t("noticeSettings.quietUntil"), type: "time", showIf: (v) => v.quietEnabled },
    { name: "quietSundays", label: t("noticeSettings.sundays"), type: "checkbox", showIf: (v) => v.quietEnabled },
    { name: "timeZone", label: t("noticeSettings.timeZone"), hint: t("noticeSettings.timeZoneHint") },
  ];
  return html`<${Page} id="notice-settings" title=${t("noticeSettings.title")} intro=${t("noticeSettings.intro")}>
    <${SettingForm} label=${t("noticeSettings.title")} writeRoles=${ADMINS} fields=${fields}
      load=${async () => noticeValues(await api("GET", "/case-notice-settings"))}
      view=${(v) => html`<ul>${NOTICE_CATEGORIES.map((c) => html`<li>${t(`noticeSettings.category.${c}`)}: ${t(`noticeSettings.policy.${v[c]}`)}</li>`)}</ul>`}
      save=${(v) => api("PUT", "/case-notice-settings", { body: noticeBody(v) })} />
  <//>`;
}

// ---- retention ----

function Retention() {
  if (!can(ADMINS)) {
    return html`<${Page} id="retention" title=${t("retention.title")}><p>${t("retention.adminsOnly")}</p><//>`;
  }
  const days = (v, field) => {
    const text = blankToNull(v);
    if (text === null) return null;
    if (!/^\d+$/.test(text)) throw new FieldError(field, t("settings.reason.number"));
    return Number(text);
  };
  return html`<${Page} id="retention" title=${t("retention.title")} intro=${t("retention.intro")}>
    <${SettingForm} label=${t("retention.title")} writeRoles=${ADMINS}
      fields=${[
        { name: "closedConversations", label: t("retention.conversations"), type: "number", min: 1, max: 3650, hint: t("retention.offHint") },
        { name: "webhookDeliveries", label: t("retention.deliveries"), type: "number", min: 1, max: 3650, hint: t("retention.offHint") },
      ]}
      load=${async () => {
        const office = await api("GET", "/office");
        const r = office.retentionDays;
        return { closedConversations: r.closedConversations ?? "", webhookDeliveries: r.webhookDeliveries ?? "" };
      }}
      save=${(v) => api("PATCH", "/office", { body: { retentionDays: {
        closedConversations: days(v.closedConversations, "closedConversations"),
        webhookDeliveries: days(v.webhookDeliveries, "webhookDeliveries"),
      } } })} />
  <//>`;
}

// ---- the views ----

function view(Component, under = "settings") {
  return {
    show(section) {
      mount(section, html`<${Component} key=${Date.now()} />`);
      // a settings page is under "Configurações" in the menu
      if (under) document.querySelector(`#nav a[data-view="${under}"]`)?.setAttribute("aria-current", "page");
    },
  };
}

export const views = {
  settings: { ...view(Index, null), signedIn: setActor, reset: () => setActor(null) },
  inboxes: view(Inboxes),
  tags: view(Tags),
  areas: view(Areas),
  fast: view(FastMessages),
  hours: view(Hours),
  sla: view(Slas),
  "notice-settings": view(NoticeSettings),
  retention: view(Retention),
  cases: view(workspace.Cases, null),
  tickets: view(workspace.Tickets, null),
};
