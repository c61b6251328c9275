"""The package's metadata and docs: dependency ranges (a library pins nothing) that this venv
meets, and a README that states the retry policy the code applies, in the TS SDK's words."""

from __future__ import annotations

import tomllib
from importlib.metadata import version
from pathlib import Path

from packaging.requirements import Requirement  # packaging comes with pytest

from memory_sdk import retry

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


def dependencies() -> list[Requirement]:
    with PYPROJECT.open("rb") as file:
        project = tomllib.load(file)["project"]
    return [Requirement(line) for line in project["dependencies"]]


def test_every_dependency_is_a_range_with_an_upper_bound() -> None:
    for requirement in dependencies():
        operators = {spec.operator for spec in requirement.specifier}
        assert "==" not in operators, f"{requirement} is a pin"
        assert ">=" in operators and "<" in operators, f"{requirement} is not a bounded range"


def test_the_installed_versions_satisfy_the_ranges() -> None:
    for requirement in dependencies():
        installed = version(requirement.name)
        assert requirement.specifier.contains(installed), f"{requirement.name} {installed}"


def policy_block(readme: Path) -> str:
    text = readme.read_text(encoding="utf-8")
    start = text.index("<!-- retry-policy:start")
    return text[start : text.index("<!-- retry-policy:end -->", start)]


def test_both_readmes_state_the_retry_policy_in_the_same_words() -> None:
    sdks = PYPROJECT.parents[1]
    ours = policy_block(sdks / "python" / "README.md")
    theirs = policy_block(sdks / "typescript" / "README.md")

    assert ours == theirs


def test_the_readme_states_the_policy_the_code_applies() -> None:
    block = policy_block(PYPROJECT.parent / "README.md")

    assert f"default {retry.DEFAULT_RETRIES} ({retry.DEFAULT_RETRIES + 1} attempts" in block
    assert f"from 0 to {retry.MAX_RETRIES}" in block
    times = "\N{MULTIPLICATION SIGN}"
    assert f"min({retry.BACKOFF_CAP:g} s, {retry.BACKOFF_BASE:g} s {times} 2ⁿ)" in block
    assert f"over {retry.RETRY_AFTER_MAX:g} s is not waited for" in block
    assert "| 429 | retried | not retried |" in block
    assert "| 502, 503, 504 | retried | not retried |" in block
    assert "| 500 | never retried | never retried |" in block
    assert sorted(retry.RETRYABLE_STATUSES) == [429, 502, 503, 504]
