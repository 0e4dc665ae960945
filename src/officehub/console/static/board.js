// The funnel board: columns with totals and cards; drag a card (or use its "Move to"
// list) to move it with PATCH /funnel-column-card/{id}; the board shows the answer.

import { api, eachLimited, listAll } from "./api.js";
import { t } from "./i18n.js";
import {
  announce, attempt, badge, clear, formatSpan, formatTime, h, option, paintSwatches, tagChip,
} from "./ui.js";

const CARDS_PER_PAGE = 20;
const DAY_MS = 86_400_000;
const state = { bound: false, users: new Map(), board: null, loads: 0 };

const funnelSelect = () => document.getElementById("board-funnel");
const ownerSelect = () => document.getElementById("board-owner");
const columnsBox = () => document.getElementById("board-columns");

export function reset() {
  state.users = new Map();
  state.board = null;
  clear(funnelSelect());
  clear(ownerSelect(), option("", t("board.everyone")));
  clear(columnsBox());
}

function bind() {
  if (state.bound) return;
  state.bound = true;
  funnelSelect().addEventListener("change", () => loadBoard());
  ownerSelect().addEventListener("change", () => loadBoard());
  document.getElementById("board-reload").addEventListener("click", () => loadBoard());
}

export async function show() {
  bind();
  const loaded = await attempt(t("board.funnels"), async () => {
    const [funnels, users] = await Promise.all([listAll("/funnel"), listAll("/user")]);
    const chosen = funnelSelect().value;
    clear(funnelSelect(), funnels.map((f) => option(f.id, f.name, f.id === chosen)));
    const owner = ownerSelect().value;
    state.users = new Map(users.map((u) => [u.id, u]));
    clear(ownerSelect(), option("", t("board.everyone")),
      users.map((u) => option(u.id, u.name, u.id === owner)));
    if (!funnels.length) clear(columnsBox(), h("p", { class: "empty" }, t("board.noFunnel")));
    return funnels.length > 0;
  });
  if (loaded) await loadBoard();
}

function boardQuery(page) {
  const owner = ownerSelect().value;
  return { page, limit: CARDS_PER_PAGE, userIds: owner || undefined };
}

async function loadBoard() {
  const funnelId = funnelSelect().value;
  if (!funnelId) return;
  const ticket = ++state.loads;  // a later choice of funnel or owner wins over this one
  const board = await attempt(t("board.title"), () =>
    api("GET", `/funnel/${encodeURIComponent(funnelId)}`, { query: boardQuery(1) }));
  if (!board || ticket !== state.loads) return;
  state.board = board;
  for (const column of board.columns) column.items = column.items.map(fromItem);
  clear(columnsBox(), board.columns.map(renderColumn));
  const total = board.columns.reduce((sum, c) => sum + c.total, 0);
  // Said only while the board is on screen: a live reload behind another page must not
  // replace what that page just said (a client erased, a hold released).
  if (!document.getElementById("view-board")?.hidden) {
    announce(t("board.loaded", { name: board.name, columns: board.columns.length, count: total }));
  }
  await loadDetails(board.columns.flatMap((c) => c.items));
}

// A card as the board shows it; board items lack tags and the time in column, which the
// card's detail (GET /funnel-column-card/{id}) adds.
function fromItem(item) {
  return {
    id: item.id, columnId: item.columnId, person: item.person, userId: item.userId,
    user: null, tags: null, columnChangedAt: null,
  };
}

function fromDetail(detail) {
  return {
    id: detail.id, columnId: detail.columnId, person: detail.person,
    userId: detail.user?.id ?? null, user: detail.user, tags: detail.tags,
    columnChangedAt: detail.columnChangedAt,
  };
}

function columnOf(columnId) {
  return state.board?.columns.find((c) => c.id === columnId);
}

function cardElement(cardId) {
  return columnsBox().querySelector(`li[data-card-id="${CSS.escape(cardId)}"]`);
}

async function loadDetails(cards) {
  let failure = null;
  await eachLimited(cards, 6, async (card) => {
    try {
      const detail = await api("GET", `/funnel-column-card/${encodeURIComponent(card.id)}`);
      Object.assign(card, fromDetail(detail));
      const element = cardElement(card.id);
      if (element) fillDetail(element, card);
    } catch (error) {
      failure ??= error;
    }
  });
  if (failure) await attempt(t("board.cardDetails"), () => Promise.reject(failure));
}

function renderColumn(column) {
  const titleId = `column-${column.id}-title`;
  const section = h("section", {
    class: "column", "aria-labelledby": titleId, dataset: { columnId: column.id },
  });
  section.addEventListener("dragover", (event) => {
    if (!event.dataTransfer.types.includes("text/plain")) return;
    event.preventDefault();
    event.dataTransfer.dropEffect = "move";
    section.classList.add("drop-target");
  });
  section.addEventListener("dragleave", (event) => {
    if (!section.contains(event.relatedTarget)) section.classList.remove("drop-target");
  });
  section.addEventListener("drop", (event) => {
    event.preventDefault();
    section.classList.remove("drop-target");
    const cardId = event.dataTransfer.getData("text/plain");
    if (cardId) moveCard(cardId, column.id);
  });
  fillColumn(section, column, titleId);
  return section;
}

function fillColumn(section, column, titleId = `column-${column.id}-title`) {
  const limit = column.timeLimitDays
    ? h("p", { class: "limit" }, t("board.timeLimit", { days: column.timeLimitDays })) : null;
  const more = column.hasMore
    ? h("button", {
      type: "button", class: "secondary more",
      onclick: () => loadMore(column.id),
    }, t("board.loadMore", { name: column.name }))
    : null;
  clear(
    section,
    h("h2", { id: titleId, class: "column-head" },
      h("span", {}, column.name),
      h("span", {},
        h("span", { class: "count", title: t("board.cardsInColumn") }, String(column.total)),
        h("span", { class: "visually-hidden" }, t("board.cardsWord", { count: column.total })))),
    limit,
    column.items.length
      ? h("ol", { class: "cards" }, column.items.map((card) => renderCard(card)))
      : h("p", { class: "empty" }, t("board.noCards")),
    more,
  );
  paintSwatches(section);
}

function renderCard(card) {
  const nameId = `card-${card.id}-name`;
  const moveId = `move-${card.id}`;
  const element = h("li", {
    class: "card", draggable: "true", dataset: { cardId: card.id }, "aria-labelledby": nameId,
  },
  h("h3", { id: nameId, class: "card-name" }, card.person?.name ?? "—"),
  h("p", { class: "phone" }, card.person?.phone
    ?? (card.person?.username
      ? t("contact.whatsappUsername", { value: card.person.username }) : null)
    ?? t("board.noPhone")),
  h("p", { class: "owner" }),
  h("div", { class: "tags" }),
  h("p", { class: "time" }),
  h("div", { class: "move" },
    h("label", { for: moveId }, t("board.moveTo")),
    h("select", { id: moveId, "aria-describedby": nameId },
      state.board.columns.map((c) => option(c.id, c.name, c.id === card.columnId))),
    h("button", {
      type: "button", class: "secondary",
      "aria-label": t("board.moveCard", { name: card.person?.name ?? t("board.card") }),
      onclick: () => moveCard(card.id, document.getElementById(moveId).value),
    }, t("board.move"))));
  element.addEventListener("dragstart", (event) => {
    event.dataTransfer.setData("text/plain", card.id);
    event.dataTransfer.effectAllowed = "move";
    element.classList.add("dragging");
  });
  element.addEventListener("dragend", () => element.classList.remove("dragging"));
  fillDetail(element, card);
  return element;
}

function ownerName(card) {
  if (card.user?.name) return card.user.name;
  if (card.userId) return state.users.get(card.userId)?.name ?? card.userId;
  return null;
}

function fillDetail(element, card) {
  const owner = ownerName(card);
  clear(element.querySelector(".owner"),
    h("span", { class: "label" }, t("board.ownerLabel")), owner ?? t("board.unassigned"));
  const tags = element.querySelector(".tags");
  clear(tags, card.tags === null ? null : card.tags.map(tagChip));
  paintSwatches(tags);
  const time = element.querySelector(".time");
  if (!card.columnChangedAt) {
    clear(time, h("span", { class: "muted" }, "…"));
    return;
  }
  const column = columnOf(card.columnId);
  const stayed = Date.now() - new Date(card.columnChangedAt).getTime();
  const limitMs = (column?.timeLimitDays ?? 0) * DAY_MS;
  const showsBadge = Boolean(column?.showBadgeProgress && column?.timeLimitDays);
  clear(time,
    h("span", { title: t("board.since", { time: formatTime(card.columnChangedAt) }) },
      t("board.inColumn", { span: formatSpan(stayed) })),
    showsBadge && stayed > limitMs ? [" ", badge(t("board.overdue"), "danger")] : null,
    showsBadge && stayed <= limitMs
      ? [" ", badge(t("board.dayOf", { day: Math.floor(stayed / DAY_MS) + 1, days: column.timeLimitDays }), "info")]
      : null);
}

async function loadMore(columnId) {
  const column = columnOf(columnId);
  if (!column) return;
  const page = column.page + 1;
  const board = await attempt(t("board.loadMore", { name: column.name }), () =>
    api("GET", `/funnel/${encodeURIComponent(state.board.id)}`, { query: boardQuery(page) }));
  const fresh = board?.columns.find((c) => c.id === columnId);
  if (!fresh) return;
  const known = new Set(column.items.map((c) => c.id));
  const added = fresh.items.map(fromItem).filter((c) => !known.has(c.id));
  column.items.push(...added);
  column.page = fresh.page;
  column.hasMore = fresh.hasMore;
  column.total = fresh.total;
  const section = columnsBox().querySelector(`section[data-column-id="${CSS.escape(columnId)}"]`);
  fillColumn(section, column);
  announce(t("board.moreCards", { count: added.length, name: column.name }));
  await loadDetails(added);
  cardElement(added[0]?.id ?? "")?.querySelector("select")?.focus();
}

async function moveCard(cardId, toColumnId) {
  const from = state.board?.columns.find((c) => c.items.some((card) => card.id === cardId));
  const to = columnOf(toColumnId);
  if (!from || !to || from.id === to.id) return;
  const card = from.items.find((c) => c.id === cardId);
  const answer = await attempt(t("board.moving", { name: card.person?.name ?? t("board.card"), column: to.name }), () =>
    api("PATCH", `/funnel-column-card/${encodeURIComponent(cardId)}`, {
      body: { columnId: toColumnId },
    }));
  if (!answer) return;
  const moved = fromDetail(answer);
  const landed = columnOf(moved.columnId) ?? to;
  from.items = from.items.filter((c) => c.id !== cardId);
  from.total -= 1;
  landed.items.unshift(moved);
  landed.total += 1;
  for (const column of new Set([from, landed])) {
    fillColumn(columnsBox().querySelector(`section[data-column-id="${CSS.escape(column.id)}"]`), column);
  }
  announce(t("board.moved", { name: moved.person?.name ?? t("board.card"), column: landed.name }));
  cardElement(cardId)?.querySelector("select")?.focus();
}
