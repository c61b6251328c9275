"""`make bench`'s JSON: per kind of credential, and the sizing rule beside the packaged size."""

from __future__ import annotations

from bench import authorizer

MS = 1e-3


def summary(round_trips: float) -> dict[str, float]:
    return {"round_trips": round_trips, "cpu": 3 * MS, "floor_p50": 8 * MS, "floor_p99": 9 * MS}


def test_each_kind_of_credential_has_its_flat_fields_and_the_same_figures_nested() -> None:
    kinds = {s.name: summary(s.max_round_trips) for s in authorizer.SCENARIOS}
    counts = {s.name: 10 for s in authorizer.SCENARIOS}

    figures = authorizer.per_scenario(kinds, counts)

    assert figures["roundTripsPerDecision"] == 1  # the key minted today: no suffix
    assert figures["roundTripsPerDecisionOldKey"] == 2
    assert figures["cpuPerDecisionUserTokenUs"] == 3000
    assert figures["latencyFloorOldKeyP99Ms"] == 9.0
    assert sorted(figures["credentials"]) == sorted(s.name for s in authorizer.SCENARIOS)
    assert figures["credentials"]["old key"]["maxRoundTrips"] == 2


def test_sizing_says_the_rule_agrees_with_the_packaged_size_inside_its_cpu_band() -> None:
    size = authorizer.sizing(3 * MS, 5 * MS, 1024)

    assert (size["ruleMb"], size["agrees"]) == (1024, True)
    assert size["packagedHoldsForCpuMs"] == [1.28, 10.99]
    assert "nothing to do" in authorizer.sizing_lines(size)


def test_sizing_on_a_quick_machine_gives_512_mb_and_says_what_to_do() -> None:
    size = authorizer.sizing(1 * MS, 5 * MS, 1024)

    lines = authorizer.sizing_lines(size)
    assert (size["ruleMb"], size["agrees"]) == (512, False)
    assert "asks for nothing by itself" in lines
    assert "lambda_memory_size" in lines
