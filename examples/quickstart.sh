#!/usr/bin/env bash
# The README walkthrough as one script: every call, every id captured from the answer
# before it is used. Stops (exit 1) at the first answer that is not the one expected.
#
#   OFFICEHUB_URL=http://127.0.0.1:8000 OFFICEHUB_API_KEY=ohk_... examples/quickstart.sh
#
# Needs curl, base64 and python3 (for reading JSON). Values that must be
# unique in an office (a channel's device id, a tag's name) carry a number of this run,
# so the script can run again against the same office.
set -euo pipefail

: "${OFFICEHUB_URL:?set OFFICEHUB_URL, e.g. http://127.0.0.1:8000}"
: "${OFFICEHUB_API_KEY:?set OFFICEHUB_API_KEY to the key printed on first start}"
BASE=${OFFICEHUB_URL%/}
RUN=$(( $(date +%s) % 100000 ))
PHONE="(11) 9$(printf '%04d' $((RUN % 10000)))-4321"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# call EXPECTED_STATUS METHOD PATH [curl arguments...]: prints the body; stops on surprise.
call() {
  local expected=$1 method=$2 path=$3
  shift 3
  local status
  status=$(curl -sS -o "$WORK/body" -w '%{http_code}' -X "$method" \
    -H "x-service-api-key: $OFFICEHUB_API_KEY" "$@" "$BASE$path")
  if [[ "$status" != "$expected" ]]; then
    echo "FAILED: $method $path answered $status, expected $expected:" >&2
    cat "$WORK/body" >&2
    echo >&2
    exit 1
  fi
  echo "$method $path -> $status" >&2
  cat "$WORK/body"
}
# post / patch: a JSON body
post() { call "$1" POST "$2" -H 'content-type: application/json' -d "$3"; }
patch() { call "$1" PATCH "$2" -H 'content-type: application/json' -d "$3"; }
# field NAME: reads one field of the JSON answer on stdin
field() {
  python3 -c '
import json, sys
try:
    print(json.load(sys.stdin)[sys.argv[1]])
except (ValueError, KeyError, TypeError):
    sys.exit(f"FAILED: the answer above has no field {sys.argv[1]!r}")' "$1"
}

# --- the service answers --------------------------------------------------------------
curl -sSf "$BASE/healthz" >/dev/null
call 200 GET /webhooks/events >/dev/null

# --- directory: inbox, channel, user and avatar, department, tag, ticket, fast message ---
INBOX_ID=$(post 201 /inbox '{"name": "Atendimento"}' | field id)
INTEGRATION_ID=$(post 201 /integration \
  "{\"inboxId\": \"$INBOX_ID\", \"type\": \"WHATSAPP_OFFICIAL\", \"name\": \"Oficial\", \"deviceId\": \"55119$RUN\"}" |
  field id)
call 200 GET "/integration?inboxId=$INBOX_ID" >/dev/null
USER_ID=$(post 201 /user \
  "{\"name\": \"Ana Lima\", \"email\": \"ana.$RUN@example.com\", \"inboxIds\": [\"$INBOX_ID\"]}" | field id)

# an avatar: a 1x1 PNG written here, so the script needs no file of its own
echo iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGM4MMEAAAOUAYGQYlVYAAAAAElFTkSuQmCC |
  base64 -d >"$WORK/avatar.png"
AVATAR_URL=$(call 200 PUT "/user/$USER_ID/avatar" -F "file=@$WORK/avatar.png" | field imageUrl)
curl -sSf -o /dev/null "$AVATAR_URL" || { echo "FAILED: the avatar link $AVATAR_URL" >&2; exit 1; }
echo "avatar link works: $AVATAR_URL" >&2

post 201 /department '{"name": "Jurídico"}' >/dev/null
TAG_ID=$(post 201 /tag \
  "{\"name\": \"Urgente $RUN\", \"color\": \"#E53935\", \"inboxId\": \"$INBOX_ID\", \"modules\": [\"crm\", \"conversas\"]}" |
  field id)
call 200 GET "/tag?module=crm&inboxId=$INBOX_ID" >/dev/null
call 200 GET /legal-areas >/dev/null
STATUS_ID=$(post 201 /ticket-statuses '{"name": "Aberto"}' | field id)
post 201 /ticket \
  "{\"title\": \"Enviar procuração\", \"statusId\": \"$STATUS_ID\", \"priority\": \"HIGH\", \"assigneeIds\": [\"$USER_ID\"]}" >/dev/null
post 201 /fast-message \
  "{\"inboxId\": \"$INBOX_ID\", \"title\": \"Boas-vindas\", \"kind\": \"SEQUENCE\", \"blocks\": [{\"kind\": \"TEXT\", \"text\": \"Olá!\", \"typingSeconds\": 2, \"waitSeconds\": 1}]}" >/dev/null

# --- contacts, partner link, conversation, messages ---------------------------------------
PERSON_ID=$(post 201 /people "{\"name\": \"José Ávila\", \"phone\": \"$PHONE\"}" | field id)
call 200 GET "/people?search=jose&limit=10" >/dev/null
patch 200 "/people/$PERSON_ID" '{"isBlocked": false}' >/dev/null
LINK_ID=$(post 201 "/integration/partner/contacts/$PERSON_ID/link" \
  '{"partner": {"id": "cpartner0001", "name": "José Ávila", "document": "12345678900", "phone": null}, "source": "MANUAL"}' |
  field linkId)
call 200 GET "/integration/partner/contacts/$PERSON_ID/link" >/dev/null
call 200 DELETE "/integration/partner/contacts/$PERSON_ID/link/$LINK_ID" >/dev/null
CONVERSATION_ID=$(post 201 /conversation \
  "{\"personId\": \"$PERSON_ID\", \"inboxId\": \"$INBOX_ID\", \"integrationId\": \"$INTEGRATION_ID\"}" | field id)
patch 200 "/conversation/$CONVERSATION_ID" "{\"assignedUserId\": \"$USER_ID\", \"priority\": \"HIGH\"}" >/dev/null
post 200 "/conversation/$CONVERSATION_ID/tags" "{\"tagId\": \"$TAG_ID\"}" >/dev/null
post 201 /conversation/note "{\"conversationId\": \"$CONVERSATION_ID\", \"text\": \"Ligar amanhã\"}" >/dev/null
post 201 "/conversation/$CONVERSATION_ID/messages/inbound" '{"text": "Bom dia"}' >/dev/null
REPLY_ID=$(post 201 "/conversation/$CONVERSATION_ID/messages" '{"text": "Olá! Como podemos ajudar?"}' | field id)
# The worker sends the reply on the official channel: say what became of it.
for _ in $(seq 20); do
  REPLY=$(call 200 GET "/conversation/$CONVERSATION_ID/messages?limit=20" 2>/dev/null |
    python3 -c 'import json,sys; m=[m for m in json.load(sys.stdin)["data"] if m["id"]==sys.argv[1]][0]; print(m["status"], m["error"] or "")' "$REPLY_ID")
  [[ "$REPLY" != QUEUED* ]] && break
  sleep 0.5
done
if [[ "$REPLY" == FAILED* ]]; then
  echo "the reply is FAILED: ${REPLY#FAILED } (this WHATSAPP_OFFICIAL channel has no whatsapp settings; README: Official WhatsApp channel)" >&2
else
  echo "the reply is ${REPLY%% *}" >&2
fi

# --- CRM: a funnel, a card moved along it, the board -----------------------------------------
FUNNEL=$(post 201 /funnel "{\"name\": \"Vendas\", \"inboxId\": \"$INBOX_ID\", \"columns\": [{\"name\": \"Novo\", \"timeLimitDays\": 3}, {\"name\": \"Ganho\", \"kind\": \"WON\"}, {\"name\": \"Perdido\", \"kind\": \"LOST\"}]}")
FUNNEL_ID=$(field id <<<"$FUNNEL")
NEW_COLUMN_ID=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["columns"][0]["id"])' <<<"$FUNNEL")
WON_COLUMN_ID=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["columns"][1]["id"])' <<<"$FUNNEL")
CARD_ID=$(post 201 /funnel-column-card \
  "{\"columnId\": \"$NEW_COLUMN_ID\", \"personId\": \"$PERSON_ID\", \"conversationId\": \"$CONVERSATION_ID\"}" | field id)
patch 200 "/funnel-column-card/$CARD_ID" "{\"columnId\": \"$WON_COLUMN_ID\"}" >/dev/null
call 200 GET "/funnel-column-card/person/$PERSON_ID/conversation/$CONVERSATION_ID" >/dev/null
call 200 GET "/funnel/$FUNNEL_ID?limit=20&page=1" >/dev/null

# --- webhooks ----------------------------------------------------------------------------
WEBHOOK_ID=$(post 201 /webhooks \
  '{"name": "ERP sync", "url": "https://erp.example.com/hooks/officehub", "events": ["contact.created", "crm.lead.moved"]}' |
  field id)
call 200 GET "/webhooks/$WEBHOOK_ID" >/dev/null
call 200 GET /webhooks >/dev/null
call 200 GET "/webhooks/$WEBHOOK_ID/deliveries" >/dev/null
call 200 DELETE "/webhooks/$WEBHOOK_ID" >/dev/null

echo "quickstart: every call answered as expected" >&2
