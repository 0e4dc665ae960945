"""Evidence-grade conversation exports: a signed, hash-chained bundle and its verifier."""
