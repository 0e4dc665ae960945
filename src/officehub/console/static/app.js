// The console's shell: log in with a key, switch views by the URL's hash, log out.

import { api, clearKey, getKey, setKey } from "./api.js";
import { announce, clearError, showError } from "./ui.js";
import * as board from "./board.js";
import * as conversations from "./conversations.js";
import * as clientsMap from "./map.js";
import * as webhooks from "./webhooks.js";

const VIEWS = { board, conversations, map: clientsMap, webhooks };
const DEFAULT_VIEW = "board";
let current = null;

function section(name) {
  return document.getElementById(`view-${name}`);
}

function showOnly(name) {
  for (const element of document.querySelectorAll(".view")) {
    element.hidden = element.id !== `view-${name}`;
  }
  for (const link of document.querySelectorAll("#nav a")) {
    if (link.dataset.view === name) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
}

function loggedIn(yes) {
  document.getElementById("nav").hidden = !yes;
  document.getElementById("logout").hidden = !yes;
}

async function route() {
  if (!getKey()) {
    loggedIn(false);
    current = null;
    showOnly("login");
    document.getElementById("api-key").focus();
    return;
  }
  loggedIn(true);
  const name = location.hash.slice(1) in VIEWS ? location.hash.slice(1) : DEFAULT_VIEW;
  if (name === current) return;
  current = name;
  clearError();
  showOnly(name);
  const view = section(name);
  view.querySelector("h1")?.setAttribute("tabindex", "-1");
  view.querySelector("h1")?.focus({ preventScroll: true });
  await VIEWS[name].show(view);
}

async function logIn(event) {
  event.preventDefault();
  const input = document.getElementById("api-key");
  const key = input.value.trim();
  if (!key) return;
  clearError();
  try {
    await api("GET", "/inbox", { query: { limit: 1 }, key });
  } catch (error) {
    // A key without the read scope is still a key of the office: let it in, say why
    // reads will fail. Any other answer (401: unknown or revoked) keeps the person out.
    if (error.status !== 403) {
      showError(error, "Log in");
      input.select();
      return;
    }
    showError(error, "This key cannot read");
  }
  setKey(key);
  input.value = "";
  announce("Logged in.");
  current = null;
  if (!location.hash) location.hash = `#${DEFAULT_VIEW}`;
  await route();
}

function logOut() {
  clearKey();
  clearError();
  announce("Logged out: the key was removed from this tab.");
  for (const view of Object.values(VIEWS)) view.reset?.();
  current = null;
  history.replaceState(null, "", location.pathname);
  route();
}

document.getElementById("login-form").addEventListener("submit", logIn);
document.getElementById("logout").addEventListener("click", logOut);
window.addEventListener("hashchange", () => route());
route();
