"""The hook subscription wiring: subscribes the upper domains to the lower domains'
in-transaction hooks (the mechanism: ``officehub.kit.transaction_hooks``) and registers
the outbox's consumers (``officehub.events.registry``).

The one wiring place: every process that runs domain services calls ``install()`` before it
does — the API app (``app.create_app``), the worker (``jobs.queue_jobs``, which both
``officehub worker`` and the embedded worker build from) and the CLI (``cli._in_session``
defers it with ``transaction_hooks.wire_on_demand`` to the first hook fired, event emitted or
audit entry looking up its contact: a command that does none never imports every domain).
It is idempotent. A process that forgot it fails loudly: the hooks the upper domains must
answer are declared ``required`` and refuse to fire unsubscribed
(``transaction_hooks.HookNotWired``), and ``emit`` refuses with no consumer registered
(``events.registry.ConsumersNotWired``);
``tests/test_domain_hooks.py`` checks each entry point in a fresh interpreter.

Only aggregators (app, cli, jobs) import this module; no domain may (import-linter).
"""

from __future__ import annotations

from functools import partial

from officehub.accounts import service as accounts
from officehub.accounts import sessions as accounts_sessions
from officehub.audit.recorder import use_person_resolver
from officehub.automation import interest as automation_interest
from officehub.automation import subscribers as automation_subscribers
from officehub.case_notices import subscribers as case_notices_subscribers
from officehub.cases import subscribers as cases_subscribers
from officehub.cases.models import Case
from officehub.channels import subscribers as channels_subscribers
from officehub.conversations import repository as conversations_repository
from officehub.conversations import subscribers as conversations_subscribers
from officehub.conversations.models import Conversation
from officehub.crm import subscribers as crm_subscribers
from officehub.crm.models import Card
from officehub.dashboard import subscribers as dashboard_subscribers
from officehub.flows import interest as flows_interest
from officehub.kit.auth import use_key_resolver, use_session_resolver
from officehub.kit.repository import person_ids
from officehub.messages import repository as messages_repository
from officehub.messages import subscribers as messages_subscribers
from officehub.offices import service as offices
from officehub.tickets import subscribers as tickets_subscribers
from officehub.users.hooks import user_deactivated
from officehub.webchat import subscribers as webchat_subscribers
from officehub.webhooks import interest as webhooks_interest


def install() -> None:
    use_key_resolver(offices.office_of_key_hash)
    use_session_resolver(accounts_sessions.resolve)
    user_deactivated.subscribe(accounts.on_user_deactivated)
    # The audit trail finds the contact a conversation, card or case concerns.
    use_person_resolver("conversation", partial(person_ids, model=Conversation))
    use_person_resolver("card", partial(person_ids, model=Card))
    use_person_resolver("case", partial(person_ids, model=Case))
    # Hook subscribers run in this order: conversations' vetoes and its merge cascade (which
    # closes clashing conversations, announcing it) come before crm's.
    conversations_subscribers.install()
    crm_subscribers.install()
    cases_subscribers.install()
    case_notices_subscribers.install()
    channels_subscribers.install()
    messages_subscribers.install()
    conversations_repository.use_message_search(messages_repository.conversations_saying)
    webchat_subscribers.install()
    tickets_subscribers.install()
    # After those that name what an erasure takes (conversations, crm, cases).
    automation_subscribers.install()
    dashboard_subscribers.install()
    # The outbox's consumers, in the order their progress rows are written.
    webhooks_interest.install()
    automation_interest.install()
    flows_interest.install()
