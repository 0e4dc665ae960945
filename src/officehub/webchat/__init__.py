"""The web-chat channel: a widget for the office's site and the visitor API behind it."""
