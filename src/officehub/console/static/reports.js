// Conversation reports: GET /reports/conversations drawn by this page as inline SVG bar
// charts (opened and closed; first-response and resolution medians) with the table of
// figures, and the same report as a CSV download (fetched with the page's credentials).

import { api, download } from "./api.js";
import { t, timeZone } from "./i18n.js";
import { announce, attempt, clear, formatSpan, h } from "./ui.js";

const SVG = "http://www.w3.org/2000/svg";
const COLORS = { opened: "#2171b5", closed: "#74c476", firstResponse: "#6a51a3", resolution: "#fd8d3c" };
let report = null;

function s(tag, attrs = {}, ...children) {
  const element = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attrs)) element.setAttribute(name, String(value));
  for (const child of children.flat()) {
    element.append(typeof child === "string" ? document.createTextNode(child) : child);
  }
  return element;
}

/** Today in the office's time zone, as YYYY-MM-DD. */
function today() {
  return new Intl.DateTimeFormat("en-CA", { timeZone, year: "numeric", month: "2-digit", day: "2-digit" })
    .format(new Date());
}

function daysBefore(iso, days) {
  const date = new Date(`${iso}T12:00:00Z`);
  date.setUTCDate(date.getUTCDate() - days);
  return date.toISOString().slice(0, 10);
}

function brazilianDate(iso) {
  const [year, month, day] = iso.split("-");
  return `${day}/${month}/${year}`;
}

function labelOf(row, groupBy) {
  if (groupBy === "day") return brazilianDate(row.key).slice(0, 5);
  if (row.key === null) return t(`reports.none.${groupBy}`);
  return row.label ?? row.key;
}

function span(seconds) {
  return seconds === null || seconds === undefined ? "—" : formatSpan(seconds * 1000);
}

function percent(value) {
  return value === null || value === undefined ? "—" : `${(value * 100).toFixed(1).replace(".", ",")} %`;
}

/** A grouped bar chart of `series` ({name, color, value(row)}) over the rows. */
function barChart(rows, groupBy, series, title, format) {
  const width = Math.max(480, rows.length * (series.length * 10 + 12) + 60);
  const height = 220;
  const top = 12;
  const bottom = 40;
  const left = 48;
  const plot = height - top - bottom;
  const max = Math.max(1, ...rows.flatMap((row) => series.map((one) => one.value(row) ?? 0)));
  const slot = (width - left - 8) / Math.max(1, rows.length);
  const bar = Math.max(2, Math.min(18, (slot - 4) / series.length));
  const svg = s("svg", {
    viewBox: `0 0 ${width} ${height}`, width: "100%", role: "img", class: "report-chart",
    "aria-label": title, preserveAspectRatio: "xMinYMin meet",
  });
  svg.append(s("title", {}, title));
  for (const fraction of [0, 0.5, 1]) {
    const y = top + plot - fraction * plot;
    svg.append(s("line", { x1: left, x2: width - 4, y1: y, y2: y, stroke: "#ddd" }));
    svg.append(s("text", { x: left - 4, y: y + 4, "text-anchor": "end", "font-size": 10 },
      format(max * fraction)));
  }
  const every = Math.ceil(rows.length / 15);
  rows.forEach((row, index) => {
    const x0 = left + index * slot + (slot - bar * series.length) / 2;
    series.forEach((one, n) => {
      const value = one.value(row) ?? 0;
      const heightOf = (value / max) * plot;
      const rect = s("rect", {
        x: x0 + n * bar, y: top + plot - heightOf, width: bar - 1, height: heightOf,
        fill: one.color, class: `bar bar-${one.name}`,
        "data-key": row.key ?? "", "data-value": one.value(row) ?? "",
      });
      rect.append(s("title", {}, `${labelOf(row, groupBy)}: ${t(`reports.series.${one.name}`)} ${format(one.value(row))}`));
      svg.append(rect);
    });
    if (index % every === 0) {
      svg.append(s("text", {
        x: left + index * slot + slot / 2, y: height - bottom + 14, "text-anchor": "middle", "font-size": 10,
      }, labelOf(row, groupBy).slice(0, 14)));
    }
  });
  const legend = s("g", { class: "legend" });
  series.forEach((one, n) => {
    legend.append(s("rect", { x: left + n * 150, y: height - 14, width: 10, height: 10, fill: one.color }));
    legend.append(s("text", { x: left + n * 150 + 14, y: height - 5, "font-size": 11 },
      t(`reports.series.${one.name}`)));
  });
  svg.append(legend);
  return svg;
}

function count(value) {
  return value === null || value === undefined ? "—" : String(Math.round(value));
}

function render() {
  const { rows, totals, groupBy } = report;
  clear(document.getElementById("reports-summary"), t("reports.summary", {
    opened: totals.opened, closed: totals.closed,
    firstResponse: span(totals.firstResponseMedianSeconds),
    resolution: span(totals.resolutionMedianSeconds),
    sla: percent(totals.slaCompliance),
    from: brazilianDate(report.from), to: brazilianDate(report.to),
  }));
  clear(document.getElementById("reports-chart-volume"), barChart(rows, groupBy, [
    { name: "opened", color: COLORS.opened, value: (row) => row.opened },
    { name: "closed", color: COLORS.closed, value: (row) => row.closed },
  ], t("reports.chartVolume"), count));
  const minutes = (seconds) => (seconds === null || seconds === undefined ? null : seconds / 60);
  clear(document.getElementById("reports-chart-times"), barChart(rows, groupBy, [
    { name: "firstResponse", color: COLORS.firstResponse, value: (row) => minutes(row.firstResponseMedianSeconds) },
    { name: "resolution", color: COLORS.resolution, value: (row) => minutes(row.resolutionMedianSeconds) },
  ], t("reports.chartTimes"), (value) => (value === null || value === undefined ? "—" : formatSpan(value * 60000))));
  const line = (row, header) => h("tr", { dataset: { key: row.key ?? "" } },
    h("th", { scope: "row" }, header),
    h("td", { class: "num" }, String(row.opened)),
    h("td", { class: "num" }, String(row.closed)),
    h("td", { class: "num" }, span(row.firstResponseMedianSeconds)),
    h("td", { class: "num" }, span(row.firstResponseP90Seconds)),
    h("td", { class: "num" }, span(row.resolutionMedianSeconds)),
    h("td", { class: "num" }, span(row.resolutionP90Seconds)),
    h("td", { class: "num" }, `${row.slaMet}/${row.slaTotal}`),
    h("td", { class: "num" }, percent(row.slaCompliance)));
  const header = (row) => (groupBy === "day" ? brazilianDate(row.key) : labelOf(row, groupBy));
  clear(document.querySelector("#reports-table tbody"),
    rows.map((row) => line(row, header(row))),
    line({ ...totals, key: "total" }, t("reports.total")));
}

function query() {
  return {
    from: document.getElementById("reports-from").value,
    to: document.getElementById("reports-to").value,
    groupBy: document.getElementById("reports-group").value,
  };
}

async function load() {
  const loaded = await attempt(t("reports.title"), () =>
    api("GET", "/reports/conversations", { query: query() }));
  if (!loaded) return;
  report = loaded;
  render();
  announce(t("reports.loaded", { count: report.totals.opened }));
  await loadUsage();
}

// What the office pays WhatsApp: GET /reports/whatsapp-usage (the last 12 months).
async function loadUsage() {
  const usage = await attempt(t("usage.title"), () => api("GET", "/reports/whatsapp-usage"));
  if (!usage) return;
  const months = new Map();
  for (const row of usage.rows) {
    const month = months.get(row.month) ?? { key: row.month, label: row.month, billable: 0, free: 0 };
    month.billable += row.billable;
    month.free += row.free;
    months.set(row.month, month);
  }
  clear(document.getElementById("usage-chart"), barChart([...months.values()], "month", [
    { name: "billable", color: COLORS.opened, value: (row) => row.billable },
    { name: "free", color: COLORS.closed, value: (row) => row.free },
  ], t("usage.chart"), count));
  const line = (row) => h("tr", { dataset: { month: row.month, category: row.category } },
    h("th", { scope: "row" }, row.month),
    h("td", {}, row.category),
    h("td", { class: "num" }, String(row.billable)),
    h("td", { class: "num" }, String(row.free)));
  clear(document.querySelector("#usage-table tbody"), usage.rows.map(line),
    h("tr", { dataset: { month: "total" } }, h("th", { scope: "row" }, t("reports.total")),
      h("td", {}, ""),
      h("td", { class: "num" }, String(usage.totals.billable)),
      h("td", { class: "num" }, String(usage.totals.free))));
}

async function saveCsv() {
  const params = query();
  await attempt(t("reports.csv"), () => download("/reports/conversations", {
    query: { ...params, format: "csv" },
    accept: "text/csv",
    fileName: `relatorio-conversas-${params.from}-${params.to}-${params.groupBy}.csv`,
  }));
}

let wired = false;

export async function show() {
  if (!wired) {
    wired = true;
    const end = today();
    document.getElementById("reports-to").value = end;
    document.getElementById("reports-from").value = daysBefore(end, 29);
    document.getElementById("reports-form").addEventListener("submit", (event) => {
      event.preventDefault();
      load();
    });
    document.getElementById("reports-csv").addEventListener("click", () => saveCsv());
  }
  await load();
}

export function reset() {
  report = null;
  for (const id of ["reports-summary", "reports-chart-volume", "reports-chart-times", "usage-chart"]) {
    clear(document.getElementById(id));
  }
  clear(document.querySelector("#reports-table tbody"));
  clear(document.querySelector("#usage-table tbody"));
}
