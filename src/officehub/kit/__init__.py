"""Infrastructure every domain builds on: nothing here imports a domain."""
