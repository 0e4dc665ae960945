/* officehub web chat widget: no dependencies, no third-party assets.
 * Renders in a shadow root (the site's CSS does not reach it), asks the visitor's name and
 * phone or email, then streams the conversation by server-sent events read with fetch()
 * (so the visitor token travels in a header, never in a URL). The token is kept in
 * localStorage: a returning visitor finds the same conversation. A visitor who gave a phone
 * may confirm it with the one-time code the office sends to that phone's WhatsApp. */
(function () {
  "use strict";
  var CONFIG = /*CONFIG*/{};
  var T = CONFIG.texts || {};
  var script = document.currentScript;
  var base = new URL(script && script.src ? script.src : location.href).origin;
  var api = base + "/webchat/" + encodeURIComponent(CONFIG.integrationId);
  var storeKey = "officehub-webchat:" + CONFIG.integrationId;
  var token = null;
  try { token = localStorage.getItem(storeKey); } catch (e) { token = null; }
  var shown = {};
  var streaming = false;
  var streamAbort = null;

  // An element of our own name, its inline style resetting whatever the site's CSS says.
  var host = document.createElement("officehub-webchat");
  host.setAttribute("data-officehub-webchat", CONFIG.integrationId);
  host.setAttribute("style", "all:initial;display:block;width:0;height:0;border:0;margin:0");
  var root = host.attachShadow({ mode: "open" });
  root.innerHTML =
    "<style>" +
    ":host{all:initial}" +
    "[hidden]{display:none!important}" +
    "*{box-sizing:border-box;font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif}" +
    ".bubble{position:fixed;right:20px;bottom:20px;width:60px;height:60px;border-radius:50%;" +
    "border:0;background:#1d4ed8;color:#fff;font-size:28px;cursor:pointer;" +
    "box-shadow:0 4px 14px rgba(0,0,0,.3);z-index:2147483646}" +
    ".bubble:focus-visible,button:focus-visible,input:focus-visible,textarea:focus-visible" +
    "{outline:3px solid #f59e0b;outline-offset:2px}" +
    ".panel{position:fixed;right:20px;bottom:92px;width:340px;max-width:calc(100vw - 40px);" +
    "height:460px;max-height:calc(100vh - 120px);background:#fff;color:#111827;border-radius:12px;" +
    "box-shadow:0 8px 30px rgba(0,0,0,.25);display:flex;flex-direction:column;overflow:hidden;" +
    "z-index:2147483647}" +
    "header{background:#1d4ed8;color:#fff;padding:12px 14px;font-weight:600;font-size:15px;" +
    "display:flex;justify-content:space-between;align-items:center}" +
    "header button{background:transparent;border:0;color:#fff;font-size:20px;cursor:pointer}" +
    ".log{flex:1;overflow-y:auto;padding:12px;background:#f3f4f6;font-size:14px}" +
    ".msg{max-width:80%;padding:8px 10px;border-radius:10px;margin:4px 0;white-space:pre-wrap;" +
    "word-wrap:break-word;line-height:1.35;unicode-bidi:isolate}" +
    ".title,.greeting{unicode-bidi:isolate}" +
    ".verify{padding:8px 12px 0;border-top:1px solid #e5e7eb;font-size:13px}" +
    ".verify .note{margin:0 0 6px}" +
    ".verify form{padding:0;border:0}" +
    ".link{background:transparent;border:0;color:#1d4ed8;text-decoration:underline;" +
    "cursor:pointer;font-size:13px;padding:2px 0;text-align:left}" +
    ".in{background:#1d4ed8;color:#fff;margin-left:auto}" +
    ".out{background:#fff;color:#111827;border:1px solid #d1d5db}" +
    ".note{color:#374151;font-size:13px;margin:4px 0 10px}" +
    "form{display:flex;flex-direction:column;gap:8px;padding:12px;border-top:1px solid #e5e7eb}" +
    "label{font-size:13px;color:#374151;display:flex;flex-direction:column;gap:4px}" +
    "input,textarea{font-size:14px;padding:8px;border:1px solid #6b7280;border-radius:6px;" +
    "color:#111827;background:#fff;width:100%}" +
    "textarea{resize:none;height:60px}" +
    ".send{background:#1d4ed8;color:#fff;border:0;border-radius:6px;padding:9px;font-size:14px;" +
    "cursor:pointer;font-weight:600}" +
    ".error{color:#b91c1c;font-size:13px;margin:0}" +
    ".error:empty{display:none}" +
    ".bubble svg{display:block;margin:auto}" +
    "</style>" +
    "<button class='bubble' type='button' aria-label='Abrir o chat' aria-expanded='false'>" +
    "<svg width='28' height='28' viewBox='0 0 24 24' aria-hidden='true' fill='none' " +
    "stroke='currentColor' stroke-width='2' stroke-linecap='round' stroke-linejoin='round'>" +
    "<path d='M21 15a2 2 0 0 1-2 2H7l-4 4V5a2 2 0 0 1 2-2h14a2 2 0 0 1 2 2z'/></svg></button>" +
    "<section class='panel' role='dialog' aria-label='Chat' hidden>" +
    "<header><span class='title'></span>" +
    "<button type='button' class='close' aria-label='Fechar o chat'>&times;</button></header>" +
    "<div class='log' role='log' aria-live='polite'><p class='note greeting' dir='auto'></p></div>" +
    "<div class='verify' hidden>" +
    "<p class='note verify-text' role='status'></p>" +
    "<button type='button' class='link ask-code'></button>" +
    "<form class='code' hidden>" +
    "<label><span class='code-text'></span><input name='code' inputmode='numeric' " +
    "autocomplete='one-time-code' pattern='[0-9]{6}' minlength='6' maxlength='6' required></label>" +
    "<button class='send' type='submit'></button>" +
    "<button type='button' class='link resend'></button></form>" +
    "<p class='error' role='alert'></p></div>" +
    "<form class='start'>" +
    "<label>Seu nome<input name='name' autocomplete='name' required maxlength='200'></label>" +
    "<label class='contact-label'><span class='contact-text'></span>" +
    "<input name='contact' required maxlength='320'></label>" +
    "<button class='send' type='submit'>Começar</button>" +
    "<p class='error' role='alert'></p></form>" +
    "<form class='compose' hidden>" +
    "<label>Mensagem<textarea name='text' required maxlength='4096'></textarea></label>" +
    "<button class='send' type='submit'>Enviar</button>" +
    "<p class='error' role='alert'></p></form>" +
    "</section>";

  var $ = function (selector) { return root.querySelector(selector); };
  var bubble = $(".bubble");
  var panel = $(".panel");
  var log = $(".log");
  var startForm = $(".start");
  var composeForm = $(".compose");
  // Bidirectional controls (embeddings, overrides, isolates, LRM/RLM) reorder what follows
  // them on screen: "abc\u202Egpj.exe" reads "abcexe.jpg". Every text the widget shows has
  // them replaced by a visible mark (as the console does), in an element isolated from its
  // neighbours (unicode-bidi: isolate, dir=auto); the API keeps the original characters.
  var BIDI_CONTROLS = /[\u200E\u200F\u202A-\u202E\u2066-\u2069]/g;
  function neutralised(text) {
    return String(text).replace(BIDI_CONTROLS, function (c) {
      var hex = c.charCodeAt(0).toString(16).toUpperCase();
      return "\u27E6U+" + ("0000" + hex).slice(-4) + "\u27E7";
    });
  }
  function show(element, text) {
    element.textContent = neutralised(text);
    element.dir = "auto";
  }
  show($(".title"), CONFIG.title || "Chat");
  show($(".greeting"), CONFIG.greeting || "");
  var asksEmail = CONFIG.ask === "EMAIL";
  $(".contact-text").textContent = asksEmail ? "Seu e-mail" : "Seu telefone (com DDD)";
  var contactInput = startForm.elements.contact;
  contactInput.type = asksEmail ? "email" : "tel";
  contactInput.autocomplete = asksEmail ? "email" : "tel";
  // The server refuses any other page's origin (a preflight the browser hides from us):
  // say why rather than "Sem conexão".
  var originAllowed = (CONFIG.allowedOrigins || []).indexOf(location.origin) >= 0;
  var ORIGIN_REFUSED = "Este site (" + location.origin + ") não está autorizado a usar " +
    "este chat. Avise o escritório para incluí-lo nas origens permitidas do chat.";
  function unreachable() { return originAllowed ? "Sem conexão. Tente de novo." : ORIGIN_REFUSED; }
  if (!originAllowed) { startForm.querySelector(".error").textContent = ORIGIN_REFUSED; }

  function setOpen(open) {
    panel.hidden = !open;
    bubble.setAttribute("aria-expanded", open ? "true" : "false");
    if (open) {
      (token ? composeForm.elements.text : startForm.elements.name).focus();
      if (token) { connect(); }
    }
  }
  bubble.addEventListener("click", function () { setOpen(panel.hidden); });
  $(".close").addEventListener("click", function () { setOpen(false); bubble.focus(); });
  panel.addEventListener("keydown", function (event) {
    if (event.key === "Escape") { setOpen(false); bubble.focus(); }
  });

  function showChat(ready) {
    startForm.hidden = ready;
    composeForm.hidden = !ready;
    verifyBox.hidden = true;
    if (ready && !asksEmail) { checkVerified(); }
  }

  function render(message) {
    if (shown[message.id]) { return; }
    shown[message.id] = true;
    var item = document.createElement("div");
    item.className = "msg " + (message.direction === "INBOUND" ? "in" : "out");
    item.setAttribute("data-id", message.id);
    if (message.text) { show(item, message.text); }
    if (message.mediaUrl && /^https?:\/\//.test(message.mediaUrl)) {
      var link = document.createElement("a");
      link.href = message.mediaUrl;
      link.target = "_blank";
      link.rel = "noopener noreferrer";
      var label = message.fileName || "Anexo";
      link.textContent = message.text ? " (" + label + ")" : label;
      item.appendChild(link);
    }
    log.appendChild(item);
    log.scrollTop = log.scrollHeight;
  }

  function forget() {
    token = null;
    try { localStorage.removeItem(storeKey); } catch (e) { /* private mode */ }
    if (streamAbort) { streamAbort.abort(); }
    showChat(false);
  }

  function call(method, path, body) {
    var headers = { "content-type": "application/json" };
    if (token) { headers["x-visitor-token"] = token; }
    return fetch(api + path, {
      method: method,
      headers: headers,
      body: body ? JSON.stringify(body) : undefined,
      credentials: "omit",
      mode: "cors"
    });
  }

  function problem(response) {
    return response.json().then(function (body) {
      return (body && body.details) || "Não foi possível enviar.";
    }, function () { return "Não foi possível enviar."; });
  }

  function connect() {
    if (streaming || !token) { return; }
    streaming = true;
    streamAbort = new AbortController();
    fetch(api + "/events", {
      headers: { "x-visitor-token": token, accept: "text/event-stream" },
      credentials: "omit",
      mode: "cors",
      signal: streamAbort.signal
    }).then(function (response) {
      if (response.status === 401 || response.status === 404) { forget(); return null; }
      if (!response.ok || !response.body) { throw new Error("stream " + response.status); }
      var reader = response.body.getReader();
      var decoder = new TextDecoder();
      var buffer = "";
      function pump() {
        return reader.read().then(function (chunk) {
          if (chunk.done) { return null; }
          buffer += decoder.decode(chunk.value, { stream: true });
          var parts = buffer.split("\n\n");
          buffer = parts.pop();
          parts.forEach(function (part) {
            var data = [];
            var kind = "message";
            part.split("\n").forEach(function (line) {
              if (line.indexOf("data:") === 0) { data.push(line.slice(5).trim()); }
              if (line.indexOf("event:") === 0) { kind = line.slice(6).trim(); }
            });
            if (kind === "message" && data.length) {
              try { render(JSON.parse(data.join("\n"))); } catch (e) { /* skip */ }
            }
          });
          return pump();
        });
      }
      return pump();
    }).catch(function () { return null; }).then(function () {
      streaming = false;
      if (token) { setTimeout(connect, 2000); }
    });
  }

  startForm.addEventListener("submit", function (event) {
    event.preventDefault();
    var error = startForm.querySelector(".error");
    error.textContent = "";
    var body = { name: startForm.elements.name.value };
    body[asksEmail ? "email" : "phone"] = contactInput.value;
    call("POST", "/start", body).then(function (response) {
      if (!response.ok) {
        return problem(response).then(function (text) { error.textContent = text; });
      }
      return response.json().then(function (answer) {
        token = answer.token;
        try { localStorage.setItem(storeKey, token); } catch (e) { /* private mode */ }
        showChat(true);
        composeForm.elements.text.focus();
        connect();
      });
    }).catch(function () { error.textContent = unreachable(); });
  });

  composeForm.addEventListener("submit", function (event) {
    event.preventDefault();
    var error = composeForm.querySelector(".error");
    var field = composeForm.elements.text;
    var text = field.value.trim();
    if (!text) { return; }
    error.textContent = "";
    var clientId = Date.now().toString(36) + Math.random().toString(36).slice(2, 10);
    call("POST", "/messages", { text: text, clientId: clientId }).then(function (response) {
      if (response.status === 401 || response.status === 404) { forget(); return null; }
      if (!response.ok) {
        return problem(response).then(function (detail) { error.textContent = detail; });
      }
      field.value = "";
      return response.json().then(render);
    }).catch(function () { error.textContent = unreachable(); });
  });
  composeForm.elements.text.addEventListener("keydown", function (event) {
    if (event.key === "Enter" && !event.shiftKey) {
      event.preventDefault();
      composeForm.requestSubmit();
    }
  });

  // Confirming the phone: a code goes to its WhatsApp, the visitor types it here.
  var verifyBox = $(".verify");
  var verifyText = $(".verify-text");
  var askCode = $(".ask-code");
  var codeForm = $(".code");
  var verifyError = verifyBox.querySelector(".error");
  askCode.textContent = T.verifyButton || "";
  $(".code-text").textContent = T.codeLabel || "";
  codeForm.querySelector(".send").textContent = T.confirmButton || "";
  $(".resend").textContent = T.resendButton || "";

  function fill(template, values) {
    return String(template || "").replace(/\{(\w+)\}/g, function (_, name) {
      return values[name] === undefined ? "" : String(values[name]);
    });
  }
  function verifyProblem(response) {
    return response.json().then(function (body) {
      var code = body && body.code;
      if (code === "WRONG_CODE") {
        var left = /(\d+) attempt/.exec(body.details || "");
        return fill(T.WRONG_CODE, { left: left ? left[1] : "0" });
      }
      return T[code] || T.failed;
    }, function () { return T.failed; });
  }
  function verifiedNow() {
    verifyBox.hidden = false;
    verifyText.textContent = T.verified || "";
    askCode.hidden = true;
    codeForm.hidden = true;
    verifyError.textContent = "";
  }
  function checkVerified() {
    call("GET", "/verification").then(function (response) {
      if (!response.ok) { return null; }
      return response.json().then(function (state) {
        if (state.verified) { verifiedNow(); return; }
        verifyBox.hidden = false;
        verifyText.textContent = T.verifyOffer || "";
        askCode.hidden = false;
      });
    }).catch(function () { return null; });
  }
  function requestCode() {
    verifyError.textContent = "";
    call("POST", "/verification").then(function (response) {
      if (!response.ok) {
        return verifyProblem(response).then(function (text) { verifyError.textContent = text; });
      }
      return response.json().then(function (sent) {
        verifyText.textContent = fill(T.codeSent, { last4: sent.phoneEnding });
        askCode.hidden = true;
        codeForm.hidden = false;
        codeForm.elements.code.value = "";
        codeForm.elements.code.focus();
      });
    }).catch(function () { verifyError.textContent = unreachable(); });
  }
  askCode.addEventListener("click", requestCode);
  $(".resend").addEventListener("click", requestCode);
  codeForm.addEventListener("submit", function (event) {
    event.preventDefault();
    verifyError.textContent = "";
    var code = codeForm.elements.code.value.replace(/\D/g, "");
    call("POST", "/verification/confirm", { code: code }).then(function (response) {
      if (!response.ok) {
        return verifyProblem(response).then(function (text) { verifyError.textContent = text; });
      }
      verifiedNow();
      return null;
    }).catch(function () { verifyError.textContent = unreachable(); });
  });

  showChat(Boolean(token));
  (document.body || document.documentElement).appendChild(host);
})();
