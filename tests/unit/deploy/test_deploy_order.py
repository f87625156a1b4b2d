"""Deploy order: each Worker after the Workers its Service Bindings name."""

from __future__ import annotations

import pytest

from tsumugi_dev.deploy_order import bound_services, deploy_order
from tsumugi_dev.worker_source import DeployError


def test_performers_then_scheduler_then_producers_whatever_the_given_order() -> None:
    bindings = {
        "producer": ["scheduler"],
        "scheduler": ["performers", "mailers"],
        "performers": [],
        "mailers": [],
    }
    assert deploy_order(bindings) == ["performers", "mailers", "scheduler", "producer"]


def test_bindings_outside_the_set_and_to_itself_do_not_hold_a_worker_back() -> None:
    assert deploy_order({"producer": ["elsewhere"], "scheduler": ["scheduler"]}) == ["producer", "scheduler"]


def test_a_cycle_is_an_error_naming_the_workers() -> None:
    with pytest.raises(DeployError, match=r"services: the Service Bindings of a, b form a cycle"):
        deploy_order({"a": ["b"], "b": ["a"], "c": []})


def test_bound_services_reads_the_service_names() -> None:
    raw = {
        "services": [{"binding": "X", "service": "w1"}, {"binding": "Y", "service": "w2", "entrypoint": "E"}]
    }
    assert bound_services(raw) == ["w1", "w2"]
    assert bound_services({}) == []
