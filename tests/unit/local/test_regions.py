"""`make run REGIONS=3`'s plan: how many Regions, which ports, what the banner says."""

from __future__ import annotations

import pytest

from local.regions import (
    Region,
    banner,
    default_ports,
    plan,
    ports_named_twice,
    region_ports,
    regions_setting,
)

HOST = "127.0.0.1"


@pytest.mark.parametrize(("text", "count"), [("", 1), ("1", 1), ("2", 2), (" 3 ", 3)])
def test_regions_names_one_to_three_regions(text: str, count: int) -> None:
    problems: list[str] = []

    assert regions_setting({"REGIONS": text}, problems) == count
    assert problems == []


@pytest.mark.parametrize("text", ["0", "4", "three", "-1", "3.0"])
def test_any_other_regions_value_is_a_problem_not_a_traceback(text: str) -> None:
    problems: list[str] = []

    assert regions_setting({"REGIONS": text}, problems) == 1
    assert len(problems) == 1 and problems[0].startswith("REGIONS=")


def test_three_regions_on_consecutive_ports_with_the_development_servers_after_them() -> None:
    defaults = default_ports(3)

    regions = plan(HOST, 3, 8000, defaults["MCP_PORT"])

    assert [(r.name, r.port, r.gate_port) for r in regions] == [
        ("us-east-1", 8000, 8004),
        ("us-east-2", 8001, 8005),
        ("us-west-2", 8002, 8006),
    ]
    assert (defaults["IDP_PORT"], defaults["SCAN_SIGNER_PORT"]) == (8003, 8007)


def test_one_region_keeps_todays_ports() -> None:
    assert default_ports(1) == {"IDP_PORT": 8001, "MCP_PORT": 8002, "SCAN_SIGNER_PORT": 8003}
    assert region_ports(1, 8000, 8002) == []


def test_the_default_layout_of_three_regions_names_no_port_twice() -> None:
    defaults = default_ports(3)
    wanted = [
        (8000, "the service", "PORT"),
        (defaults["IDP_PORT"], "the issuer", "IDP_PORT"),
        (defaults["MCP_PORT"], "the MCP server", "MCP_PORT"),
        (defaults["SCAN_SIGNER_PORT"], "the signer", "SCAN_SIGNER_PORT"),
        *region_ports(3, 8000, defaults["MCP_PORT"]),
    ]

    assert len(wanted) == 8
    assert ports_named_twice(wanted) == []


def test_a_port_two_parts_would_share_is_one_line_naming_both() -> None:
    wanted = [
        (8000, "the service", "PORT"),
        (8001, "the development OpenID issuer", "IDP_PORT"),
        *region_ports(3, 8000, 9000),
    ]

    problems = ports_named_twice(wanted)

    assert problems == [
        "port 8001 would serve both the development OpenID issuer and the us-east-2 Region's "
        "API: move one (PORT=<port>)"
    ]


def test_port_zero_gives_every_region_its_own_free_ports() -> None:
    regions = plan(HOST, 3, 0, 0)

    ports = [p for r in regions for p in (r.port, r.gate_port)]
    assert len(set(ports)) == 6 and 0 not in ports


def test_the_banner_lists_each_regions_api_and_gate_and_nothing_for_one_region() -> None:
    regions = [Region(name, HOST, 8000 + i, 8004 + i) for i, name in enumerate(
        ("us-east-1", "us-east-2", "us-west-2")
    )]
    described = [
        {"region": r.name, "endpoint": r.endpoint, "mcpResource": r.mcp_resource}
        for r in regions
    ]

    text = banner({"endpoint": regions[0].endpoint, "regions": described})

    line = "  us-east-2  http://127.0.0.1:8001  (data-plane gate: http://127.0.0.1:8005/mcp)"
    assert line in text
    assert text.count("http://127.0.0.1:80") == 7  # three APIs, three gates, the issuer
    assert banner({"endpoint": regions[0].endpoint}) == ""
