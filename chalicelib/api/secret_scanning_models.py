"""The wire shapes of /v1/auth/secret-scanning/github (`api/secret_scanning.py`): GitHub's
report, its headers and our verdicts."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, RootModel, model_validator

from chalicelib import errors
from chalicelib.api.wire import RefusedValue
from chalicelib.scanning import github
from chalicelib.scanning.github import MAX_TOKENS as MAX_REPORTED_TOKENS


def _reported(name: str, limit: int, rule: str | None = None) -> BeforeValidator:
    """A report's text field: a string of at most `limit` characters, else invalid_report."""
    detail = rule or f"{name} must be a string of at most {limit} characters."

    def check(value: Any) -> Any:
        if value is not None and (not isinstance(value, str) or len(value) > limit):
            raise RefusedValue(errors.INVALID_REPORT, detail)
        return value

    return BeforeValidator(check)


_TOKEN_RULE = "Each reported token needs a token string."


class ReportedTokenBody(BaseModel):
    """One token GitHub found; other fields are ignored. Every refusal is invalid_report, for
    the first token refused, its fields in this order."""

    model_config = ConfigDict(strict=True)

    token: Annotated[
        str, _reported("token", 1024, _TOKEN_RULE), Field(min_length=1, max_length=1024)
    ]
    type: Annotated[Annotated[str, Field(max_length=200)] | None, _reported("type", 200)] = None
    url: Annotated[Annotated[str, Field(max_length=2048)] | None, _reported("url", 2048)] = None
    source: Annotated[
        Annotated[str, Field(max_length=200)] | None, _reported("source", 200)
    ] = None

    @model_validator(mode="before")
    @classmethod
    def _an_object_with_a_token(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            raise RefusedValue(errors.INVALID_REPORT, "Each reported token must be an object.")
        if not data.get("token"):  # absent, null or empty (a long one, the field refuses)
            raise RefusedValue(errors.INVALID_REPORT, _TOKEN_RULE)
        return data


class LeakReport(RootModel[list[ReportedTokenBody]]):
    """GitHub's report: the tokens it found."""

    root: Annotated[list[ReportedTokenBody], Field(min_length=1, max_length=MAX_REPORTED_TOKENS)]

    @model_validator(mode="before")
    @classmethod
    def _an_array_of_tokens(cls, data: Any) -> Any:
        """Its size is checked before its tokens (a list's own bounds come after its items')."""
        if not isinstance(data, list) or not 1 <= len(data) <= MAX_REPORTED_TOKENS:
            raise RefusedValue(
                errors.INVALID_REPORT,
                f"The report must be a JSON array of 1 to {MAX_REPORTED_TOKENS} objects.",
            )
        return data

    def tokens(self) -> list[github.ReportedToken]:
        return [
            github.ReportedToken(token=t.token, type=t.type or "", url=t.url, source=t.source)
            for t in self.root
        ]


class Verdict(BaseModel):
    token_hash: Annotated[str, Field(pattern="^[0-9a-f]{64}$")]
    token_type: str
    label: Literal["true_positive", "false_positive"]


class LeakVerdicts(RootModel[list[Verdict]]):
    """One verdict per reported token."""



class GitHubSignature(BaseModel):
    """The headers of a GitHub report."""

    key_identifier: Annotated[
        str,
        Field(
            alias="Github-Public-Key-Identifier",
            min_length=1,
            description="The identifier of the GitHub key that signed the body.",
        ),
    ]
    signature: Annotated[
        str,
        Field(
            alias="Github-Public-Key-Signature",
            min_length=1,
            description="Base64 DER ECDSA P-256 signature over SHA-256 of the raw body.",
        ),
    ]
