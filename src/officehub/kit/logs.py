"""Log lines on stderr: JSON (one object per line) or text for a person at a terminal.

Never pass headers, keys or secrets to a logger.
"""

from __future__ import annotations

import logging
import re
import sys
from typing import Any, TextIO

import orjson

from officehub.kit.safe_trace import ExcInfo, format_exception_safely

_RESERVED = set(vars(logging.makeLogRecord({}))) | {"color_message"}
_COLOURS = {
    "DEBUG": "\x1b[2m",
    "INFO": "\x1b[32m",
    "WARNING": "\x1b[33m",
    "ERROR": "\x1b[31m",
    "CRITICAL": "\x1b[1;31m",
}
_RESET = "\x1b[0m"


# A URL's userinfo (``user:pass@``) and query string (``?token=…``) may carry credentials
# (webhook URLs are the office's to choose): neither is written to a log.
_URL = re.compile(
    r"(?P<scheme>\b[a-zA-Z][a-zA-Z0-9+.-]*://)(?:[^/?#@\s\"'<>]*@)?"
    r"(?P<rest>[^?#\s\"'<>]*)(?P<query>\?[^#\s\"'<>]*)?(?:#[^\s\"'<>]*)?"
)
WITHHELD = "?[withheld]"
OUTBOUND_LOGGERS = ("httpx", "httpcore")


def redacted_urls(text: str) -> str:
    """``text`` with every URL's userinfo dropped and its query string withheld."""

    def strip(match: re.Match[str]) -> str:
        query = WITHHELD if match["query"] else ""
        return f"{match['scheme']}{match['rest']}{query}"

    return _URL.sub(strip, text) if "://" in text else text


def _redacted(value: Any) -> Any:
    httpx = sys.modules.get("httpx")  # not imported: no value is one of its URLs
    if httpx is not None and isinstance(value, httpx.URL):
        value = str(value)
    return redacted_urls(value) if isinstance(value, str) else value


class UrlRedactingFilter(logging.Filter):
    """Rewrites a record's message and arguments without URL userinfo or query strings
    (httpx's ``HTTP Request: POST http://user:pass@host/hook?token=…`` line)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, str):
            record.msg = redacted_urls(record.msg)
        if isinstance(record.args, tuple):
            record.args = tuple(_redacted(a) for a in record.args)
        elif isinstance(record.args, dict):
            record.args = {k: _redacted(v) for k, v in record.args.items()}
        return True


_REDACTING = UrlRedactingFilter()


def redact_outbound_urls() -> None:
    """Puts the filter on the outbound HTTP clients' loggers (whatever handler reads them,
    pytest's included); ``configure_logging`` also puts it on the root handler."""
    for name in OUTBOUND_LOGGERS:
        logger = logging.getLogger(name)
        if _REDACTING not in logger.filters:
            logger.addFilter(_REDACTING)


def _extras(record: logging.LogRecord) -> dict[str, Any]:
    return {k: v for k, v in vars(record).items() if k not in _RESERVED}


class _SafeFormatter(logging.Formatter):
    """Traces without the values a database error quotes (``officehub/kit/safe_trace.py``)."""

    def formatException(self, ei: ExcInfo) -> str:
        return format_exception_safely(ei)


class JsonFormatter(_SafeFormatter):
    """One JSON object per line, made by orjson: a request's line costs microseconds."""

    _second = -1
    _stamp = ""

    def _time(self, record: logging.LogRecord) -> str:
        second = int(record.created)
        if second != self._second:  # the formatted second, made once a second
            self._second, self._stamp = second, self.formatTime(record, "%Y-%m-%dT%H:%M:%S")
        return self._stamp

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": self._time(record),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        entry.update(_extras(record))
        if record.exc_info:
            entry["trace"] = self.formatException(record.exc_info)
        return orjson.dumps(entry, default=str).decode()


class TextFormatter(_SafeFormatter):
    """``12:00:01 INFO  officehub.request  GET /tag 200 method=GET status=200``."""

    def __init__(self, colour: bool) -> None:
        super().__init__()
        self.colour = colour

    def format(self, record: logging.LogRecord) -> str:
        level = f"{record.levelname:<7}"
        if self.colour:
            level = f"{_COLOURS.get(record.levelname, '')}{level}{_RESET}"
        extras = " ".join(f"{k}={v}" for k, v in _extras(record).items())
        line = f"{self.formatTime(record, '%H:%M:%S')} {level} {record.name}  {record.getMessage()}"
        if extras:
            line += f"  {extras}"
        if record.exc_info:
            line += "\n" + self.formatException(record.exc_info)
        return line


def chosen_format(log_format: str, stream: TextIO) -> str:
    """``json`` or ``text``: ``auto`` is text when the stream is a terminal."""
    if log_format in ("json", "text"):
        return log_format
    return "text" if stream.isatty() else "json"


def configure_logging(level: str = "INFO", log_format: str = "auto") -> None:
    # Neither format writes a record's source line, thread or process: the logging HOWTO's
    # "Optimization" settings spare every record looking them up (a frame walk per line).
    logging._srcfile = None
    logging.logThreads = False
    logging.logProcesses = False
    logging.logMultiprocessing = False
    stream = sys.stderr
    handler = logging.StreamHandler(stream)
    if chosen_format(log_format, stream) == "text":
        handler.setFormatter(TextFormatter(colour=stream.isatty()))
    else:
        handler.setFormatter(JsonFormatter())
    handler.addFilter(_REDACTING)
    redact_outbound_urls()
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        logging.getLogger(name).handlers[:] = []
        logging.getLogger(name).propagate = name != "uvicorn.access"
