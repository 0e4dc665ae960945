// Joining the office: the links `POST /user/{id}/invite`, `POST /auth/password-reset` and
// `officehub user create|reset-password` give (`/console/#invite=…`, `#reset=…`) open this
// page. It takes the token out of the address bar (kept in memory only), asks for the new
// password twice, sets it (`POST /auth/invite/accept`, which answers the user and so their
// email) and signs the person in with it; an account with TOTP (a reset) asks for a code
// of the authenticator, as the sign-in page does.

import { api } from "./api.js";
import { html, render, useRef, useState } from "./html.js";
import { t } from "./i18n.js";
import { clearError, showError } from "./ui.js";
import { proof } from "./account.js";

const LINK = /^#(invite|reset)=(.*)$/;
const MIN_LENGTH = 10;
let pending = null;

/** Whether the address is one of the links (`#invite=…` / `#reset=…`); remembers it. */
export function opened(hash) {
  const match = LINK.exec(hash);
  if (!match) return false;
  pending = { purpose: match[1], token: decodeURIComponent(match[2]).trim() };
  return true;
}

/** Draws the page in `element`; `done(answer, purpose)` gets the sign-in's answer. */
export function show(element, done) {
  const link = pending;
  render(null, element);
  render(html`<${Onboarding} link=${link} done=${done} />`, element);
}

/** Forgets the link (signed in, or the page left). */
export function reset() {
  pending = null;
}

function Onboarding({ link, done }) {
  const usable = Boolean(link?.token);
  const [step, setStep] = useState(usable ? "password" : "missing");
  const [problem, setProblem] = useState(null);
  const [visible, setVisible] = useState(false);
  const [busy, setBusy] = useState(false);
  const [challenge, setChallenge] = useState(null);
  const first = useRef(null);
  const second = useRef(null);
  const code = useRef(null);
  const purpose = link?.purpose === "reset" ? "reset" : "invite";

  function refuse(text, input) {
    setProblem({ text, field: input === second.current ? "repeat" : "password" });
    input?.focus();
  }

  async function save(event) {
    event.preventDefault();
    clearError();
    setProblem(null);
    const password = first.current.value;
    if (password.length < MIN_LENGTH) return refuse(t("onboard.tooShort"), first.current);
    if (password !== second.current.value) return refuse(t("onboard.mismatch"), second.current);
    setBusy(true);
    try {
      let accepted;
      try {
        accepted = await api("POST", "/auth/invite/accept", { body: { token: link.token, password } });
      } catch (error) {
        showError(error, t("onboard.context"));
        if (error.code === "INVALID_TOKEN") setStep("spent");
        else first.current?.select();
        return;
      }
      let answer;
      try {
        answer = await api("POST", "/auth/login", {
          body: { email: accepted.user.email, password },
        });
      } catch (error) {
        showError(error, t("login.title"));
        setStep("saved");
        return;
      }
      if (answer.totpRequired) {
        setChallenge(answer.challenge);
        setStep("code");
        setTimeout(() => code.current?.focus());
        return;
      }
      pending = null;
      await done(answer, purpose);
    } finally {
      setBusy(false);
    }
  }

  async function sendCode(event) {
    event.preventDefault();
    clearError();
    setBusy(true);
    try {
      const answer = await api("POST", "/auth/login/totp", {
        body: { challenge, ...proof(code.current.value) },
      });
      pending = null;
      await done(answer, purpose);
    } catch (error) {
      showError(error, t("login.title"));
      if (error.code === "INVALID_TOKEN") setStep("saved");
      else code.current?.select();
    } finally {
      setBusy(false);
    }
  }

  const title = t(purpose === "reset" ? "onboard.titleReset" : "onboard.titleInvite");
  const toLogin = html`<p><a href="#board" class="onboard-login">${t("onboard.toLogin")}</a></p>`;
  const kind = visible ? "text" : "password";
  const described = (field) =>
    (problem?.field === field ? "onboard-problem onboard-rules" : "onboard-rules");
  return html`
    <div class="onboard">
      <h1 id="onboard-title">${title}</h1>
      ${step === "missing" && html`<p>${t("onboard.noToken")}</p>${toLogin}`}
      ${step === "spent" && toLogin}
      ${step === "saved" && html`<p>${t("onboard.saved")}</p>${toLogin}`}
      ${step === "password" && html`
        <p>${t(purpose === "reset" ? "onboard.introReset" : "onboard.introInvite")}</p>
        <form class="login" onSubmit=${save} novalidate>
          <p id="onboard-rules" class="hint">${t("onboard.rules")}</p>
          <label for="onboard-password">${t("onboard.password")}</label>
          <input id="onboard-password" ref=${first} type=${kind} autocomplete="new-password"
                 required minlength=${MIN_LENGTH} maxlength="200"
                 aria-invalid=${problem?.field === "password" ? "true" : undefined}
                 aria-describedby=${described("password")} />
          <label for="onboard-repeat">${t("onboard.repeat")}</label>
          <input id="onboard-repeat" ref=${second} type=${kind} autocomplete="new-password"
                 required maxlength="200"
                 aria-invalid=${problem?.field === "repeat" ? "true" : undefined}
                 aria-describedby=${described("repeat")} />
          ${problem && html`<p id="onboard-problem" class="field-problem" role="alert">${problem.text}</p>`}
          <label class="check">
            <input type="checkbox" checked=${visible}
                   onChange=${(event) => setVisible(event.currentTarget.checked)} />
            <span>${t("onboard.show")}</span>
          </label>
          <button type="submit" disabled=${busy}>${t("onboard.submit")}</button>
        </form>`}
      ${step === "code" && html`
        <form class="login" onSubmit=${sendCode}>
          <p>${t("onboard.codeIntro")}</p>
          <label for="onboard-code">${t("onboard.code")}</label>
          <input id="onboard-code" ref=${code} type="text" autocomplete="one-time-code"
                 spellcheck=${false} maxlength="24" required />
          <button type="submit" disabled=${busy}>${t("onboard.codeSubmit")}</button>
        </form>`}
    </div>`;
}
