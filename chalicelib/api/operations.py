"""One declaration per operation: what a route takes and gives, who may call it, and the
problems it may answer.

`Operations.operation` registers a view with Chalice and runs every request through one
order (README, "API reference"): authenticate (401), authorize by the declared policy (403;
a policy is checked here and nowhere else), decide on the workspace the path names by the one
workspace-access rule (`decisions/workspace_access.py`: 404 for a non-member, 403
`owner_required`), find the caller's own resource (404), validate the request with the
declared models (400/413/415), then act. A caller without the right never learns a request's
shape. Other 403s belong to a step of their own: resolving the credential
(`workspace_mismatch`, `not_a_member`, `ip_not_allowed`) and the key service
(`insufficient_scope`: no key gets a scope its creator lacks; `not_a_member`: a new or
rotated key's workspace is one its owner belongs to).

The OpenAPI document is generated from the same declarations and models (`api/openapi.py`).
A field's schema that is pydantic's own (its type, `Literal`, `Field` constraints) is the
validation's one definition. A request field's schema written by hand (`WithJsonSchema`: a
rule no pydantic type states, or one a service judges after the model) is held against what
validates it by `tests/unit/api/test_wire_schemas.py`: what the schema allows is accepted,
values just outside it are refused (by the model or the step it names), and the few values
the service accepts beyond the schema are listed there. A response's schemas are held by the
contract tiers (`tests/contract`: every answer against the document).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, cast, get_args
from urllib.parse import parse_qsl

from chalice.app import Request, Response
from pydantic import BaseModel, RootModel, ValidationError

from chalicelib import errors, strict_parsing
from chalicelib.access.policy import require_manager
from chalicelib.access.principal import Principal, Refusal
from chalicelib.api import edge
from chalicelib.api.wire import Invalid, RefusedValue
from chalicelib.decisions.workspace_access import WorkspaceAccess, workspace_access
from chalicelib.dependencies import is_dependency_failure
from chalicelib.errors import OAuthError, Problem, ServiceError
from chalicelib.idempotency import IdempotentRequest
from chalicelib.runtime import services


@dataclass(frozen=True)
class Policy:
    """Who may call an operation, once authenticated; `check` raises its 403 (None: anyone
    with a credential)."""

    name: str
    check: Callable[[Principal], None] | None = None
    problems: tuple[Problem, ...] = ()


ANY_CALLER = Policy("any caller")
MANAGER = Policy("manager", check=require_manager, problems=(errors.INSUFFICIENT_SCOPE,))


@dataclass(frozen=True)
class DomainRefusals[E: Exception]:
    """A domain's refusals (`keys/refusals.py`): the exception that carries one out of a
    change, and the one place the edge answers each as its problem."""

    raised: type[E]
    answer: Callable[[E], ServiceError]


@dataclass(frozen=True)
class Reply:
    """What a view answers when the declared status and headers are not all: the body (a
    response model, or None for no body), and a status or headers of its own."""

    body: BaseModel | None
    status: int | None = None
    headers: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Call:
    """One request, checked: the view's only argument."""

    request: Request
    principal: Principal
    path: Mapping[str, str]
    found: Any = None  # what the declaration's `find` returned
    query: Any = None  # an instance of the declared query model
    body: Any = None  # an instance of the declared body model
    idempotent: IdempotentRequest | None = None  # its Idempotency-Key, if declared and sent
    workspace: Any = None  # the workspace the path names, when the declaration has `workspace`


@dataclass(frozen=True)
class Operation:
    """One route's declaration (see the module's docstring)."""

    method: str
    path: str
    view: Callable[[Call], BaseModel | Reply | None]
    summary: str
    tag: str
    response: type[BaseModel] | None
    status: int
    policy: Policy
    problems: tuple[Problem, ...] = ()
    query: type[BaseModel] | None = None
    body: type[BaseModel] | None = None
    body_required: bool = True
    # A route under `/v1/workspaces/{workspace_id}`: who may act on that workspace.
    workspace: WorkspaceAccess | None = None
    find: Callable[..., Any] | None = None
    idempotent: bool = False
    secret: bool = False
    answer: str = "Done."
    # Other successes the view may answer (`Reply.status`), with what each means.
    also: Mapping[int, str] = field(default_factory=dict)
    description: str | None = None
    operation_id: str | None = None
    refusals: DomainRefusals[Any] | None = None  # its blueprint's, answered here

    @property
    def name(self) -> str:
        if self.operation_id:
            return self.operation_id
        first, *rest = self.view.__name__.split("_")
        return first + "".join(part.capitalize() for part in rest)

    @property
    def every_problem(self) -> tuple[Problem, ...]:
        """Its declared problems, after those its workspace access may answer."""
        access = self.workspace.problems if self.workspace is not None else ()
        return tuple(dict.fromkeys((*access, *self.problems)))

    @property
    def workspace_in_query(self) -> bool:
        return self.query is not None and "workspace_id" in self.query.model_fields

    def run(self, request: Request, path: dict[str, str]) -> Response:
        if self.refusals is None:
            return self._run(request, path)
        try:
            return self._run(request, path)
        except self.refusals.raised as refused:
            raise self.refusals.answer(refused) from None

    def _run(self, request: Request, path: dict[str, str]) -> Response:
        principal = edge.authenticate(request, allow_query_workspace=self.workspace_in_query)
        if self.policy.check is not None:
            self.policy.check(principal)
        workspace = None
        if self.workspace is not None:
            workspace = self._workspace(self.workspace, principal, path["workspace_id"])
        found = self.find(principal, **path) if self.find is not None else None
        query = validated(self.query, edge.query(request, query_names(self.query)), query=True)
        body, raw = None, {}
        if self.body is not None:
            declared = query_names(self.body)
            raw = edge.read_json(request, None, self.body_required, declared)
            body = validated(self.body, raw)
        elif self.method in ("PUT", "POST", "PATCH"):
            edge.read_json(request, set(), required=False)  # no body, or an empty object
        idempotent = None
        if self.idempotent:
            target = next(iter(path.values()), None)
            kind = self.view.__name__.replace("_", "-")
            idempotent = edge.idempotent_request(request, principal, kind, target, raw)
        call = Call(request, principal, path, found, query, body, idempotent, workspace)
        return self.respond(self.view(call))

    @staticmethod
    def _workspace(access: WorkspaceAccess, principal: Principal, workspace_id: str) -> Any:
        decided = workspace_access(services().workspace_store, principal, workspace_id, access)
        if isinstance(decided, Refusal):
            raise decided.error(credential_sent=True)
        return decided

    def respond(self, answer: BaseModel | Reply | None) -> Response:
        reply = answer if isinstance(answer, Reply) else Reply(answer)
        status = reply.status or self.status
        if reply.body is None:
            return edge.empty_response(status)
        return edge.json_response(
            reply.body.model_dump(mode="json", by_alias=True),
            status=status,
            headers=reply.headers,
            secret=self.secret,
        )


def query_names(model: type[BaseModel] | None) -> set[str]:
    if model is None:
        return set()
    return {info.alias or name for name, info in model.model_fields.items()}


def validated(model: type[BaseModel] | None, data: dict[str, Any], query: bool = False) -> Any:
    """`data` as an instance of `model`, or the catalogue's 400 for the first field refused
    (in the model's field order): never pydantic's own message."""
    if model is None:
        return None
    try:
        return model.model_validate(data)
    except ValidationError as invalid:
        raise refusal(model, invalid, query) from None


def refusal(model: type[BaseModel], invalid: ValidationError, query: bool) -> errors.ServiceError:
    found = invalid.errors(include_url=False, include_input=False)
    unknown = sorted(str(e["loc"][0]) for e in found if e["type"] == "extra_forbidden")
    if unknown:
        if query:
            return errors.UNKNOWN_PARAMETER.error(f"Unknown query parameter: {unknown[0][:64]!r}.")
        return errors.UNKNOWN_FIELD.error(f"Unknown field: {unknown[0][:64]!r}.")
    first = found[0]
    cause = (first.get("ctx") or {}).get("error")
    if isinstance(cause, RefusedValue):
        return cause.problem.error(cause.detail)
    wire_name = str(first["loc"][0]) if first["loc"] else ""
    marker = _marker(model, wire_name)
    default = errors.INVALID_PARAMETER if query else errors.INVALID_REQUEST
    if marker is None:
        return default.error()
    if first["type"] == "missing":
        return marker.problem.error(f"{wire_name} is required.")
    return marker.problem.error(marker.detail)


def _marker(model: type[BaseModel], wire_name: str) -> Invalid | None:
    for name, info in model.model_fields.items():
        if wire_name in (name, info.alias):
            return next((m for m in info.metadata if isinstance(m, Invalid)), None)
    return None


HTML = "text/html"
FORM = "application/x-www-form-urlencoded"


def token_request(request: Request, body: Mapping[str, type[BaseModel]]) -> tuple[bool, Any]:
    """(is_form, an instance of the declared model for the request's media type) of a token
    endpoint's request, or its RFC 6749 `invalid_request` (or the error its model's field
    names). `token_parameters` reads it; then the model checks the fields, in its field
    order."""
    json_model = body.get(edge.JSON)
    is_form, parameters = token_parameters(
        request, query_names(json_model) if json_model is not None else None
    )
    return is_form, oauth_validated(body[FORM if is_form else edge.JSON], parameters)


SEND_A_FORM = "Send application/x-www-form-urlencoded (RFC 6749), not another media type."


def token_parameters(
    request: Request, json_fields: set[str] | None = None
) -> tuple[bool, dict[str, Any]]:
    """(is_form, the parameters) of an OAuth request's body: the one reader of every token,
    revocation and consent form, and of the JSON token requests.

    Parameters in the URL are refused (tokens in a URL end up in logs and browser history). A
    form follows RFC 6749 §3.2: unknown parameters are ignored (by the model), repeated ones
    refused, empty ones are absent. JSON (where `json_fields` names its fields; else any
    other body than a form is refused) follows our wire conventions: an object, each field in
    snake_case or camelCase (both, disagreeing: refused), unknown fields refused, values
    non-empty strings (an empty workspace id is absent). Every refusal is an RFC 6749 error.
    """
    if request.query_params:
        raise _invalid("Send the parameters in the request body, not in the URL.")
    try:
        raw = edge.read_body(request)
    except ServiceError as too_large:  # 413
        raise errors.OAUTH_PAYLOAD_TOO_LARGE.oauth_error(too_large.detail) from None
    is_form = edge.media_type(request) == FORM
    if is_form:
        return True, _form_parameters(raw)
    if json_fields is None:
        raise _invalid(SEND_A_FORM)
    return False, _json_parameters(raw, json_fields)


def _invalid(description: str) -> OAuthError:
    return errors.OAUTH_INVALID_REQUEST.oauth_error(description)


def single_parameters(
    pairs: list[tuple[str, str]], known: set[str] | None = None
) -> dict[str, str]:
    """Each parameter once (RFC 6749 §3.1: a repeated one is an error), empty ones absent;
    those not `known` ignored."""
    names = [name for name, _ in pairs if known is None or name in known]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise _invalid(f"Parameter {repeated[0][:64]!r} is repeated.")
    return {
        name: value for name, value in pairs if value != "" and (known is None or name in known)
    }


def _form_parameters(raw: bytes) -> dict[str, str]:
    try:
        pairs = parse_qsl(raw.decode("utf-8"), keep_blank_values=True)
    except (UnicodeDecodeError, ValueError):
        raise _invalid("The form body is not valid.") from None
    return single_parameters(pairs)


# The service's own refusals that can reach the OAuth endpoints, and their RFC 6749
# counterparts.
_AS_OAUTH = {
    errors.PAYLOAD_TOO_LARGE: errors.OAUTH_PAYLOAD_TOO_LARGE,
    errors.DEPENDENCY_UNAVAILABLE: errors.TEMPORARILY_UNAVAILABLE,
}


@contextmanager
def oauth_errors() -> Iterator[None]:
    """The one error mapping of the OAuth endpoints: the service's own refusals (413, 503,
    any other as `invalid_request`) and every dependency failure in the RFC 6749 shape (an
    OAuth client reads one error shape)."""
    try:
        yield
    except ServiceError as error:
        oauth = _AS_OAUTH.get(error.problem)
        if oauth is None:
            oauth = (
                errors.TEMPORARILY_UNAVAILABLE
                if error.status == 503
                else errors.OAUTH_INVALID_REQUEST
            )
        raise oauth.oauth_error(error.detail) from None
    except Exception as error:
        if not is_dependency_failure(error):
            raise
        raise errors.TEMPORARILY_UNAVAILABLE.oauth_error() from None


def _json_parameters(raw: bytes, fields: set[str]) -> dict[str, Any]:
    try:
        body = strict_parsing.json_value(raw) if raw.strip() else None
    except strict_parsing.MalformedJson:
        raise _invalid("The request body is not valid JSON.") from None
    if not isinstance(body, dict):
        raise _invalid("The request body must be a JSON object.")
    try:
        body = strict_parsing.one_spelling(edge.without_empty_workspace(body), fields)
    except strict_parsing.ConflictingSpellings as conflict:
        raise _invalid(str(conflict)) from None
    unknown = sorted(set(body) - fields)
    if unknown:
        raise _invalid(f"Unknown field: {unknown[0][:64]!r}.")
    for name, value in body.items():
        if isinstance(value, int) and not isinstance(value, bool):
            continue  # a number of seconds (expires_in): its model checks the field
        if not isinstance(value, str) or not value:
            raise _invalid(f"{name} must be a non-empty string.")
    return body


def oauth_validated(
    model: type[BaseModel],
    parameters: Mapping[str, Any],
    context: Mapping[str, Any] | None = None,
) -> Any:
    """`parameters` as an instance of `model` (validated with `context`, for the rules that
    depend on the stage), or the RFC 6749 error of the first field refused: `invalid_request`
    ("x is required.") for a missing one, else the problem and detail its `Invalid` marker
    (or a validator's `RefusedValue`) names; never pydantic's message."""
    try:
        return model.model_validate(parameters, context=context)
    except ValidationError as invalid:
        first = invalid.errors(include_url=False, include_input=False)[0]
    cause = (first.get("ctx") or {}).get("error")
    if isinstance(cause, RefusedValue):
        raise cause.problem.oauth_error(cause.detail)
    location = list(first["loc"])
    member = _tagged_member(model, location[0]) if location else None
    if member is not None:  # inside one member of a tagged union: its location is the tag's
        model, location = member, location[1:]
    wire_name = str(location[0]) if location else ""
    if first["type"] == "missing":
        raise _invalid(f"{wire_name} is required.")
    marker = _marker(model, wire_name)
    if marker is None:
        raise errors.OAUTH_INVALID_REQUEST.oauth_error()
    raise marker.problem.oauth_error(marker.detail)


def _tagged_member(model: type[BaseModel], tag: Any) -> type[BaseModel] | None:
    """The member that `tag` names of the union a root model discriminates (`TokenForm`)."""
    root = model.model_fields.get("root") if issubclass(model, RootModel) else None
    if root is None or not isinstance(root.discriminator, str):
        return None
    for member in get_args(root.annotation):
        if tag in get_args(member.model_fields[root.discriminator].annotation):
            return cast(type[BaseModel], member)
    return None


@dataclass(frozen=True)
class Answer:
    """One answer of a public operation: its status and meaning; its body, a response model
    (JSON), a media type (`HTML`: a page) or None; the catalogue problems it carries (as
    problem+json, or RFC 6749 errors with `oauth`); and the headers it sends (name: its
    entry under the document's components/headers)."""

    status: int
    description: str
    body: type[BaseModel] | str | None = None
    problems: tuple[Problem, ...] = ()
    oauth: bool = False
    headers: Mapping[str, str] = field(default_factory=dict)


OAUTH_TOO_LARGE = Answer(
    413, "The body is larger than 16 KiB.", problems=(errors.OAUTH_PAYLOAD_TOO_LARGE,), oauth=True
)


@dataclass(frozen=True)
class Public:
    """A route without a bearer credential that keeps an edge of its own (the token endpoints,
    the MCP authorization server, the leaked-key reports, the pages): its order of checks and
    its error shape are its own (RFC 6749, HTML pages), so it declares what it takes (query,
    header and body models, by media type) and every answer (`Answer`), for the document. The
    token endpoints read their body into those models with `token_request`."""

    method: str
    path: str
    name: str
    summary: str
    tag: str
    answers: tuple[Answer, ...]
    query: type[BaseModel] | None = None
    headers: type[BaseModel] | None = None
    body: Mapping[str, type[BaseModel]] = field(default_factory=dict)
    description: str | None = None


class Operations(edge.Routes):
    """A route blueprint whose routes are declared operations (`operation`, `public`)."""

    def __init__(self, import_name: str, refusals: DomainRefusals[Any] | None = None) -> None:
        super().__init__(import_name)
        self.refusals = refusals
        self.operations: list[Operation] = []
        self.public_operations: list[Public] = []

    def public(
        self, method: str, path: str, content_types: list[str] | None = None, **declared: Any
    ) -> Callable[..., Any]:
        """Registers the view as Chalice's route, unchanged, and records its declaration."""
        self.public_operations.append(Public(method, path, **declared))
        media = {"content_types": content_types} if content_types else {}
        return self.route(path, methods=[method], **media)

    def operation(self, method: str, path: str, **declared: Any) -> Callable[..., Any]:
        def decorator(view: Callable[[Call], BaseModel | Reply | None]) -> Callable[..., Any]:
            declaration = Operation(method, path, view, refusals=self.refusals, **declared)
            self.operations.append(declaration)

            def handler(**path_parameters: str) -> Response:
                return declaration.run(self.current_request, path_parameters)

            handler.__name__ = view.__name__
            self.route(path, methods=[method], content_types=edge.ANY_MEDIA_TYPE)(handler)
            return view

        return decorator
