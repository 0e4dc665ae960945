"""The audit trail: who read or changed what, append-only and hash-chained per office."""
