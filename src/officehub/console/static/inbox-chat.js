// The open conversation as a chat: a header with who and the hand-off (assign, close, more),
// the messages as bubbles with delivery ticks, quotes, reactions and media, the private
// notes inline in another colour, and the composer fixed at the bottom (reply or note, `/`
// for fast messages, a template picker while WhatsApp's 24-hour window is closed).

import { html, useEffect, useRef } from "./html.js";
import { t } from "./i18n.js";
import { formatTime, neutralised } from "./ui.js";
import { Chip, Identity } from "./client-file.js";

const n = (text) => (text == null ? "" : neutralised(String(text)));
const STATUS_KIND = { FAILED: "danger", READ: "ok", DELIVERED: "ok", SENT: "info" };
const TICKS = { SENT: "✓", DELIVERED: "✓✓", READ: "✓✓" };

export function messageText(message) {
  if (message.text) return message.text;
  if (message.templateName) return t("message.template", { name: message.templateName });
  if (message.content?.kind === "media") return message.content.caption ?? message.content.fileName ?? t("type.MEDIA");
  return message.mediaUrl ? "" : t(`type.${message.type}`);
}

/** Why the platform refused a message: its code, title and details, as it said them. */
function failureReason(message) {
  const detail = message.errorDetail;
  const said = [detail?.code, detail?.title, detail?.details && detail.details !== detail.title
    ? detail.details : null].filter(Boolean).join(" · ");
  return said || message.error || t("message.noReason");
}

/** A document's mark, drawn (an emoji shows as a box where no emoji font is installed). */
export const FILE_ICON = html`<svg class="icon" viewBox="0 0 24 24" width="18" height="18" aria-hidden="true"
  focusable="false"><path fill="none" stroke="currentColor" stroke-width="2" stroke-linejoin="round"
  d="M6 2h8l5 5v15H6zM14 2v5h5M9 13h7M9 17h7"/></svg>`;

function Media({ message }) {
  if (!message.mediaUrl) return null;
  const kind = message.content?.mediaKind;
  const label = message.content?.fileName ?? t("inbox.attachment");
  if (kind === "image" || kind === "sticker") {
    return html`<a class="media" href=${message.mediaUrl} target="_blank" rel="noopener">
      <img src=${message.mediaUrl} alt=${n(message.content?.caption ?? label)} loading="lazy" /></a>`;
  }
  if (kind === "audio") return html`<audio class="media" controls src=${message.mediaUrl}></audio>`;
  if (kind === "video") return html`<video class="media" controls src=${message.mediaUrl}></video>`;
  return html`<a class="media file" href=${message.mediaUrl} target="_blank" rel="noopener">${FILE_ICON} ${n(label)}</a>`;
}

function Bubble({ message, byId, onQuote, onReact }) {
  const outbound = message.direction === "OUTBOUND";
  const quoted = message.replyTo ? byId.get(message.replyTo) : null;
  const text = messageText(message);
  return html`<li class=${`message ${outbound ? "outbound" : "inbound"}`}
      data-message-id=${message.id} data-status=${message.status}>
    <p class="who">${outbound ? n(message.userName ?? t("message.office")) : t("message.contact")}</p>
    ${message.replyTo ? html`<blockquote class="quoted" data-reply-to=${message.replyTo}>
      ${quoted ? n(messageText(quoted)) : t("message.quotedElsewhere")}</blockquote>` : null}
    <${Media} message=${message} />
    ${text ? html`<p class="text">${n(text)}</p>` : null}
    ${message.reactions?.length ? html`<p class="reactions" aria-label=${t("inbox.reactions")}>
      ${message.reactions.map((r) => html`<span class="reaction" title=${t(`inbox.reactionFrom.${r.from}`)}>${n(r.emoji)}</span>`)}</p>` : null}
    <p class="meta">${formatTime(message.createdAt)}
      ${outbound ? html` <span class="ticks" data-read=${String(message.status === "READ")} aria-hidden="true">${TICKS[message.status] ?? ""}</span>` : null}
      ${" "}<span class=${`badge ${STATUS_KIND[message.status] ?? "muted"}`}>${t(`message.${message.status}`)}</span>
      ${" "}<button type="button" class="link quote-button" title=${t("message.quote")}
        aria-label=${n(t("message.quoteLabel", { text: text.slice(0, 40) }))}
        onClick=${() => onQuote(message)}><span aria-hidden="true">↩</span></button>
      ${!outbound && onReact ? html` ${reactButton(message, onReact)}` : null}</p>
    ${message.status === "FAILED"
      ? html`<p class="error-text">${n(t("message.failedBecause", { reason: failureReason(message) }))}</p>` : null}
  </li>`;
}

function Note({ note, authorOf }) {
  const author = note.userId ? authorOf(note.userId) : null;
  return html`<li class="note" data-note-id=${note.id}>
    <p class="who">${t("inbox.noteLabel")}</p>
    <p>${n(note.text)}</p>
    <p class="meta">${formatTime(note.createdAt)}${author ? n(t("note.by", { name: author })) : ""}</p>
  </li>`;
}

/** The office's 👍 on a client's message, or its removal once given. */
function reactButton(message, onReact) {
  const given = (message.reactions ?? []).some((r) => r.from === "OFFICE");
  return html`<button type="button" class="link react-button" aria-pressed=${String(given)}
    title=${t("inbox.reactTitle")} onClick=${() => onReact(message, given ? "" : "👍")}>${t("inbox.react")}</button>`;
}

/** The messages and the notes, oldest first, in one timeline. */
export function Timeline({ messages, notes, authorOf, onQuote, onReact, hasOlder, onOlder, empty }) {
  const box = useRef(null);
  const count = messages.length + notes.length;
  const last = messages[messages.length - 1]?.id;
  useEffect(() => {
    const element = box.current;
    if (element) element.scrollTop = element.scrollHeight;
  }, [last, notes.length]);
  const byId = new Map(messages.map((m) => [m.id, m]));
  const entries = [
    ...messages.map((m) => ({ at: m.createdAt, message: m })),
    ...notes.map((note) => ({ at: note.createdAt, note })),
  ].sort((a, b) => a.at.localeCompare(b.at));
  return html`<div class="timeline" ref=${box} tabindex="0" aria-label=${t("conversation.messages")}>
    ${hasOlder ? html`<button type="button" class="secondary" id="older-messages" onClick=${onOlder}>
      ${t("conversation.older")}</button>` : null}
    <ol id="message-list" class="message-list" aria-live="polite">
      ${count ? entries.map((e) => e.message
        ? html`<${Bubble} key=${e.message.id} message=${e.message} byId=${byId} onQuote=${onQuote} onReact=${onReact} />`
        : html`<${Note} key=${e.note.id} note=${e.note} authorOf=${authorOf} />`)
        : html`<li class="muted">${empty}</li>`}
    </ol>
  </div>`;
}

export { Chip, Identity };
