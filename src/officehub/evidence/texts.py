"""The words of an evidence transcript (Portuguese: it is read by the office, its client
and a court)."""

from __future__ import annotations

TITLE = "Transcrição de conversa para prova"
INTRO = (
    "Esta transcrição é a apresentação legível da conversa. O conteúdo exato de cada "
    "mensagem, os anexos e seus resumos SHA-256 estão em manifest.json, encadeados em "
    "ordem e assinados (Ed25519) pela chave de prova do escritório; confira com "
    "“officehub evidence verify” e compare a impressão digital da chave com a publicada "
    "pelo escritório."
)
OFFICE = "Escritório"
CONTACT = "Contato"
PHONE = "Telefone"
CHANNEL = "Canal"
CONVERSATION = "Conversa"
GENERATED = "Gerado em"
TIME_ZONE = "Fuso horário"
KEY = "Impressão digital da chave"
MESSAGE_COUNT = "Mensagens"
INBOUND = "Recebida do contato"
OUTBOUND = "Enviada pelo escritório"
CHANNEL_ID = "ID no canal"
SENT_BY = "Enviada por"
SENT_BY_SERVICE = "o próprio serviço (fluxo ou automação)"
API_KEY = "chave de API “{name}” ({id})"
USER = "usuário {name} ({id})"
UNKNOWN_ACTOR = "{label} (não encontrado)"
STATUS = "Histórico de status"
ATTACHMENT = "Anexo"
ATTACHMENT_ABSENT = "Anexo externo (não guardado pelo escritório)"
EDITED = "Texto original antes da edição ou exclusão"
NO_TEXT = "(sem texto)"
NONE = "—"
PAGE = "Página {page}"
STATUS_NAMES = {
    "QUEUED": "na fila",
    "SENT": "enviada",
    "DELIVERED": "entregue",
    "READ": "lida",
    "FAILED": "falhou",
    "RECEIVED": "recebida",
}
