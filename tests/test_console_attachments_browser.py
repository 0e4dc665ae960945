"""Attachments from the inbox's composer (issue 42), in Debian's Chromium, as a person of
the office: attach a PNG (previewed, with a caption) and a PDF (chosen from the keyboard,
shown as a link with its name), both sent and shown in the chat; a file of a type the
channel does not take and one too large read as sentences in Portuguese; at 1366x768 and
on a phone (390x844), with no serious accessibility violation."""

from __future__ import annotations

import asyncio
import socket
import struct
import zlib
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI
from playwright.async_api import Browser, FilePayload, Page, Route, expect

from officehub.kit.config import Settings
from tests.accessibility import serious_violations
from tests.accounts_helpers import make_account
from tests.browser import nav_to, new_page
from tests.crm_world import World, make_world
from tests.helpers import OfficeFixture
from tests.server import running_server
from tests.test_console_inbox_browser import (
    TIMEOUT,
    inbound,
    nothing_overflows,
    shot,
    sign_in,
)

PDF = b"%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n" + b"%" * 200


def payload(name: str, mime: str, content: bytes) -> FilePayload:
    return {"name": name, "mimeType": mime, "buffer": content}


def png(width: int = 48, height: int = 32) -> bytes:
    """A real PNG (a blue and gold stripe), small enough to read in the preview."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data))
            + kind
            + data
            + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
        )

    rows = b"".join(
        b"\x00" + (b"\x0b\x63\xb5" if y < height // 2 else b"\xe0\xb0\x30") * width
        for y in range(height)
    )
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


@pytest.fixture
def media_port() -> int:
    """A free port, reserved for the server, so the media links it signs (``public_url``)
    open in the browser."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


@pytest.fixture
def settings(settings: Settings, media_port: int) -> Settings:
    return settings.model_copy(update={"public_url": f"http://127.0.0.1:{media_port}"})


@pytest.fixture
async def server_url(app: FastAPI, media_port: int) -> AsyncIterator[str]:
    async with running_server(app, port=media_port) as base_url:
        yield base_url


async def _world(app: FastAPI, office: OfficeFixture) -> World:
    async with app.state.sessionmaker() as s:
        world = await make_world(s, office.id, columns=2)
        await s.commit()
    return world


async def _open(page: Page, server_url: str, email: str, world: World, messages: int = 1) -> None:
    await sign_in(page, server_url, email)
    await nav_to(page, "Conversas")
    row = page.locator(f'.conversation-item[data-conversation-id="{world.conversation.id}"]')
    await row.click()
    await expect(page.locator("#message-list .message")).to_have_count(messages, timeout=TIMEOUT)


async def test_an_uploads_answer_is_shown_though_the_stream_refreshed_the_conversation(
    browser: Browser, server_url: str, app: FastAPI, office_a: OfficeFixture
) -> None:
    """The answer to an upload is shown for the conversation it was sent in even when the
    live stream brought a newer copy of that conversation while the upload was under way
    (a change by someone else, here the API key's). The console compared the copies, not
    their ids: the upload stayed "Carregando…" for good (seen in CI, under load)."""
    world = await _world(app, office_a)
    async with httpx.AsyncClient(base_url=server_url, timeout=15) as http:
        await inbound(http, office_a, world.conversation.id, "Pode mandar o contrato?")
        _, email = await make_account(http, office_a, "ADMIN")
        async with new_page(browser, 1366, 768) as page:
            await _open(page, server_url, email, world)
            held, release = asyncio.Event(), asyncio.Event()

            async def hold(route: Route) -> None:
                held.set()
                await release.wait()
                await route.continue_()

            await page.route("**/media", hold)
            await page.locator("#attach-file").set_input_files(
                files=[payload("setup.exe", "application/x-msdownload", b"MZ" + b"\x00" * 300)]
            )
            await asyncio.wait_for(held.wait(), TIMEOUT / 1000)
            url = f"/conversation/{world.conversation.id}"
            async with page.expect_response(
                lambda r: r.url.endswith(url) and r.request.method == "GET", timeout=TIMEOUT
            ):
                changed = await http.patch(url, json={"priority": "HIGH"}, headers=office_a.headers)
                assert changed.status_code == 200, changed.text
            release.set()
            await expect(page.locator("#attach-error")).to_have_text(
                "Este tipo de arquivo não pode ser enviado. Envie uma imagem JPEG ou PNG, um "
                "vídeo MP4, um áudio (MP3, M4A, AAC, AMR ou OGG) ou um documento PDF, do "
                "Office ou de texto.",
                timeout=TIMEOUT,
            )
            await expect(page.locator("#attachment")).to_have_count(0)


async def test_attach_a_png_and_a_pdf_and_send_them(
    browser: Browser,
    server_url: str,
    app: FastAPI,
    office_a: OfficeFixture,
    tmp_path: Path,
) -> None:
    world = await _world(app, office_a)
    image = png()
    async with httpx.AsyncClient(base_url=server_url, timeout=15) as http:
        await inbound(http, office_a, world.conversation.id, "Pode mandar o contrato?")
        _, email = await make_account(http, office_a, "ADMIN")

        async with new_page(browser, 1366, 768) as page:
            await _open(page, server_url, email, world)
            attach = page.get_by_role("button", name="Anexar arquivo")
            await expect(attach).to_be_enabled()

            # A PNG: uploaded at once, previewed with its name, a caption, sent.
            await page.locator("#attach-file").set_input_files(
                files=[payload("fachada.png", "image/png", image)]
            )
            panel = page.locator("#attachment")
            await expect(panel).to_contain_text("fachada.png", timeout=TIMEOUT)
            preview = panel.get_by_role("img", name="Prévia de fachada.png")
            await expect(preview).to_be_visible()
            assert await preview.evaluate("i => i.complete && i.naturalWidth") == 48
            caption = page.get_by_label("Legenda (opcional)")
            await expect(caption).to_be_focused()
            await caption.fill("A fachada do fórum")
            assert await serious_violations(page) == []
            await shot(page, "console-attach-image-1366.png")
            await caption.press("Enter")  # the form sends the attachment
            sent = page.locator(".message.outbound")
            await expect(sent).to_have_count(1, timeout=TIMEOUT)
            await expect(sent).to_contain_text("A fachada do fórum")
            bubble_image = sent.locator("img")
            await expect(bubble_image).to_be_visible()
            await expect(bubble_image).to_have_attribute("alt", "A fachada do fórum")
            await expect(panel).to_have_count(0)
            await expect(attach).to_be_focused()

            # A PDF chosen from the keyboard: the button opens the file chooser.
            async with page.expect_file_chooser() as chooser:
                await attach.press("Enter")
            await (await chooser.value).set_files(
                files=[payload("Contrato.pdf", "application/pdf", PDF)]
            )
            await expect(panel).to_contain_text("Contrato.pdf", timeout=TIMEOUT)
            await expect(panel).to_contain_text("documento")
            await page.get_by_label("Legenda (opcional)").fill("Para assinar")
            await page.get_by_role("button", name="Enviar anexo").click()
            await expect(sent).to_have_count(2, timeout=TIMEOUT)
            link = sent.nth(1).get_by_role("link", name="Contrato.pdf")
            await expect(link).to_be_visible()
            opened = await http.get(str(await link.get_attribute("href")))
            assert opened.status_code == 200 and opened.content == PDF

            # Errors read as sentences: a type the channel does not take, a file too large.
            await page.locator("#attach-file").set_input_files(
                files=[
                    payload(
                        "setup.exe",
                        "application/x-msdownload",
                        b"MZ\x90\x00" + b"\x00" * 300,
                    )
                ]
            )
            error = page.locator("#attach-error")
            await expect(error).to_have_text(
                "Este tipo de arquivo não pode ser enviado. Envie uma imagem JPEG ou PNG, um "
                "vídeo MP4, um áudio (MP3, M4A, AAC, AMR ou OGG) ou um documento PDF, do "
                "Office ou de texto.",
                timeout=TIMEOUT,
            )
            await expect(error).to_have_attribute("role", "alert")
            await page.locator("#attach-file").set_input_files(
                files=[
                    payload(
                        "grande.png",
                        "image/png",
                        image + b"\x00" * (5 * 1024 * 1024),
                    )
                ]
            )
            await expect(error).to_contain_text(
                "O arquivo é grande demais: imagens até 5 MB", timeout=TIMEOUT
            )
            await expect(panel).to_have_count(0)
            assert await serious_violations(page) == []
            await nothing_overflows(page, 1366)
            await shot(page, "console-attach-sent-1366.png")

        async with new_page(browser, 390, 844) as page:
            await _open(page, server_url, email, world, messages=3)
            await page.locator("#attach-file").set_input_files(
                files=[
                    payload(
                        "Procuração assinada digitalmente.pdf",
                        "application/pdf",
                        PDF,
                    )
                ]
            )
            panel = page.locator("#attachment")
            await expect(panel).to_contain_text("Procuração assinada", timeout=TIMEOUT)
            await nothing_overflows(page, 390)
            assert await serious_violations(page) == []
            await shot(page, "console-attach-phone.png")
            await page.get_by_role("button", name="Remover anexo").click()
            await expect(panel).to_have_count(0)
            await expect(page.get_by_role("button", name="Anexar arquivo")).to_be_focused()
            await page.locator("#attach-file").set_input_files(
                files=[payload("mapa.png", "image/png", image)]
            )
            await expect(page.locator("#attachment img")).to_be_visible(timeout=TIMEOUT)
            await page.get_by_role("button", name="Enviar anexo").click()
            await expect(page.locator(".message.outbound")).to_have_count(3, timeout=TIMEOUT)
            await nothing_overflows(page, 390)
            await shot(page, "console-attach-sent-phone.png")

        listed = await http.get(
            f"/conversation/{world.conversation.id}/messages", headers=office_a.headers
        )
        outbound = [m for m in listed.json()["data"] if m["direction"] == "OUTBOUND"]
        assert [(m["type"], m["content"]["fileName"], m["text"]) for m in outbound] == [
            ("MEDIA", "mapa.png", None),
            ("MEDIA", "Contrato.pdf", "Para assinar"),
            ("MEDIA", "fachada.png", "A fachada do fórum"),
        ]
