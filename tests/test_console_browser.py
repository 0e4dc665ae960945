"""The office console at ``/console``, driven in Debian's Chromium through the public API.

Each browser test logs in with a real key, acts as a person would (drag, keyboard, forms)
and then reads the result back through the API, never through the page alone.
"""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

import httpx
from fastapi import FastAPI
from playwright.async_api import Browser, Page, expect

from officehub.kit.config import Settings
from officehub.kit.timeutil import utcnow
from officehub.webhooks.delivery import RETRY_SCHEDULE
from tests import factories as f
from tests.browser import nav_to, new_page
from tests.crm_world import make_world
from tests.helpers import OfficeFixture, error_of
from tests.receiver import Reply, running_receiver
from tests.webchat_world import make_webchat, start_visitor
from tests.webhook_helpers import Clock, create_webhook, deliveries, delivery_worker, emit_event

TIMEOUT = 10_000


async def in_english(page: Page) -> None:
    """These tests read the English catalogue (Portuguese is the default: see
    tests/test_console_i18n.py); the choice is what a person's language menu keeps."""
    await page.add_init_script("localStorage.setItem('officehub.language', 'en')")


async def open_key_form(page: Page, server_url: str) -> None:
    await in_english(page)
    await page.goto(f"{server_url}/console")
    await page.get_by_text("Integrators: log in with an API key").click()


async def log_in(page: Page, server_url: str, key: str) -> None:
    await open_key_form(page, server_url)
    await page.get_by_label("API key").fill(key)
    await page.get_by_role("button", name="Log in").click()
    # signed in: the sign-out button (the nav is folded behind "Menu" on a phone)
    await expect(page.locator("#logout")).to_be_visible(timeout=TIMEOUT)


async def log_in_in_portuguese(page: Page, server_url: str, key: str) -> None:
    """The console as it opens (Portuguese, the default), entered with a key."""
    await page.goto(f"{server_url}/console")
    await page.get_by_text("Integradores: entrar com uma chave de API").click()
    await page.get_by_label("Chave de API").fill(key)
    await page.get_by_role("button", name="Entrar com a chave").click()
    # signed in: the sign-out button (the nav is folded behind "Menu" on a phone)
    await expect(page.locator("#logout")).to_be_visible(timeout=TIMEOUT)


async def open_conversations_live(page: Page, server_url: str, key: str) -> None:
    """Signed in with ``key`` (Portuguese), on "Conversas", its live stream on."""
    await log_in_in_portuguese(page, server_url, key)
    await page.get_by_role("link", name="Conversas").click()
    await expect(page.locator("#live")).to_have_attribute("data-state", "on", timeout=TIMEOUT)


async def test_console_is_served_without_a_key_with_a_strict_csp_and_only_local_assets(
    app: FastAPI, client: httpx.AsyncClient
) -> None:
    page = await client.get("/console")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    csp = page.headers["content-security-policy"]
    assert "default-src 'self'" in csp and "script-src 'self'" in csp
    assert "unsafe-inline" not in csp and "unsafe-eval" not in csp
    assert page.headers["x-content-type-options"] == "nosniff"
    assert (await client.get("/console/")).text == page.text
    assert (await client.get("/console/index.html")).text == page.text
    html = page.text
    assert '<html lang="pt-BR">' in html
    assert '<meta name="officehub-time-zone" content="America/Sao_Paulo">' in html
    assert "<script>" not in html and " on" + "click=" not in html and "style=" not in html
    links = re.findall(r'(?:src|href)="([^"]+)"', html)
    assets = [link for link in links if not link.startswith("#")]
    assert assets and all(link.startswith("/console/") for link in assets), assets
    shipped = ["app.js", "api.js", "ui.js", "board.js", "conversations.js", "map.js", "i18n.js"]
    shipped += ["strings.pt-BR.js", "strings.en.js"]
    for name in [link.removeprefix("/console/") for link in assets] + shipped + ["webhooks.js"]:
        answer = await client.get(f"/console/{name}")
        assert answer.status_code == 200, name
        assert answer.headers["content-security-policy"] == csp
        assert answer.headers["x-content-type-options"] == "nosniff"
        if name.endswith((".js", ".css")):
            # Modules import each other by relative path; nothing names another host.
            assert not re.search(r"https?://|//[a-z0-9.-]+\.[a-z]{2,}/", answer.text), name
            assert "innerHTML" not in answer.text and "insertAdjacentHTML" not in answer.text
            imports = re.findall(r'from "([^"]+)"', answer.text)
            assert all(i.startswith("./") for i in imports), (name, imports)
    svg = await client.get("/console/brazil-states.svg")
    assert svg.headers["content-type"] == "image/svg+xml"
    assert len(svg.content) < 200_000 and svg.text.count("<path data-uf=") == 27
    assert "CC BY 4.0" in svg.text
    missing = await client.get("/console/secrets.py")
    assert missing.status_code == 404 and error_of(missing)["code"] == "NOT_FOUND"
    assert (await client.get("/console/..%2Fauth.py")).status_code == 404

    # Behind a proxy's prefix (the app's root path) the page names its assets under it.
    prefixed = httpx.ASGITransport(app=app, root_path="/office")
    async with httpx.AsyncClient(transport=prefixed, base_url="http://officehub.test") as behind:
        answer = await behind.get("/office/console")
    assert answer.status_code == 200
    assert '<script type="module" src="/office/console/app.js">' in answer.text


async def test_a_wrong_key_shows_the_apis_error_and_a_right_key_logs_in_and_out(
    page: Page, server_url: str, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    expected = error_of(await client.get("/inbox", headers={"x-service-api-key": "ohk_not_a_key"}))
    await log_in_expecting_error(page, server_url, "ohk_not_a_key")
    notice = page.get_by_role("alert")
    await expect(notice).to_contain_text(f"401 {expected['code']}", timeout=TIMEOUT)
    await expect(notice).to_contain_text(expected["message"])
    await expect(notice).to_contain_text(expected["details"])
    assert await page.evaluate("sessionStorage.length") == 0

    await page.get_by_label("API key").fill(office_a.key)
    await page.get_by_role("button", name="Log in").click()
    await expect(page.get_by_role("link", name="Funnel board")).to_be_visible(timeout=TIMEOUT)
    await expect(notice).to_be_hidden()
    stored = await page.evaluate("Object.values(sessionStorage)")
    assert stored == [office_a.key]
    assert await page.evaluate("Object.keys(localStorage)") == ["officehub.language"]
    assert await page.evaluate("document.cookie") == ""

    await page.get_by_role("button", name="Log out").click()
    await expect(page.get_by_label("API key")).to_be_visible()
    assert await page.evaluate("sessionStorage.length") == 0


async def log_in_expecting_error(page: Page, server_url: str, key: str) -> None:
    await open_key_form(page, server_url)
    await page.get_by_label("API key").fill(key)
    await page.get_by_role("button", name="Log in").click()


async def test_drag_a_card_to_another_column_moves_it_through_the_api(
    page: Page, server_url: str, app: FastAPI, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    async with app.state.sessionmaker() as s:
        world = await make_world(s, office_a.id, columns=3)
        first, second, third = world.columns
        first.time_limit_days, first.show_badge_progress = 2, True
        overdue = await f.make_card(
            s,
            first,
            world.contact.id,
            world.conversation.id,
            user_id=world.user.id,
            column_changed_at=utcnow() - timedelta(days=3),
        )
        other = await f.make_contact(s, office_a.id, name="<b>João</b> Pereira")
        fresh = await f.make_card(s, first, other.id)
        for i in range(21):  # one more than a page of the board
            contact = await f.make_contact(s, office_a.id, name=f"Lead {i:02d}")
            await f.make_card(s, third, contact.id)
        await s.commit()
    headers = office_a.headers

    await log_in(page, server_url, office_a.key)
    column = page.locator(f'section[data-column-id="{first.id}"]')
    card = page.locator(f'li[data-card-id="{overdue.id}"]')
    await expect(column.locator(".count")).to_have_text("2", timeout=TIMEOUT)
    await expect(card).to_contain_text("Maria Souza")
    await expect(card).to_contain_text("+5511987654321")
    await expect(card).to_contain_text(f"Owner: {world.user.name}")
    await expect(card.locator(".tag")).to_have_text(world.tag.name, timeout=TIMEOUT)
    await expect(card.get_by_text("Overdue")).to_be_visible()
    await expect(card).to_contain_text("3 d in column")
    fresh_card = page.locator(f'li[data-card-id="{fresh.id}"]')
    await expect(fresh_card.get_by_text("day 1 of 2")).to_be_visible(timeout=TIMEOUT)
    # A name with markup is shown as the text it is, never parsed as HTML.
    await expect(fresh_card.locator("h3")).to_have_text("<b>João</b> Pereira")
    assert await fresh_card.locator("b").count() == 0

    # The owner filter and "Load more" of one column.
    last = page.locator(f'section[data-column-id="{third.id}"]')
    await expect(last.locator(".card")).to_have_count(20)
    await expect(last.locator(".count")).to_have_text("21")
    await last.get_by_role("button", name="Load more").click()
    await expect(last.locator(".card")).to_have_count(21, timeout=TIMEOUT)
    await expect(last.get_by_role("button", name="Load more")).to_have_count(0)
    await page.get_by_label("Owner").select_option(world.user.id)
    await expect(column.locator(".count")).to_have_text("1", timeout=TIMEOUT)
    await expect(last.locator(".count")).to_have_text("0")
    await page.get_by_label("Owner").select_option("")
    await expect(column.locator(".count")).to_have_text("2", timeout=TIMEOUT)
    await expect(card.locator(".tag")).to_have_text(world.tag.name, timeout=TIMEOUT)

    # Drag and drop (HTML5) into the second column: a PATCH, and the board shows the answer.
    await card.drag_to(page.locator(f'section[data-column-id="{second.id}"]'))
    target = page.locator(f'section[data-column-id="{second.id}"]')
    await expect(target.locator(f'li[data-card-id="{overdue.id}"]')).to_be_visible(timeout=TIMEOUT)
    await expect(target.locator(".count")).to_have_text("1")
    await expect(column.locator(".count")).to_have_text("1")
    read = (await client.get(f"/funnel-column-card/{overdue.id}", headers=headers)).json()
    assert read["columnId"] == second.id
    await expect(target.locator(f'li[data-card-id="{overdue.id}"]')).to_contain_text(
        "0 min in column"
    )

    # The keyboard alternative: the card's "Move to" list and its Move button.
    await (
        page.get_by_label("Move to")
        .and_(page.locator(f"#move-{overdue.id}"))
        .select_option(third.id)
    )
    await page.locator(f"#move-{overdue.id}").press("Tab")
    await page.keyboard.press("Enter")
    moved = page.locator(f'section[data-column-id="{third.id}"] li[data-card-id="{overdue.id}"]')
    await expect(moved).to_be_visible(timeout=TIMEOUT)
    read = (await client.get(f"/funnel-column-card/{overdue.id}", headers=headers)).json()
    assert read["columnId"] == third.id

    # An error of the API is shown, and the card stays where the server has it.
    gone = await client.delete(f"/funnel-column/{second.id}", headers=headers)
    assert gone.status_code == 200
    await page.locator(f"#move-{fresh.id}").select_option(second.id)
    await page.get_by_role("button", name="Move <b>João</b> Pereira").click()
    await expect(page.get_by_role("alert")).to_contain_text("404 NOT_FOUND", timeout=TIMEOUT)
    await expect(column.locator(f'li[data-card-id="{fresh.id}"]')).to_be_visible()
    read = (await client.get(f"/funnel-column-card/{fresh.id}", headers=headers)).json()
    assert read["columnId"] == first.id


async def test_reply_in_a_conversation_on_a_phone_sized_screen(
    browser: Browser,
    server_url: str,
    app: FastAPI,
    client: httpx.AsyncClient,
    office_a: OfficeFixture,
) -> None:
    async with app.state.sessionmaker() as s:
        inbox = await f.make_inbox(s, office_a.id)
        official = await f.make_integration(
            s, office_a.id, inbox.id, type="WHATSAPP_OFFICIAL", device_id="dev-1"
        )
        contact = await f.make_contact(s, office_a.id, name="Carla Dias")
        tag = await f.make_tag(s, office_a.id, inbox.id, name="prazo")
        user = await f.make_user(s, office_a.id, name="Paula Reis")
        conversation = await f.make_conversation(s, office_a.id, contact.id, official)
        await s.commit()
    headers = office_a.headers
    messages_path = f"/conversation/{conversation.id}/messages"

    async with new_page(browser, 390, 844) as page:
        await log_in(page, server_url, office_a.key)
        await nav_to(page, "Conversations")
        await page.get_by_role("button", name=re.compile("Carla Dias")).click()
        await expect(page.get_by_role("heading", name="Carla Dias")).to_be_visible(timeout=TIMEOUT)

        # No message from the contact yet: outside the 24-hour window, the API's 409 is shown.
        await page.get_by_label("Reply").fill("Bom dia, Carla")
        await page.get_by_role("button", name="Send reply").click()
        alert = page.get_by_role("alert")
        await expect(alert).to_contain_text("409 OUTSIDE_SERVICE_WINDOW", timeout=TIMEOUT)
        await expect(alert).to_contain_text("24 hours")
        assert (await client.get(messages_path, headers=headers)).json()["totalResults"] == 0

        inbound = await client.post(
            f"{messages_path}/inbound", json={"text": "Olá, preciso de ajuda"}, headers=headers
        )
        assert inbound.status_code == 201
        await page.get_by_role("button", name="Refresh").click()
        shown = page.locator("#message-list").get_by_text("Olá, preciso de ajuda")
        await expect(shown).to_be_visible(timeout=TIMEOUT)
        await page.get_by_role("button", name="Send reply").click()
        sent = page.locator(".message.outbound", has_text="Bom dia, Carla")
        await expect(sent).to_be_visible(timeout=TIMEOUT)
        await expect(sent).to_have_attribute("data-status", "QUEUED")
        await expect(sent.locator(".badge")).to_have_text("Queued")

        # The composer writes a reply or, switched, a private note shown in the chat.
        await page.get_by_role("button", name="Private note").click()
        await page.get_by_label("Add a note").fill("Cliente pediu retorno amanhã")
        await page.get_by_role("button", name="Add note").click()
        await expect(page.locator(".note")).to_contain_text("retorno amanhã", timeout=TIMEOUT)
        # On a phone one pane at a time: the conversation's tags are in the client's file.
        await page.get_by_role("button", name="Client's file").click()
        await page.get_by_label("Add tag").select_option(tag.id)
        await page.get_by_role("button", name="Add tag").click()
        await expect(page.get_by_role("button", name="Remove tag prazo")).to_be_visible(
            timeout=TIMEOUT
        )
        await page.get_by_role("button", name="← Back").click()
        await page.get_by_label("Assign to").select_option(user.id)
        await page.get_by_role("button", name="Assign", exact=True).click()
        await expect(page.locator("#conversation-state")).to_contain_text(
            "assigned to Paula Reis", timeout=TIMEOUT
        )
        read = (await client.get(f"/conversation/{conversation.id}", headers=headers)).json()
        assert read["assignedUserId"] == user.id
        await page.get_by_text("More actions").click()
        await page.get_by_role("button", name="End human support").click()
        await expect(page.locator("#conversation-state")).to_contain_text(
            "assigned to nobody", timeout=TIMEOUT
        )
        width = await page.evaluate("document.documentElement.scrollWidth")
        assert width <= 390, width

    listed = (await client.get(messages_path, headers=headers)).json()["data"]
    assert [(m["direction"], m["text"]) for m in listed] == [
        ("OUTBOUND", "Bom dia, Carla"),
        ("INBOUND", "Olá, preciso de ajuda"),
    ]
    notes = await client.get(
        "/conversation/notes", params={"conversationId": conversation.id}, headers=headers
    )
    assert [n["text"] for n in notes.json()["data"]] == ["Cliente pediu retorno amanhã"]
    read = (await client.get(f"/conversation/{conversation.id}", headers=headers)).json()
    assert [t["id"] for t in read["tags"]] == [tag.id]
    assert read["assignedUserId"] is None


async def test_the_maps_numbers_match_the_api(
    page: Page, server_url: str, app: FastAPI, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    phones = ["+5511987650001", "+5511987650002", "+5519987650003", "+5521987650004",
              "+5571987650005", "+14155550100"]  # fmt: skip
    async with app.state.sessionmaker() as s:
        inbox = await f.make_inbox(s, office_a.id)
        integration = await f.make_integration(s, office_a.id, inbox.id)
        for i, phone in enumerate(phones):
            contact = await f.make_contact(s, office_a.id, name=f"Cliente {i}", phone=phone)
            await f.make_conversation(s, office_a.id, contact.id, integration)
        await s.commit()
    answer: dict[str, Any] = (
        await client.get("/homepage-v2/get-clients-map", headers=office_a.headers)
    ).json()["data"]
    assert answer["total"] == 5

    problems: list[str] = []
    page.on("pageerror", lambda error: problems.append(str(error)))
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    await log_in(page, server_url, office_a.key)
    await nav_to(page, "Clients map")
    await expect(page.locator("#map-total")).to_have_text("5", timeout=TIMEOUT)
    assert await page.locator("#map-cache-at").get_attribute("datetime") == answer["cacheAt"]
    by_uf = {s["uf"]: s for s in answer["states"]}
    shapes = page.locator("path[data-uf]")
    assert await shapes.count() == 27
    shown = await shapes.evaluate_all("ps => ps.map(p => [p.dataset.uf, Number(p.dataset.total)])")
    assert {uf: total for uf, total in shown} == {
        uf: by_uf[uf]["total"] if uf in by_uf else 0 for uf, _ in shown
    }
    rows = await page.locator("#map-table tbody tr").evaluate_all(
        "rs => rs.map(r => [r.dataset.uf, Number(r.cells[2].textContent)])"
    )
    assert len(rows) == 27
    assert rows[: len(by_uf)] == [[s["uf"], s["total"]] for s in answer["states"]]

    await page.locator('path[data-uf="SP"]').hover()
    detail = page.locator("#map-detail")
    await expect(detail).to_contain_text("São Paulo (SP)")
    await expect(detail.locator(".state-total")).to_contain_text("3 conversations")
    await expect(detail).to_contain_text("DDD 11: 2")
    await expect(detail).to_contain_text("DDD 19: 1")
    await page.locator('path[data-uf="BA"]').focus()
    await expect(detail).to_contain_text("Bahia (BA)")
    await expect(detail).to_contain_text("DDD 71: 1")
    legend = page.locator("#map-legend li")
    await expect(legend.first).to_have_text("0 conversations")
    assert await legend.count() == 4  # 0, then 1, 2 and 3 conversations
    # Nothing the page did was refused by its Content-Security-Policy, and no script failed.
    assert problems == []


async def test_retry_a_failed_delivery_from_the_console(
    page: Page,
    server_url: str,
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    office_a: OfficeFixture,
) -> None:
    settings = settings.model_copy(update={"webhook_timeout_seconds": 2.0})
    attempts = len(RETRY_SCHEDULE) + 1
    replies = lambda n: Reply(500, "receiver down") if n < attempts else Reply(200, "ok")  # noqa: E731
    async with running_receiver(replies) as receiver:
        hook = await create_webhook(client, office_a, receiver.url, name="ERP sync")
        await emit_event(app, office_a.id)
        clock = Clock()
        worker = delivery_worker(app, settings, clock)
        await worker.run_until_idle()
        for _ in RETRY_SCHEDULE:
            clock.advance(hours=13)
            await worker.run_until_idle()
        [failed] = await deliveries(app, hook["id"])
        assert failed.status == "FAILED"

        await log_in(page, server_url, office_a.key)
        await nav_to(page, "Webhooks")
        webhook_row = page.locator(f'tr[data-webhook-id="{hook["id"]}"]')
        await expect(webhook_row.locator('[data-stat="failed"]')).to_have_text("1", timeout=TIMEOUT)
        await expect(webhook_row.locator('[data-stat="rate"]')).to_have_text("0 %")
        await page.get_by_role("button", name="Deliveries of ERP sync").click()
        row = page.locator(f'tr[data-delivery-id="{failed.id}"]')
        await expect(row).to_have_attribute("data-status", "FAILED", timeout=TIMEOUT)
        await expect(row).to_contain_text("Failed")
        await expect(row).to_contain_text("500")
        await expect(row).to_contain_text(str(attempts))
        await row.get_by_text("Response body").click()
        await expect(row.locator("pre")).to_have_text("receiver down")

        await row.get_by_role("button", name=re.compile("^Retry: delivery")).click()
        await expect(row).to_have_attribute("data-status", "PENDING", timeout=TIMEOUT)
        await expect(row.get_by_role("button", name=re.compile("^Retry"))).to_have_count(0)
        clock.now = max(clock.now, failed.created_at) + timedelta(days=1)
        await worker.run_until_idle()
        assert len(receiver.received) == attempts + 1

        await page.get_by_role("button", name="Refresh").click()
        await expect(row).to_have_attribute("data-status", "SUCCESS", timeout=TIMEOUT)
        await expect(row).to_contain_text("200")
        await page.get_by_role("button", name="Reload").click()
        await expect(webhook_row.locator('[data-stat="success"]')).to_have_text(
            "1", timeout=TIMEOUT
        )

        await page.get_by_role("button", name="Send test event to ERP sync").click()
        await expect(page.get_by_role("status")).to_contain_text("Test event", timeout=TIMEOUT)
        await worker.run_until_idle()
        await page.get_by_role("button", name="Refresh").click()
        await expect(
            page.locator("#delivery-table tbody tr", has_text="webhook.test")
        ).to_have_attribute("data-status", "SUCCESS", timeout=TIMEOUT)
    by_event = {d.event: d for d in await deliveries(app, hook["id"])}
    retried = by_event["contact.created"]
    assert retried.id == failed.id and retried.status == "SUCCESS"
    assert by_event["webhook.test"].status == "SUCCESS"
    assert retried.attempt_count == attempts + 1


async def test_a_web_chat_visitors_contact_is_marked_unverified_in_the_console(
    browser: Browser,
    server_url: str,
    client: httpx.AsyncClient,
    office_a: OfficeFixture,
) -> None:
    """The console shows a web chat visitor's typed phone as a claim: "não verificado"."""
    chat = await make_webchat(client, office_a)
    await start_visitor(client, chat["id"], name="Visitante Souza", phone="+55 11 98765-4321")

    async with new_page(browser, 1280, 800) as page:
        await log_in_in_portuguese(page, server_url, office_a.key)
        await nav_to(page, "Conversas")
        await page.get_by_role("button", name=re.compile("Visitante Souza")).click()
        head = page.locator(".conversation-head")
        await expect(head.locator(".badge.warn")).to_have_text("não verificado", timeout=TIMEOUT)
        await expect(head).to_contain_text("+5511987654321 (informado pelo visitante)")


async def test_bidi_controls_are_shown_neutralised_and_kept_in_the_record(
    browser: Browser,
    server_url: str,
    app: FastAPI,
    client: httpx.AsyncClient,
    office_a: OfficeFixture,
) -> None:
    """A right-to-left override makes "abc\u202egpj.exe" read "abcexe.jpg": the console
    shows every bidi control (U+202A-E, U+2066-9, U+200E/F) as a visible mark; the API
    answers the original characters."""
    spoofed = "Segue o arquivo abc\u202egpj.exe"
    isolated = "Nota \u2066isolada\u2069 e \u200fmarca"
    async with app.state.sessionmaker() as s:
        inbox = await f.make_inbox(s, office_a.id)
        official = await f.make_integration(
            s, office_a.id, inbox.id, type="WHATSAPP_OFFICIAL", device_id="dev-bidi"
        )
        contact = await f.make_contact(s, office_a.id, name="Rui Prado")
        conversation = await f.make_conversation(s, office_a.id, contact.id, official)
        await s.commit()
    headers = office_a.headers
    messages_path = f"/conversation/{conversation.id}/messages"
    r = await client.post(f"{messages_path}/inbound", json={"text": spoofed}, headers=headers)
    assert r.status_code == 201, r.text
    r = await client.post(
        "/conversation/note",
        json={"conversationId": conversation.id, "text": isolated},
        headers=headers,
    )
    assert r.status_code == 201, r.text

    async with new_page(browser, 1280, 800) as page:
        await log_in(page, server_url, office_a.key)
        await nav_to(page, "Conversations")
        await page.get_by_role("button", name=re.compile("Rui Prado")).click()
        message = page.locator(".message", has_text="Segue o arquivo")
        await expect(message).to_contain_text("abc⟦U+202E⟧gpj.exe", timeout=TIMEOUT)
        note = page.locator(".note", has_text="Nota")
        await expect(note).to_contain_text("Nota ⟦U+2066⟧isolada⟦U+2069⟧ e ⟦U+200F⟧marca")
        shown = await page.locator(".conversation").inner_text()
        assert not re.search("[\u200e\u200f\u202a-\u202e\u2066-\u2069]", shown)

    listed = (await client.get(messages_path, headers=headers)).json()["data"]
    assert [m["text"] for m in listed] == [spoofed]
    notes = await client.get(
        "/conversation/notes", params={"conversationId": conversation.id}, headers=headers
    )
    assert [n["text"] for n in notes.json()["data"]] == [isolated]
