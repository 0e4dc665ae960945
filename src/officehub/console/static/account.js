// The signed-in person's own account: the TOTP second factor. Turning it on draws the
// authenticator's QR code here (qr.js: the secret never goes to an image service) and
// shows the secret as text for typing; a current code confirms it and the ten recovery
// codes are shown once. Turning it off takes a current code or a recovery code.

import { api } from "./api.js";
import { t } from "./i18n.js";
import { announce, attempt, clear, h } from "./ui.js";
import { qrSvg } from "./qr.js";

const state = { bound: false, me: null };
const byId = (id) => document.getElementById(id);

/** A code of the authenticator (six digits) or, anything else, a recovery code. */
export function proof(text) {
  const value = text.replace(/\s+/g, "");
  return /^\d{6}$/.test(value) ? { code: value } : { recoveryCode: value };
}

export function signedIn(me) {
  state.me = me;
}

export function reset() {
  state.me = null;
  clearEnrolment();
  clear(byId("totp-recovery"));
  byId("totp-codes").hidden = true;
}

function clearEnrolment() {
  clear(byId("totp-qr"));
  byId("totp-secret").textContent = "";
  byId("totp-enrol").hidden = true;
}

function bind() {
  if (state.bound) return;
  state.bound = true;
  byId("totp-start").addEventListener("click", start);
  byId("totp-confirm-form").addEventListener("submit", confirm);
  byId("totp-disable-form").addEventListener("submit", disable);
}

function paint(active) {
  byId("totp-state").textContent = t(active ? "account.totpOn" : "account.totpOff");
  byId("totp-state").dataset.active = String(active);
  byId("totp-off").hidden = active;
  byId("totp-disable-form").hidden = !active;
  if (active) clearEnrolment();
}

export async function show() {
  bind();
  const me = await attempt(t("account.title"), () => api("GET", "/me"));
  const isUser = Boolean(me?.user);
  byId("account-key").hidden = isUser;
  byId("totp").hidden = !isUser;
  if (isUser) paint(me.totpActive);
}

async function start() {
  const enrolment = await attempt(t("account.totpStart"), () => api("POST", "/me/totp"));
  if (!enrolment) return;
  byId("totp-codes").hidden = true;
  clear(byId("totp-qr"), qrSvg(enrolment.otpauthUri));
  byId("totp-secret").textContent = enrolment.secret.replace(/(.{4})(?=.)/g, "$1 ");
  byId("totp-enrol").hidden = false;
  byId("totp-off").hidden = true;
  byId("totp-confirm-code").focus();
}

async function confirm(event) {
  event.preventDefault();
  const input = byId("totp-confirm-code");
  const answer = await attempt(t("account.totpConfirm"), () =>
    api("POST", "/me/totp/confirm", { body: { code: input.value.replace(/\s+/g, "") } }));
  if (!answer) {
    input.select();
    return;
  }
  input.value = "";
  paint(true);
  clear(byId("totp-recovery"), answer.recoveryCodes.map((code) => h("li", {}, code)));
  byId("totp-codes").hidden = false;
  announce(t("account.totpEnabled"));
}

async function disable(event) {
  event.preventDefault();
  const input = byId("totp-disable-code");
  const answer = await attempt(t("account.totpDisable"), () =>
    api("DELETE", "/me/totp", { body: proof(input.value) }));
  if (!answer) {
    input.select();
    return;
  }
  input.value = "";
  byId("totp-codes").hidden = true;
  clear(byId("totp-recovery"));
  paint(false);
  announce(t("account.totpDisabled"));
}
