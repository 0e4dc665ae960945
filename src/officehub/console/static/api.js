// Every call of the console goes through the public API, either with the session a person
// signed in to with email and password (an HttpOnly cookie of this origin, plus the CSRF
// token on unsafe calls) or with the API key an integrator pasted. The key or the CSRF
// token lives in sessionStorage only (this tab, until it closes or "Log out").

import { t } from "./i18n.js";

const KEY_NAME = "officehub.apiKey";
const CSRF_NAME = "officehub.csrfToken";
const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);
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
  sessionStorage.removeItem(CSRF_NAME);
}

export function getCsrfToken() {
  return sessionStorage.getItem(CSRF_NAME);
}

export function setCsrfToken(token) {
  sessionStorage.setItem(CSRF_NAME, token);
}

/** Signed in, by a session (cookie and CSRF token) or by a key. */
export function isSignedIn() {
  return Boolean(getKey() || getCsrfToken());
}

/** The URL of an API path under the console's origin (the stream's, for one). */
export function apiUrl(path, query) {
  return urlOf(path, query);
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
  const headers = { accept: "application/json" };
  const apiKey = key ?? getKey();
  if (apiKey) headers["x-service-api-key"] = apiKey;
  else if (!SAFE_METHODS.has(method) && getCsrfToken()) headers["x-csrf-token"] = getCsrfToken();
  const init = { method, headers, cache: "no-store", credentials: apiKey ? "omit" : "same-origin" };
  if (body instanceof FormData) {
    init.body = body; // multipart: the browser writes the boundary
  } else if (body !== undefined) {
    headers["content-type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(urlOf(path, query), init);
  } catch (error) {
    throw new ApiError(0, "NETWORK_ERROR", t("error.network"), String(error));
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
      (isBody && data.message) || response.statusText || t("error.failed"),
      isBody && data.details !== undefined ? String(data.details) : text.slice(0, 500),
    );
  }
  return data;
}

/** Fetches a file the API answers (a zip, a CSV) with the page's credentials and saves it
 * as `fileName`; rejects with an ApiError as `api` does (the error body is JSON). */
export async function download(path, { query, accept, fileName }) {
  const headers = { accept };
  const apiKey = getKey();
  if (apiKey) headers["x-service-api-key"] = apiKey;
  let response;
  try {
    response = await fetch(urlOf(path, query), {
      headers, cache: "no-store", credentials: apiKey ? "omit" : "same-origin",
    });
  } catch (error) {
    throw new ApiError(0, "NETWORK_ERROR", t("error.network"), String(error));
  }
  if (!response.ok) {
    const body = await response.json().catch(() => ({}));
    throw new ApiError(response.status, body.code ?? `HTTP_${response.status}`,
      body.message ?? response.statusText ?? t("error.failed"),
      body.details !== undefined ? String(body.details) : "");
  }
  const url = URL.createObjectURL(await response.blob());
  const link = document.createElement("a");
  link.href = url;
  link.download = fileName;
  link.hidden = true;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
  return true;
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
