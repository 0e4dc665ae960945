"""officehub: messaging, CRM and automation for law offices."""

__version__ = "1.0.0"
