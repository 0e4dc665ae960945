"""The hook subscription wiring: subscribes the upper domains to the lower domains'
in-transaction hooks (the mechanism: ``officehub.kit.transaction_hooks``) and registers
the outbox's consumers (``officehub.events.registry``).

The one wiring place: every process that runs domain services calls ``install()`` before it
does — the API app (``app.create_app``), the worker (``jobs.queue_jobs``, which both
``officehub worker`` and the embedded worker build from) and the CLI (``cli._in_session``).
It is idempotent. A process that forgot it fails loudly: the hooks the crm domain must answer
are declared ``required`` and refuse to fire unsubscribed (``transaction_hooks.HookNotWired``),
and ``emit`` refuses with no consumer registered (``events.registry.ConsumersNotWired``);
``tests/test_domain_hooks.py`` checks each entry point in a fresh interpreter.

Only aggregators (app, cli, jobs) import this module; no domain may (import-linter).
"""

from __future__ import annotations

from officehub.automation import interest as automation_interest
from officehub.crm import subscribers as crm_subscribers
from officehub.flows import interest as flows_interest
from officehub.webhooks import interest as webhooks_interest


def install() -> None:
    crm_subscribers.install()
    # The outbox's consumers, in the order their progress rows are written.
    webhooks_interest.install()
    automation_interest.install()
    flows_interest.install()
