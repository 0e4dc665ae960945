"""A client's data exported at their request (LGPD art. 18, II): ``GET /people/{id}/export``."""
