"""One catalogue of actions, shared by automation rules and flow steps.

Each action (``officehub.actions.catalogue``) is a parameters model, a check (the records
it names exist in the office, a URL is sendable) and a run. Rules and flows keep the
spec's names for them (``automation.vocabulary``, ``flows.vocabulary``) and map each to one
entry here; see docs/architecture.md, "Add an action".
"""
