"""The performer Worker's local mail sink: SendMail completes under ``tsumugi dev`` with no mail API running."""

from __future__ import annotations

import doctest
import json
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest
import respx

from tests.integration.system_driver import Driver, example_configs
from tsumugi_dev.clock import VirtualClock
from tsumugi_dev.config import WorkerConfig, load_config
from tsumugi_dev.project import project_worker_configs
from tsumugi_dev.runtime import LocalRuntime
from tsumugi_examples import MailSink, mail_sink

PERFORMERS = "tsumugi-performers"
PERFORMERS_CONFIG = Path(__file__).resolve().parents[2] / "services" / "performers" / "wrangler.jsonc"
MAIL = {"to": "a@example.com", "subject": "hi", "body": "hello"}


@pytest.fixture
def system_configs() -> list[WorkerConfig]:
    """This module's subject is the example performer Worker's mail sink: the system runs the repository's."""
    return example_configs()


def test_the_dev_mail_url_is_the_performer_workers_own_sink() -> None:
    url = urlsplit(load_config(PERFORMERS_CONFIG).vars["MAIL_API_URL"])
    # tsumugi dev gives the repo's Workers ports from 8787 in [tool.tsumugi].workers order.
    position = project_worker_configs(PERFORMERS_CONFIG.parents[2]).index(PERFORMERS_CONFIG)
    assert (url.hostname, url.port, url.path) == ("127.0.0.1", 8787 + position, "/mail")


def test_the_sink_records_once_per_idempotency_key_and_names_bad_fields() -> None:
    sink = MailSink(capacity=2)
    first = sink.post(json.dumps(MAIL), "k1")
    assert (first.status, first.body) == (202, {"id": "mail-1"})
    assert sink.post(json.dumps(MAIL), "k1").body == {"id": "mail-1"}
    assert sink.post(json.dumps(MAIL), None).body == {"id": "mail-2"}
    assert sink.post(json.dumps(MAIL), "k3").body == {"id": "mail-3"}
    assert [m.id for m in sink.messages] == ["mail-2", "mail-3"]  # only the newest `capacity` stay
    assert sink.post("{", "k4").body == {"error": "body must be valid JSON"}
    assert sink.post("[1]", "k4").body == {"error": "body must be a JSON object"}
    assert sink.post(json.dumps({"to": "a", "subject": 1}), "k4").body == {
        "error": "subject must be a string"
    }
    assert sink.post(json.dumps({"to": "a", "subject": "s", "body": 2}), None).status == 400
    with pytest.raises(ValueError, match="capacity must be at least 1"):
        MailSink(capacity=0)


def test_the_sink_docstring_examples_hold() -> None:
    assert doctest.testmod(mail_sink).failed == 0


@pytest.fixture
def performers_http(system: LocalRuntime) -> Iterator[respx.MockRouter]:
    """httpx requests to the performer Worker's dev port reach its fetch, as tsumugi dev's HTTP server would."""

    async def to_performers(request: httpx.Request) -> httpx.Response:
        answer = await system.fetch(
            PERFORMERS,
            str(request.url),
            method=request.method,
            headers=dict(request.headers),
            body=request.content or None,
        )
        return httpx.Response(
            answer.status, content=await answer.bytes(), headers=list(answer.headers.items())
        )

    with respx.mock(base_url="http://127.0.0.1:8788") as mock:
        mock.route().mock(side_effect=to_performers)
        yield mock


async def test_a_send_mail_job_completes_against_the_dev_sink(
    system: LocalRuntime, clock: VirtualClock, driver: Driver, performers_http: respx.MockRouter
) -> None:
    job_id = await driver.enqueue("SendMail", MAIL)
    await clock.advance(100)

    job = await driver.job(job_id)
    assert (job.state, job.attempts) == ("COMPLETED", 1)
    assert job.result_value() == {"status": 202, "answer": {"id": "mail-1"}}
    listing = await system.fetch(PERFORMERS, "http://performers/mail")
    (received,) = json.loads(await listing.text())["messages"]
    assert received == {**MAIL, "id": "mail-1", "idempotency_key": job_id}
    bad = await system.fetch(PERFORMERS, "http://performers/mail", method="POST", body="nope")
    assert bad.status == 400
