// Every call of the console goes through the public API with the key the person pasted.
// The key lives in sessionStorage only (this tab, until it closes or "Log out").

const KEY_NAME = "officehub.apiKey";
const API_BASE = new URL("..", import.meta.url);

export class ApiError extends Error {
  constructor(status, code, message, details) {
    super(message);
    this.name = "ApiError";
    this.status = status;
    this.code = code;
    this.details = details;
  }
}

export function getKey() {
  return sessionStorage.getItem(KEY_NAME);
}

export function setKey(key) {
  sessionStorage.setItem(KEY_NAME, key);
}

export function clearKey() {
  sessionStorage.removeItem(KEY_NAME);
}

function urlOf(path, query) {
  const url = new URL(path.replace(/^\//, ""), API_BASE);
  for (const [name, value] of Object.entries(query ?? {})) {
    if (value === undefined || value === null || value === "") continue;
    for (const one of Array.isArray(value) ? value : [value]) url.searchParams.append(name, one);
  }
  return url;
}

/** Calls the API; resolves to the JSON answer, or rejects with an ApiError carrying the
 * error body's message, code and details (never swallowed: callers show it). */
export async function api(method, path, { query, body, key } = {}) {
  const headers = { "x-service-api-key": key ?? getKey() ?? "", accept: "application/json" };
  const init = { method, headers, cache: "no-store", credentials: "omit" };
  if (body !== undefined) {
    headers["content-type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(urlOf(path, query), init);
  } catch (error) {
    throw new ApiError(0, "NETWORK_ERROR", "The API could not be reached", String(error));
  }
  const text = await response.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = null;
  }
  if (!response.ok) {
    const isBody = data && typeof data === "object";
    throw new ApiError(
      response.status,
      (isBody && data.code) || `HTTP_${response.status}`,
      (isBody && data.message) || response.statusText || "Request failed",
      isBody && data.details !== undefined ? String(data.details) : text.slice(0, 500),
    );
  }
  return data;
}

/** Every page of a paged list ({data, totalPages}), up to `maxPages`. */
export async function listAll(path, query = {}, maxPages = 10) {
  const items = [];
  for (let page = 1; page <= maxPages; page += 1) {
    const answer = await api("GET", path, { query: { ...query, page, limit: 100 } });
    items.push(...answer.data);
    if (page >= (answer.totalPages ?? 1)) break;
  }
  return items;
}

/** Runs `work` on every item, at most `limit` at once; resolves when all settled. */
export async function eachLimited(items, limit, work) {
  let next = 0;
  async function worker() {
    while (next < items.length) {
      const index = next;
      next += 1;
      await work(items[index], index);
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}
