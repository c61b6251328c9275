"""Renders the API reference page (docs/reference/api.md) from the OpenAPI document.

The document is what `GET /openapi.json` serves, written to a file by `python -m
tools.openapi`; this tool reads only that file, so it does not care where the code that
builds the document lives. `--check` writes nothing and fails when the page differs from
what the document gives (`make docs` runs it that way, `make api-reference` writes it).

    python -m tools.api_reference build/openapi.json [docs/reference/api.md] [--check]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

PAGE = Path("docs/reference/api.md")
METHODS = ("get", "put", "post", "patch", "delete", "head", "options")

Json = Mapping[str, Any]


def cell(text: object) -> str:
    """Text that stays inside one Markdown table cell."""
    return " ".join(str(text).split()).replace("|", "\\|")


def slug(heading: str) -> str:
    """The anchor MkDocs (and GitHub) give a heading made of word characters and spaces."""
    return re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")


def resolve(document: Json, item: Json) -> Json:
    """`item`, or what its `$ref` (a local JSON pointer) names."""
    reference = item.get("$ref")
    if not isinstance(reference, str):
        return item
    target: Any = document
    for part in reference.removeprefix("#/").split("/"):
        target = target[part]
    resolved: Json = target
    return resolved


def schema_name(reference: str) -> str:
    return reference.rsplit("/", 1)[-1]


def type_of(schema: Json) -> str:
    """A schema in a few words: its type, the schema it names, its enum, its alternatives."""
    if "$ref" in schema:
        name = schema_name(schema["$ref"])
        return f"[{name}](#{slug(name)})"
    if "enum" in schema:
        return ", ".join(f"`{json.dumps(value)}`" for value in schema["enum"])
    if "const" in schema:
        return f"`{json.dumps(schema['const'])}`"
    for combiner in ("anyOf", "oneOf"):
        if combiner in schema:
            return " or ".join(type_of(option) for option in schema[combiner])
    if "allOf" in schema:
        return " and ".join(type_of(part) for part in schema["allOf"])
    kind = schema.get("type", "any")
    if isinstance(kind, list):
        return " or ".join(str(k) for k in kind)
    if kind == "array":
        return f"array of {type_of(schema.get('items', {}))}"
    return str(kind)


def body_schema(content: Json) -> str:
    parts = []
    for media_type, media in content.items():
        schema = media.get("schema", {})
        if "allOf" in schema and "properties" in schema:
            # A problem narrowed to its codes: the codes are in the description already.
            schema = {"allOf": schema["allOf"]}
        parts.append(f"`{media_type}` {type_of(schema)}")
    return "; ".join(parts)


def operations(document: Json) -> Iterator[tuple[str, str, Json]]:
    for path, item in document["paths"].items():
        for method in METHODS:
            if method in item:
                yield path, method, item[method]


def render_operation(document: Json, path: str, method: str, operation: Json) -> list[str]:
    lines = [f"### {operation.get('summary') or operation['operationId']}", ""]
    lines += [f"`{method.upper()} {path}` (`{operation['operationId']}`)", ""]
    if operation.get("description"):
        lines += [operation["description"].strip(), ""]
    security = operation.get("security", document.get("security", []))
    schemes = sorted({name for requirement in security for name in requirement})
    lines += [
        "Credential: " + (", ".join(f"`{s}`" for s in schemes) if schemes else "none") + ".",
        "",
    ]
    parameters = [resolve(document, p) for p in operation.get("parameters", [])]
    if parameters:
        lines += ["| Parameter | In | Required | Type | Meaning |", "|---|---|---|---|---|"]
        for p in parameters:
            lines.append(
                f"| `{p['name']}` | {p['in']} | {'yes' if p.get('required') else 'no'} "
                f"| {cell(type_of(p.get('schema', {})))} | {cell(p.get('description', ''))} |"
            )
        lines.append("")
    if "requestBody" in operation:
        body = resolve(document, operation["requestBody"])
        required = "required" if body.get("required") else "optional"
        lines += [f"Request body ({required}): {body_schema(body.get('content', {}))}.", ""]
    lines += ["| Status | Meaning | Body |", "|---|---|---|"]
    for status, response in operation.get("responses", {}).items():
        response = resolve(document, response)
        lines.append(
            f"| {status} | {cell(response.get('description', ''))} "
            f"| {cell(body_schema(response.get('content', {})))} |"
        )
    return [*lines, ""]


def render_schema(name: str, schema: Json) -> list[str]:
    lines = [f"### {name}", ""]
    if schema.get("description"):
        lines += [schema["description"].strip(), ""]
    properties = schema.get("properties", {})
    if not properties:
        return [*lines, f"Type: {type_of(schema)}.", ""]
    required = set(schema.get("required", []))
    lines += ["| Field | Type | Required | Meaning |", "|---|---|---|---|"]
    for field, spec in properties.items():
        lines.append(
            f"| `{field}` | {cell(type_of(spec))} | {'yes' if field in required else 'no'} "
            f"| {cell(spec.get('description', ''))} |"
        )
    return [*lines, ""]


def render(document: Json) -> str:
    info = document["info"]
    lines = [
        "# API reference",
        "",
        "<!-- Generated by `python -m tools.api_reference` from the OpenAPI document"
        " (`make api-reference`): edit the code that declares the operations, not this page. -->",
        "",
        f"{info['title']}, version {info['version']}: every operation of the OpenAPI document"
        " the service serves at `GET /openapi.json` (no credential needed). Conventions"
        " shared by every operation (authentication, `X-Workspace-Id`, the order of checks,"
        " CORS) are in [API conventions](conventions.md); what each error `code` means and"
        " what to do about it, in [Errors](../errors.md).",
        "",
    ]
    if info.get("description"):
        lines += [info["description"].strip(), ""]
    schemes = document.get("components", {}).get("securitySchemes", {})
    if schemes:
        lines += ["## Credentials", "", "| Name | Scheme | Meaning |", "|---|---|---|"]
        for name, scheme in schemes.items():
            kind = scheme.get("scheme", scheme.get("type", ""))
            lines.append(f"| `{name}` | {cell(kind)} | {cell(scheme.get('description', ''))} |")
        lines.append("")
    tags = [t["name"] for t in document.get("tags", [])]
    everything = list(operations(document))
    for op_tag in (tag for _, _, op in everything for tag in op.get("tags", [])):
        if op_tag not in tags:
            tags.append(op_tag)
    for tag in tags:
        lines += [f"## {tag}", ""]
        for path, method, operation in everything:
            if tag in operation.get("tags", []):
                lines += render_operation(document, path, method, operation)
    untagged = [(p, m, o) for p, m, o in everything if not o.get("tags")]
    if untagged:
        lines += ["## Other operations", ""]
        for path, method, operation in untagged:
            lines += render_operation(document, path, method, operation)
    lines += ["## Schemas", ""]
    for name, schema in document.get("components", {}).get("schemas", {}).items():
        lines += render_schema(name, schema)
    return "\n".join(lines).rstrip() + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("document", type=Path, help="the OpenAPI document (tools.openapi)")
    parser.add_argument("page", nargs="?", type=Path, default=PAGE)
    parser.add_argument("--check", action="store_true", help="fail when the page is stale")
    args = parser.parse_args(argv)
    page = render(json.loads(args.document.read_text()))
    if args.check:
        current = args.page.read_text() if args.page.exists() else ""
        if current != page:
            print(
                f"{args.page} is not what the OpenAPI document gives: run `make api-reference`",
                file=sys.stderr,
            )
            return 1
        print(f"{args.page} is current")
        return 0
    args.page.parent.mkdir(parents=True, exist_ok=True)
    args.page.write_text(page)
    print(f"wrote {args.page}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
