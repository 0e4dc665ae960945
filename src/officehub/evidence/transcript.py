"""The transcript PDF (fpdf2, the core Helvetica font).

Every text is drawn through ``printable``: Windows-1252, the core font's encoding
(WinAnsi: Portuguese accents, typographic quotes, dashes, the euro sign) as is;
bidirectional controls, other control characters and anything the core font cannot draw
(emoji, other scripts) as a visible ``[U+XXXX]``, so no character reorders or hides what
follows it. The exact text is in the manifest; the PDF is its legible rendering.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo

from officehub.evidence import texts
from officehub.kit.timeutil import as_utc

if TYPE_CHECKING:
    from fpdf import FPDF

BIDI_CONTROLS = frozenset("\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
ENCODING = "windows-1252"


def _drawable(char: str) -> bool:
    if char == "\n":
        return True
    if char in BIDI_CONTROLS or not char.isprintable():
        return False
    try:
        char.encode(ENCODING)
    except UnicodeEncodeError:
        return False
    return True


def printable(text: str) -> str:
    """``text`` with every character the core font cannot draw, and every control
    character (bidirectional ones first of all), shown as ``[U+XXXX]``."""
    out = []
    for char in text:
        if not _drawable(char):
            out.append(f"[U+{ord(char):04X}]")
        else:
            out.append(char)
    return "".join(out)


def brazilian_time(value: datetime, zone: ZoneInfo) -> str:
    """dd/mm/aaaa HH:mm in the office's time zone."""
    return as_utc(value).astimezone(zone).strftime("%d/%m/%Y %H:%M")


@dataclass(frozen=True)
class Line:
    label: str
    value: str


@dataclass(frozen=True)
class MessageBlock:
    heading: str
    lines: list[Line] = field(default_factory=list)
    text: str = ""


@dataclass(frozen=True)
class Transcript:
    header: list[Line]
    messages: list[MessageBlock]


def render(transcript: Transcript) -> bytes:
    # fpdf2 (with numpy and image parsers) takes about half a second to import: it is
    # imported by the first transcript a process renders, not by every process start.
    from fpdf import FPDF
    from fpdf.enums import XPos, YPos

    class _Pdf(FPDF):
        def footer(self) -> None:
            self.set_y(-12)
            self.set_font("Helvetica", size=8)
            self.cell(0, 8, texts.PAGE.format(page=self.page_no()), align="C")

    pdf = _Pdf(format="A4")
    pdf.core_fonts_encoding = ENCODING
    pdf.set_creator("officehub")
    pdf.set_title(texts.TITLE)
    pdf.set_creation_date(datetime(2000, 1, 1, tzinfo=ZoneInfo("UTC")))
    pdf.set_auto_page_break(auto=True, margin=16)
    pdf.add_page()
    width = pdf.epw
    pdf.set_font("Helvetica", style="B", size=15)
    pdf.multi_cell(width, 8, printable(texts.TITLE), new_x=XPos.LMARGIN, new_y=YPos.NEXT)
    pdf.set_font("Helvetica", size=8.5)
    pdf.multi_cell(width, 4.2, printable(texts.INTRO), new_x=XPos.LMARGIN, new_y=YPos.NEXT)
    pdf.ln(2)
    for line in transcript.header:
        _labelled(pdf, width, line, size=9.5)
    pdf.ln(3)
    for block in transcript.messages:
        pdf.set_draw_color(180, 180, 180)
        pdf.line(pdf.l_margin, pdf.get_y(), pdf.l_margin + width, pdf.get_y())
        pdf.ln(1.5)
        pdf.set_font("Helvetica", style="B", size=10)
        pdf.multi_cell(width, 5, printable(block.heading), new_x=XPos.LMARGIN, new_y=YPos.NEXT)
        pdf.set_font("Helvetica", size=10.5)
        body = block.text or texts.NO_TEXT
        pdf.multi_cell(width, 5.2, printable(body), new_x=XPos.LMARGIN, new_y=YPos.NEXT)
        for line in block.lines:
            _labelled(pdf, width, line, size=8)
        pdf.ln(2)
    return bytes(pdf.output())


def _labelled(pdf: FPDF, width: float, line: Line, *, size: float) -> None:
    pdf.set_font("Helvetica", style="B", size=size)
    label = printable(f"{line.label}: ")
    pdf.set_x(pdf.l_margin)
    pdf.write(size * 0.5, label)
    pdf.set_font("Helvetica", size=size)
    pdf.write(size * 0.5, printable(line.value))
    pdf.ln(size * 0.5)
