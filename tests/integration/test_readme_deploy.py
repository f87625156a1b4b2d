"""The README's deploy step for producers quotes the producer example's own Service Binding, which works."""

from __future__ import annotations

import re
from pathlib import Path

from tsumugi_dev.config import ServiceBindingConfig, load_config
from tsumugi_dev.jsonc import loads_jsonc

ROOT = Path(__file__).resolve().parents[2]


def _deploy_section() -> str:
    text = (ROOT / "README.md").read_text()
    return text.split("## Deploying to Cloudflare", 1)[1].split("\n## ", 1)[0]


def test_the_quoted_binding_is_the_producer_examples_own() -> None:
    (block,) = re.findall(r"```jsonc\n(.*?)```", _deploy_section(), flags=re.DOTALL)
    quoted = loads_jsonc("{" + block.strip().rstrip(",") + "}")["services"]
    producer = load_config(ROOT / "services" / "performers" / "producer" / "wrangler.jsonc")
    assert [ServiceBindingConfig(**entry) for entry in quoted] == list(producer.services)
    assert producer.services == (
        ServiceBindingConfig(binding="TSUMUGI", service="tsumugi-scheduler", entrypoint="TsumugiRpc"),
    )


def test_the_named_service_and_entrypoint_exist_in_the_scheduler() -> None:
    scheduler = load_config(ROOT / "services" / "scheduler" / "wrangler.jsonc")
    assert scheduler.name == "tsumugi-scheduler"
    # The entry module binds the classes entry_classes builds (ADR-0155), TsumugiRpc among them.
    assert re.search(
        r"^TsumugiJobShard, (?:\w+, )*TsumugiRpc, (?:\w+, )*Default = entry_classes\(",
        scheduler.main.read_text(),
        flags=re.MULTILINE,
    )
