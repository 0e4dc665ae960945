"""What the service writes to an office's administrators by e-mail (Portuguese: the office's
people read it). Dates as dd/mm/aaaa HH:mm in the office's time zone."""

from __future__ import annotations

WEBHOOK_PAUSED_SUBJECT = "officehub: o webhook {name} foi pausado"
WEBHOOK_PAUSED_BODY = """Olá, {admin}.

O webhook "{name}" do seu escritório foi pausado em {disabled_at}: todas as entregas a ele \
falharam desde {failing_since}, durante 5 dias seguidos.

Enquanto estiver pausado, ele não recebe eventos. Corrija o endereço de destino (ou peça a \
quem cuida do sistema que o recebe) e reative o webhook no console do officehub, na tela \
Webhooks, ou pela API (PATCH /webhooks/{webhook_id} com isActive igual a true). Ao ser \
reativado, ele recebe de novo o que deixou de receber, do mais antigo ao mais recente.

Esta mensagem foi enviada aos administradores do escritório.
"""
