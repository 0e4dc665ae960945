"""The words of a client export's ``README.txt`` (Portuguese: read by the client and the
office)."""

from __future__ import annotations

TITLE = "Dados de {name} guardados pelo escritório {office}"
GENERATED = "Exportado em {at} (fuso horário {zone})."
PURPOSE = (
    "Este arquivo responde ao pedido de acesso do titular aos seus dados (LGPD, art. 18, "
    "II). Os arquivos .json trazem o texto exato guardado; neste arquivo, caracteres de "
    "controle de direção do texto aparecem como [U+XXXX] para não alterar a leitura."
)
FILES = "Arquivos:"
CONTACT = "contact.json: o cadastro do contato (nome, telefone, e-mail, documento, bloqueio legal)."
TAGS = "tags.json: as etiquetas do contato."
PARTNER_LINKS = "partner-links.json: os vínculos do contato com o sistema parceiro do escritório."
CONSENTS = (
    "consents.json: cada consentimento dado ou retirado pelo contato (finalidade, origem, "
    "versão do texto e data), do mais antigo ao mais recente."
)
CONVERSATION = (
    "conversations/<id>/conversation.json: a conversa (canal, situação, datas, etiquetas)."
)
MESSAGES = (
    "conversations/<id>/messages.json: cada mensagem, com direção, texto, situação e "
    "histórico de situações (enviada, entregue, lida)."
)
NOTES = "conversations/<id>/notes.json: as notas internas do escritório na conversa."
CARDS = "cards.json: os cartões do contato nos funis de atendimento (CRM)."
CASES = "cases.json: os processos judiciais do contato acompanhados pelo escritório."
MOVEMENTS = "case-movements.json: os andamentos desses processos."
MEDIA = (
    "media/: os arquivos (fotos, áudios, documentos) das mensagens guardados pelo "
    "escritório; o nome começa pelo id da mensagem."
)
CONVERSATIONS = "Conversas:"
CONVERSATION_LINE = "{id}: canal {channel}, iniciada em {at}, {messages} mensagem(ns)."
NO_CONVERSATIONS = "(nenhuma conversa)"
TOTALS = "Total: {messages} mensagem(ns), {notes} nota(s), {files} arquivo(s) de mídia."
EXTERNAL = "Mensagens com arquivo fora do escritório (link externo, não copiado): {count}."
