"""Court movements a client understands: the TPU table shipped as data, its explanations
filled by DataJud's complements, and the movements list carrying them."""

from __future__ import annotations

import httpx
from fastapi import FastAPI
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.cases.explain import CATEGORIES, PLACEHOLDER, explain, normalized, raw_table
from officehub.cases.watch import Watcher
from officehub.kit.config import Settings
from tests import factories as f
from tests.datajud_standin import movement, running_datajud
from tests.helpers import OfficeFixture
from tests.test_case_watch import TJSP_DIGITS, add_case, no_sleep, sync


def test_the_tpu_data_file_is_well_formed() -> None:
    table = raw_table()
    entries = table["movements"]
    codes = [e["code"] for e in entries]
    assert len(codes) == len(set(codes)), "a code appears twice"
    assert len(entries) >= 150
    assert sum(e["confirmed"] for e in entries) >= 150
    known_sources = set(table["sources"])
    for e in entries:
        where = f"code {e['code']}"
        assert isinstance(e["code"], int) and e["code"] > 0, where
        assert e["category"] in CATEGORIES, where
        assert e["name"].strip() and e["explanation"].strip(), where
        assert e["tell"] is (e["category"] != "internal"), where
        # a confirmed entry says where it was checked; an unconfirmed one says nothing
        assert e["confirmed"] is bool(e["sources"]), where
        assert set(e["sources"]) <= known_sources, where
        if "withComplements" in e:
            assert PLACEHOLDER in e["withComplements"], where
        for key, special in (e.get("byComplement") or {}).items():
            assert normalized(key) == key and special["explanation"].strip(), where
            assert special.get("category", e["category"]) in CATEGORIES, where
        assert "{" not in e["explanation"], where


def test_a_confirmed_code_is_explained_whatever_datajud_names_it() -> None:
    found = explain(219, "Procedência", None)
    assert found is not None and (found.category, found.tell) == ("decision", True)
    assert "julgada procedente" in found.text
    assert explain(219, "Julgado procedente o pedido", None) == found


def test_an_unconfirmed_code_is_explained_only_when_datajud_names_it_so() -> None:
    found = explain(463, "Desistência", None)
    assert found is not None and found.category == "decision"
    assert explain(463, "DESISTENCIA", None) == found  # accents and case aside
    assert explain(463, "Outra coisa", None) is None


def test_an_unknown_code_or_a_recorded_movement_has_no_explanation() -> None:
    assert explain(999_999, "Movimento 999999", None) is None
    assert explain(None, "Juntada de petição", None) is None


def test_internal_moves_are_not_worth_telling() -> None:
    for code, name in ((51, "Conclusão"), (11010, "Mero expediente"), (123, "Remessa")):
        found = explain(code, name, None)
        assert found is not None and (found.category, found.tell) == ("internal", False)


def test_complements_fill_the_text() -> None:
    conclusion = explain(51, "Conclusão - para decisão", ["para decisão"])
    assert conclusion is not None and "enviado ao juiz para decisão" in conclusion.text
    hearing = explain(970, "Audiência - Conciliação, designada", ["Conciliação", "designada"])
    assert hearing is not None and hearing.category == "hearing"
    assert hearing.text.startswith("Foi marcada uma audiência (Conciliação, designada)")
    cancelled = explain(970, "Audiência - cancelada", ["cancelada"])
    assert cancelled is not None and cancelled.text.startswith("A audiência foi cancelada")
    # a document issued is internal, unless it is an alvará: money for the client
    certificate = explain(60, "Expedição de documento - Certidão", ["Certidão"])
    assert certificate is not None and (certificate.category, certificate.tell) == (
        "internal",
        False,
    )
    assert "Certidão" in certificate.text
    alvara = explain(60, "Expedição de documento - Alvará", ["Alvará"])
    assert alvara is not None and (alvara.category, alvara.tell) == ("decision", True)
    assert "alvará" in alvara.text


async def test_the_movements_list_explains_each_movement(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
) -> None:
    contact = await f.make_contact(session, office_a.id)
    await session.commit()
    async with running_datajud() as datajud:
        case = await add_case(client, office_a, contact.id)
        datajud.add(
            "tjsp",
            TJSP_DIGITS,
            movement(26, "Distribuição", "2024-05-10T14:22:31.000Z", "sorteio"),
            movement(51, "Conclusão", "2024-06-01T10:00:00.000Z", "para decisão"),
            movement(219, "Procedência", "2024-07-01T10:00:00.000Z"),
            movement(4242, "Movimento desconhecido", "2024-08-01T10:00:00.000Z"),
        )
        await sync(app, datajud.settings(settings), Watcher(sleep=no_sleep), case["id"])
    r = await client.get(f"/cases/{case['id']}/movements", headers=office_a.headers)
    assert r.status_code == 200
    items = {m["code"]: m for m in r.json()["data"]}
    assert items[26]["category"] == "filing"
    assert "(sorteio)" in items[26]["explanation"]
    assert items[51]["category"] == "internal"
    assert "para decisão" in items[51]["explanation"]
    assert items[219]["category"] == "decision"
    assert items[219]["explanation"].startswith("O juiz deu razão ao pedido")
    assert (items[4242]["explanation"], items[4242]["category"]) == (None, None)
    assert items[4242]["description"] == "Movimento desconhecido"
