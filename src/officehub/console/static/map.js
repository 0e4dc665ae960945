// The clients map: a choropleth of Brazil's 27 states from GET /homepage-v2/get-clients-map,
// with a legend, each state's total and area codes on hover or focus, and cacheAt.

import { api } from "./api.js";
import { t } from "./i18n.js";
import { announce, attempt, clear, formatTime, h } from "./ui.js";

const SHAPES = new URL("./brazil-states.svg", import.meta.url);
const SCALE = ["#deebf7", "#9ecae1", "#4a98c9", "#2171b5", "#08306b"];
const ZERO = "#f4f4f4";
let shapes = null;

export function reset() {
  clear(document.getElementById("map-canvas"));
  clear(document.querySelector("#map-table tbody"));
  clear(document.getElementById("map-summary"));
  shapes = null;
}

async function loadShapes() {
  if (shapes) return shapes;
  const response = await fetch(SHAPES, { cache: "force-cache" });
  if (!response.ok) throw new Error(t("map.shapesFailed", { status: response.status }));
  const parsed = new DOMParser().parseFromString(await response.text(), "image/svg+xml");
  shapes = document.importNode(parsed.documentElement, true);
  shapes.setAttribute("role", "group");
  shapes.setAttribute("aria-label", t("map.label"));
  shapes.setAttribute("class", "brazil");
  return shapes;
}

/** Up to five classes of equal width between 1 and the largest total. */
export function classes(max) {
  const ranges = [];
  for (let i = 0; i < SCALE.length; i += 1) {
    const low = Math.floor((i * max) / SCALE.length) + 1;
    const high = Math.floor(((i + 1) * max) / SCALE.length);
    if (low <= high) ranges.push({ low, high, color: SCALE[i] });
  }
  return ranges;
}

function colorOf(total, ranges) {
  if (!total) return ZERO;
  return (ranges.find((r) => total >= r.low && total <= r.high) ?? ranges.at(-1)).color;
}

function dddText(ddds) {
  return ddds.map((d) => `${d.ddd} (${d.total})`).join(", ");
}

function describe(state) {
  return state.total
    ? t("map.describe", { name: state.name, uf: state.uf, count: state.total, ddds: dddText(state.ddds) })
    : t("map.describeNone", { name: state.name, uf: state.uf });
}

function showDetail(state) {
  clear(document.getElementById("map-detail"),
    h("p", { class: "state-name" }, `${state.name} (${state.uf})`),
    h("p", { class: "state-total", dataset: { uf: state.uf } },
      h("strong", {}, String(state.total)), t("map.conversationsWord", { count: state.total })),
    state.ddds.length
      ? h("ul", { class: "ddds", "aria-label": t("map.areaCodes") },
        state.ddds.map((d) => h("li", {}, t("map.ddd", { ddd: d.ddd, count: d.total }))))
      : h("p", { class: "muted" }, t("map.noDdd")));
}

export async function show() {
  const loaded = await attempt(t("map.title"), async () => {
    const [answer, svg] = await Promise.all([
      api("GET", "/homepage-v2/get-clients-map"), loadShapes(),
    ]);
    return { map: answer.data, svg };
  });
  if (!loaded) return;
  const { map, svg } = loaded;
  const counted = new Map(map.states.map((s) => [s.uf, s]));
  const max = Math.max(0, ...map.states.map((s) => s.total));
  const ranges = classes(max);
  const states = [];
  for (const path of svg.querySelectorAll("path[data-uf]")) {
    const uf = path.dataset.uf;
    const state = counted.get(uf) ?? { uf, name: path.dataset.name, total: 0, ddds: [] };
    states.push(state);
    path.setAttribute("fill", colorOf(state.total, ranges));
    path.setAttribute("tabindex", "0");
    path.setAttribute("role", "img");
    path.setAttribute("aria-label", describe(state));
    path.dataset.total = String(state.total);
    path.onmouseenter = () => showDetail(state);
    path.onfocus = () => showDetail(state);
  }
  clear(document.getElementById("map-canvas"), svg);
  clear(document.getElementById("map-summary"),
    h("strong", { id: "map-total" }, String(map.total)),
    t("map.summary", { count: map.total, states: map.states.length }),
    h("time", { id: "map-cache-at", datetime: map.cacheAt }, formatTime(map.cacheAt)),
    t("map.summaryEnd"));
  renderLegend(ranges);
  states.sort((a, b) => b.total - a.total || a.uf.localeCompare(b.uf));  // the API's order
  clear(document.querySelector("#map-table tbody"), states.map((s) => h("tr", { dataset: { uf: s.uf } },
    h("th", { scope: "row" }, s.name),
    h("td", {}, s.uf),
    h("td", { class: "num" }, String(s.total)),
    h("td", {}, s.ddds.length ? dddText(s.ddds) : "—"))));
  announce(t("map.loaded", { count: map.total }));
}

function renderLegend(ranges) {
  const swatch = (color) => {
    const element = h("span", { class: "legend-swatch", "aria-hidden": "true" });
    element.style.backgroundColor = color;
    return element;
  };
  clear(document.getElementById("map-legend"),
    h("li", {}, swatch(ZERO), t("map.zero")),
    ranges.map((r) => h("li", {}, swatch(r.color),
      r.low === r.high ? `${r.low}` : `${r.low}–${r.high}`)));
}
