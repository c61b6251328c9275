import pytest

from chalicelib.access.allow_list import InvalidCidr, allows, parse_cidrs


@pytest.mark.parametrize(
    ("given", "canonical"),
    [
        (["10.0.0.0/8"], ("10.0.0.0/8",)),
        (["203.0.113.7"], ("203.0.113.7/32",)),
        ([" 2001:DB8::/32 "], ("2001:db8::/32",)),
        (["::1"], ("::1/128",)),
        (["10.0.0.0/8", "10.0.0.0/8"], ("10.0.0.0/8",)),
        (["0.0.0.0/0", "::/0"], ("0.0.0.0/0", "::/0")),
    ],
)
def test_parse_cidrs_answers_canonical_spellings(given: list[str], canonical: tuple) -> None:
    assert parse_cidrs(given) == canonical


@pytest.mark.parametrize(
    "given",
    [[], ["10.0.0.1/8"], ["x"], ["10.0.0.0/33"], [None], "10.0.0.0/8", None, ["1" * 65],
     [f"10.{i}.0.0/16" for i in range(21)]],
)
def test_parse_cidrs_refuses_what_is_not_1_to_20_networks(given: object) -> None:
    with pytest.raises(InvalidCidr):
        parse_cidrs(given)


@pytest.mark.parametrize(
    ("cidrs", "source", "expected"),
    [
        (["10.0.0.0/8"], "10.1.2.3", True),
        (["10.0.0.0/8"], "11.1.2.3", False),
        (["10.0.0.0/8", "2001:db8::/32"], "2001:db8::1", True),
        (["2001:db8::/32"], "10.0.0.1", False),
        (["198.51.100.0/24"], "::ffff:198.51.100.7", True),
        (["127.0.0.1/32"], "127.0.0.1", True),
        (["0.0.0.0/0"], None, False),
        (["0.0.0.0/0"], "", False),
        (["0.0.0.0/0"], "not an address", False),
        (["garbage"], "10.0.0.1", False),
    ],
)
def test_allows(cidrs: list[str], source: str | None, expected: bool) -> None:
    assert allows(cidrs, source) is expected
