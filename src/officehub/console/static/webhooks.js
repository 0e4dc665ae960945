// Webhook health: the list with delivery stats, each webhook's deliveries (status, code,
// duration, response), retry of failed ones and "send test event".

import { api } from "./api.js";
import { t } from "./i18n.js";
import { announce, attempt, badge, clear, formatTime, h, neutralised } from "./ui.js";

const DELIVERY_PAGE = 20;
const RETRYABLE = new Set(["FAILED", "RETRYING"]);
const state = { bound: false, webhooks: [], selected: null, page: 1 };

const tableBody = () => document.querySelector("#webhook-table tbody");
const deliveryBody = () => document.querySelector("#delivery-table tbody");
const deliveriesBox = () => document.getElementById("deliveries");

export function reset() {
  Object.assign(state, { webhooks: [], selected: null, page: 1 });
  clear(tableBody());
  clear(deliveryBody());
  deliveriesBox().hidden = true;
}

function bind() {
  if (state.bound) return;
  state.bound = true;
  document.getElementById("webhooks-reload").addEventListener("click", () => loadWebhooks());
  document.getElementById("deliveries-reload").addEventListener("click", () => loadDeliveries(1));
  document.getElementById("deliveries-status").addEventListener("change", () => loadDeliveries(1));
  document.getElementById("deliveries-more")
    .addEventListener("click", () => loadDeliveries(state.page + 1));
}

export async function show() {
  bind();
  await loadWebhooks();
}

function percent(rate) {
  return `${(rate * 100).toFixed(rate === 1 || rate === 0 ? 0 : 1)} %`;
}

async function loadWebhooks() {
  const answer = await attempt(t("webhooks.title"), () => api("GET", "/webhooks", { query: { limit: 100 } }));
  if (!answer) return;
  state.webhooks = answer.data;
  renderPaused(answer.data.filter((w) => !w.isActive && w.disabledReason));
  clear(tableBody(), answer.data.length ? answer.data.map(renderWebhook)
    : h("tr", {}, h("td", { colspan: "8", class: "empty" }, t("webhooks.none"))));
  announce(t("webhooks.count", { count: answer.totalResults }));
  if (state.selected) {
    const again = answer.data.find((w) => w.id === state.selected.id);
    if (again) state.selected = again;
  }
}

/** The webhooks paused after their retry window failed, each with a way to set it active
 * again (which re-sends what it missed, oldest first). */
function renderPaused(paused) {
  const box = document.getElementById("webhooks-paused");
  box.hidden = paused.length === 0;
  clear(box, paused.map((webhook) => h("p", { dataset: { pausedWebhook: webhook.id } },
    t("webhooks.pausedAlert", { name: webhook.name }), " ",
    h("button", {
      type: "button", "aria-label": t("webhooks.resumeOf", { name: webhook.name }),
      onclick: (event) => resume(webhook, event.currentTarget),
    }, t("webhooks.resume")))));
}

async function resume(webhook, button) {
  button.disabled = true;
  const answer = await attempt(t("webhooks.resumeOf", { name: webhook.name }), () =>
    api("PATCH", `/webhooks/${encodeURIComponent(webhook.id)}`, { body: { isActive: true } }));
  if (!answer) {
    button.disabled = false;
    return;
  }
  await loadWebhooks();
  announce(t("webhooks.resumed", { name: webhook.name }));
}

function renderWebhook(webhook) {
  const s = webhook.stats;
  return h("tr", { dataset: { webhookId: webhook.id } },
    h("th", { scope: "row" }, webhook.name),
    h("td", { class: "url" }, webhook.url),
    h("td", {}, webhook.isActive ? badge(t("webhooks.isActive"), "ok")
      : badge(webhook.disabledReason ? t("webhooks.pausedAutomatically") : t("webhooks.paused"), "muted")),
    h("td", { class: "num", dataset: { stat: "total" } }, String(s.totalDeliveries)),
    h("td", { class: "num", dataset: { stat: "success" } }, String(s.successCount)),
    h("td", { class: "num", dataset: { stat: "failed" } }, String(s.failedCount)),
    h("td", { class: "num", dataset: { stat: "rate" } }, percent(s.successRate)),
    h("td", { class: "actions" },
      h("button", {
        type: "button", class: "secondary", "aria-label": t("webhooks.deliveriesOf", { name: webhook.name }),
        onclick: () => openDeliveries(webhook),
      }, t("webhooks.deliveries")),
      h("button", {
        type: "button", class: "secondary", "aria-label": t("webhooks.testTo", { name: webhook.name }),
        onclick: () => sendTest(webhook),
      }, t("webhooks.test"))));
}

async function sendTest(webhook) {
  const answer = await attempt(t("webhooks.testTo", { name: webhook.name }), () =>
    api("POST", `/webhooks/${encodeURIComponent(webhook.id)}/test`));
  if (!answer) return;
  if (state.selected?.id === webhook.id) await loadDeliveries(1);
  announce(t("webhooks.testRecorded", { id: answer.eventId, name: webhook.name }));
}

async function openDeliveries(webhook) {
  state.selected = webhook;
  deliveriesBox().hidden = false;
  document.getElementById("deliveries-title").textContent = neutralised(t("webhooks.deliveriesOf", { name: webhook.name }));
  await loadDeliveries(1);
  document.getElementById("deliveries-title").setAttribute("tabindex", "-1");
  document.getElementById("deliveries-title").focus();
}

async function loadDeliveries(page) {
  if (!state.selected) return;
  const status = document.getElementById("deliveries-status").value;
  const answer = await attempt(t("webhooks.deliveries"), () =>
    api("GET", `/webhooks/${encodeURIComponent(state.selected.id)}/deliveries`, {
      query: { page, limit: DELIVERY_PAGE, status },
    }));
  if (!answer) return;
  state.page = page;
  const rows = answer.data.map(renderDelivery);
  if (page === 1) {
    clear(deliveryBody(), rows.length ? rows
      : h("tr", {}, h("td", { colspan: "8", class: "empty" }, t("webhooks.noDeliveries"))));
  } else {
    deliveryBody().append(...rows);
  }
  document.getElementById("deliveries-more").hidden = page >= answer.totalPages;
  announce(t("webhooks.deliveryCount", { count: answer.total, name: state.selected.name }));
}

const STATUS_KIND = { SUCCESS: "ok", FAILED: "danger", RETRYING: "warn", PENDING: "info" };

function renderDelivery(delivery) {
  const response = delivery.responseBody ?? delivery.errorMessage ?? "";
  return h("tr", { dataset: { deliveryId: delivery.id, status: delivery.status } },
    h("td", {}, formatTime(delivery.createdAt)),
    h("td", {}, delivery.event),
    h("td", {}, badge(t(`delivery.${delivery.status}`), STATUS_KIND[delivery.status] ?? ""),
      delivery.nextRetryAt && delivery.status === "RETRYING"
        ? h("span", { class: "muted" }, t("webhooks.next", { time: formatTime(delivery.nextRetryAt) })) : null),
    h("td", { class: "num" }, delivery.statusCode === null ? "—" : String(delivery.statusCode)),
    h("td", { class: "num" }, delivery.durationMs === null ? "—" : t("webhooks.ms", { ms: delivery.durationMs })),
    h("td", { class: "num" }, String(delivery.attemptCount)),
    h("td", { class: "response" }, response
      ? h("details", {}, h("summary", {}, delivery.errorMessage && !delivery.responseBody
        ? t("webhooks.error") : t("webhooks.responseBody")), h("pre", {}, response))
      : "—"),
    h("td", { class: "actions" }, RETRYABLE.has(delivery.status)
      ? h("button", {
        type: "button", "aria-label": t("webhooks.retryOf", { event: delivery.event, time: formatTime(delivery.createdAt) }),
        onclick: (event) => retry(delivery, event.currentTarget),
      }, t("webhooks.retry"))
      : null));
}

async function retry(delivery, button) {
  button.disabled = true;
  const answer = await attempt(t("webhooks.retry"), () =>
    api("POST", `/webhooks/deliveries/${encodeURIComponent(delivery.id)}/retry`));
  if (!answer) {
    button.disabled = false;
    return;
  }
  const row = deliveryBody().querySelector(`tr[data-delivery-id="${CSS.escape(delivery.id)}"]`);
  const fresh = renderDelivery(answer);
  row?.replaceWith(fresh);
  announce(t("webhooks.retried", { id: answer.id, status: t(`delivery.${answer.status}`) }));
  fresh.querySelector("td").setAttribute("tabindex", "-1");
  fresh.querySelector("td").focus();
}
