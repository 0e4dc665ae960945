// The console's shell: sign in (email and password, then a TOTP or recovery code when the
// account has the second factor; or an integrator's API key), show who is signed in, switch views by the URL's hash, choose the language, sign out.

import { api, clearKey, getCsrfToken, getKey, isSignedIn, setCsrfToken, setKey } from "./api.js";
import { language, setLanguage, t, translatePage } from "./i18n.js";
import { announce, clearError, clearLastingAlert, showAlert, showError } from "./ui.js";
import * as account from "./account.js";
import * as alerts from "./alerts.js";
import * as live from "./live.js";
import * as board from "./board.js";
import * as conversations from "./conversations.js";
import * as contacts from "./contacts.js";
import * as clientsMap from "./map.js";
import * as reports from "./reports.js";
import * as webhooks from "./webhooks.js";
import * as notices from "./notices.js";
import * as publications from "./publications.js";
import * as onboarding from "./onboarding.js";
import * as users from "./users.js";
import * as rules from "./rules.js";
import * as flows from "./flows.js";
import { views as settingsViews } from "./settings.js";

const VIEWS = {
  board, conversations, contacts, map: clientsMap, reports, webhooks, notices, publications,
  account, users, rules, flows, ...settingsViews,
};
const DEFAULT_VIEW = "board";
// The pages a signed-in user's role may open (the API's role rules, officehub.kit.auth
// TAG_ROLES): the nav shows no other, and their address says why instead. An API key
// (no user) is shown every page.
const MANAGERS = ["ADMIN", "SUPERVISOR"];
const VIEW_ROLES = {
  webhooks: ["ADMIN"], rules: ["ADMIN"], flows: MANAGERS, reports: MANAGERS, map: MANAGERS,
};
let current = null;
let me = null;
let challenge = null;

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

/** Whether the signed-in person may open this page. */
function allowed(name) {
  const roles = VIEW_ROLES[name];
  return !roles || !me?.user || roles.includes(me.role);
}

/** The nav shows the pages the role may open, and a group only with one of them. */
function fitNav() {
  for (const link of document.querySelectorAll("#nav a[data-view]")) {
    if (!allowed(link.dataset.view)) link.closest("li").hidden = true;
    else if (!(link.dataset.view in VIEW_ROLES)) link.closest("li").hidden = false;
  }
  for (const group of document.querySelectorAll("#nav .nav-group")) {
    group.hidden = ![...group.querySelectorAll("a[data-view]")].some((a) => !a.closest("li").hidden);
  }
}

/** The nav open or folded away behind its "Menu" button (a phone shows the button). */
function openNav(yes) {
  document.getElementById("nav").classList.toggle("folded", !yes);
  document.getElementById("nav-toggle").setAttribute("aria-expanded", String(yes));
}

// A phone (console.css's narrow layout): the nav starts folded, so the page is what one
// sees on arrival, and folds again once a page is chosen. A desktop keeps it open.
const PHONE = window.matchMedia("(max-width: 48rem)");

function loggedIn(yes) {
  document.getElementById("nav").hidden = !yes;
  document.getElementById("nav-toggle").hidden = !yes;
  openNav(!PHONE.matches);
  document.getElementById("logout").hidden = !yes;
  const who = document.getElementById("who");
  who.hidden = !yes;
  if (!yes) {
    who.textContent = "";
    clearLastingAlert(); // the office's alerts are not for whoever signs in next
  } else if (me?.user) {
    who.textContent = t("who.user", { name: me.user.name, role: t(`role.${me.role}`) });
  } else {
    who.textContent = t("who.key");
  }
}

/** The signed-in person ({kind, id, role, user}), or null for a key without a user. */
export function currentActor() {
  return me;
}

async function route() {
  if (onboarding.opened(location.hash) || location.hash === "#onboard") {
    // An invitation or reset link: the token leaves the address bar (and the history).
    history.replaceState(null, "", `${location.pathname}#onboard`);
    return join();
  }
  onboarding.reset();
  if (!isSignedIn()) {
    loggedIn(false);
    current = null;
    showOnly("login");
    document.getElementById("login-email").focus();
    return;
  }
  if (!me && getCsrfToken()) {
    // A reload of a signed-in tab: the cookie still says who; a session ended meanwhile
    // (signed out elsewhere, timed out, user deactivated) answers 401.
    me = await api("GET", "/me").catch(() => null);
    if (!me) {
      clearKey();
      return route();
    }
    began();
  }
  loggedIn(true);
  const asked = location.hash.slice(1) in VIEWS ? location.hash.slice(1) : DEFAULT_VIEW;
  const name = allowed(asked) ? asked : DEFAULT_VIEW;
  if (name !== asked) history.replaceState(null, "", `${location.pathname}#${name}`);
  if (name === current) {
    // a page not for the role typed while the funnel is shown: said all the same
    if (name !== asked) refuse(asked);
    return;
  }
  current = name;
  clearError();
  showOnly(name);
  const view = section(name);
  view.querySelector("h1")?.setAttribute("tabindex", "-1");
  view.querySelector("h1")?.focus({ preventScroll: true });
  await VIEWS[name].show(view);
  // said once the page shown has loaded (its loading clears the notice)
  if (name !== asked) refuse(asked);
}

/** Says that the role may not open the page asked for (its address typed). */
function refuse(asked) {
  const page = document.querySelector(`#nav a[data-view="${asked}"]`)?.textContent ?? asked;
  showAlert(t("nav.notForRole", { page }), "NOT_FOR_ROLE");
}

/** The page of an invitation or reset link: whoever was signed in in this tab is out (the
 * link is someone's own), and its person is signed in once the password is set. */
async function join() {
  if (isSignedIn()) {
    live.stop();
    clearKey();
    me = null;
    for (const view of Object.values(VIEWS)) view.reset?.();
  }
  loggedIn(false);
  current = "onboard";
  clearError();
  showOnly("onboard");
  onboarding.show(section("onboard"), async (answer, purpose) => {
    // Someone invited lands on their account, where the second factor is offered.
    const name = purpose === "invite" ? "account" : DEFAULT_VIEW;
    history.replaceState(null, "", `${location.pathname}#${name}`);
    await signedInAs(answer);
    if (purpose === "invite") announce(t("onboard.welcome", { name: answer.user.name }));
  });
  section("onboard").querySelector("input, a")?.focus();
}

/** A person signed in (or came back to a signed-in tab): the views learn who, and a
 * session or a key opens the live stream. */
function began() {
  for (const view of Object.values(VIEWS)) view.signedIn?.(me);
  fitNav();
  if (getKey()) live.start(getKey());
  else if (me?.user) live.start();
  else live.stop();
}

async function entered() {
  announce(t("login.done"));
  current = null;
  began();
  if (!location.hash) location.hash = `#${DEFAULT_VIEW}`;
  await route();
}

async function signIn(event) {
  event.preventDefault();
  const email = document.getElementById("login-email");
  const password = document.getElementById("login-password");
  clearError();
  let answer;
  try {
    answer = await api("POST", "/auth/login", {
      body: { email: email.value.trim(), password: password.value },
    });
  } catch (error) {
    showError(error, t("login.title"));
    password.select();
    return;
  }
  password.value = "";
  if (answer.totpRequired) {
    // The password was right; the session comes with the second step.
    challenge = answer.challenge;
    askCode(true);
    return;
  }
  await signedInAs(answer);
}

async function signedInAs(answer) {
  setCsrfToken(answer.csrfToken);
  me = { kind: "USER", id: answer.user.id, role: answer.user.role, user: answer.user };
  await entered();
}

function askCode(yes) {
  document.getElementById("password-form").hidden = yes;
  document.getElementById("code-form").hidden = !yes;
  const code = document.getElementById("login-code");
  code.value = "";
  if (yes) code.focus();
  else document.getElementById("login-email").focus();
}

async function sendCode(event) {
  event.preventDefault();
  const input = document.getElementById("login-code");
  clearError();
  let answer;
  try {
    answer = await api("POST", "/auth/login/totp", {
      body: { challenge, ...account.proof(input.value) },
    });
  } catch (error) {
    showError(error, t("login.title"));
    // An unknown or expired challenge (5 minutes): the password again.
    if (error.code === "INVALID_TOKEN") {
      challenge = null;
      askCode(false);
    } else {
      input.select();
    }
    return;
  }
  challenge = null;
  askCode(false);
  await signedInAs(answer);
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
      showError(error, t("login.title"));
      input.select();
      return;
    }
    showError(error, t("login.cannotRead"));
  }
  setKey(key);
  input.value = "";
  me = null;
  await entered();
}

async function logOut() {
  if (getCsrfToken() && !getKey()) {
    await api("POST", "/auth/logout").catch((error) => console.warn("sign-out", error));
  }
  live.stop();
  clearKey();
  me = null;
  clearError();
  announce(t("logout.done"));
  for (const view of Object.values(VIEWS)) view.reset?.();
  current = null;
  history.replaceState(null, "", location.pathname);
  route();
}

translatePage();
alerts.bind();
live.subscribe((name) => {
  if (name === "chat.webchat.flooded") alerts.webchatFlooded();
});
const languageSelect = document.getElementById("language");
languageSelect.value = language;
languageSelect.addEventListener("change", () => setLanguage(languageSelect.value));
document.getElementById("password-form").addEventListener("submit", signIn);
document.getElementById("login-form").addEventListener("submit", logIn);
document.getElementById("code-form").addEventListener("submit", sendCode);
document.getElementById("code-cancel").addEventListener("click", () => {
  challenge = null;
  clearError();
  askCode(false);
});
document.getElementById("logout").addEventListener("click", logOut);
document.getElementById("nav-toggle").addEventListener("click", () => {
  openNav(document.getElementById("nav-toggle").getAttribute("aria-expanded") !== "true");
});
// A page chosen on a phone folds the menu (also the page already shown: no hashchange).
document.getElementById("nav").addEventListener("click", (event) => {
  if (PHONE.matches && event.target.closest("a[data-view]")) openNav(false);
});
// Escape folds an open menu on a phone and gives the focus back to its button.
document.getElementById("nav").addEventListener("keydown", (event) => {
  if (event.key !== "Escape" || !PHONE.matches) return;
  openNav(false);
  document.getElementById("nav-toggle").focus();
});
// Turned from a phone's width to a desktop's, the nav opens (there is no button there).
PHONE.addEventListener("change", () => openNav(!PHONE.matches));
window.addEventListener("hashchange", () => route());
route();
