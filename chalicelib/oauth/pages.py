"""The two pages people see during an MCP authorization: consent, and an error.

Plain server-rendered HTML: no script at all, no style sheet, every value escaped. Each page
is sent with a Content-Security-Policy that allows nothing but posting the form to us and,
after the post, the redirect to the client (`form-action` governs redirects after a form
submission too), and that forbids framing (`frame-ancestors 'none'`, and X-Frame-Options
for older browsers), so no other site can overlay the consent button.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from urllib.parse import urlsplit

from chalicelib.oauth.clients import is_loopback_http
from chalicelib.workspaces.model import Workspace

SCOPE_DESCRIPTIONS = {
    "memory": "read and write memories",
    "entities": "read and write entities",
    "reasoning": "run reasoning",
    "ontology": "read and change the ontology",
    "skills": "use and manage skills",
    "workspace:admin": "administer the workspace: members and keys",
}

_PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>{title}</title>
</head>
<body>
<main>
{content}
</main>
</body>
</html>
"""


def redirect_origin(redirect_uri: str) -> str:
    """The CSP source that allows the redirect back: an origin, or `scheme:` for an app."""
    parts = urlsplit(redirect_uri)
    if parts.scheme in ("http", "https"):
        return f"{parts.scheme}://{parts.netloc}"
    return f"{parts.scheme}:"


def headers(redirect_uri: str | None = None) -> dict[str, str | list[str]]:
    form_action = "'self'" + (f" {redirect_origin(redirect_uri)}" if redirect_uri else "")
    return {
        "Content-Type": "text/html; charset=utf-8",
        "Content-Security-Policy": (
            f"default-src 'none'; form-action {form_action}; frame-ancestors 'none'; "
            "base-uri 'none'"
        ),
        "X-Frame-Options": "DENY",
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "no-referrer",
        "Cache-Control": "no-store",
    }


def error_page(title: str, message: str) -> str:
    content = (
        f"<h1>{escape(title)}</h1>\n<p>{escape(message)}</p>\n"
        "<p>Close this window and try again from your application.</p>"
    )
    return _PAGE.format(title=escape(title), content=content)


def consent_page(
    *,
    action: str,
    consent: str,
    csrf: str,
    client_name: str | None,
    client_id: str,
    redirect_uri: str,
    resource: str,
    scopes: Sequence[str],
    workspaces: Sequence[Workspace],
    user_label: str,
) -> str:
    name = client_name or "An application"
    host = urlsplit(redirect_uri).hostname or redirect_origin(redirect_uri)
    scope_items = "\n".join(
        f"<li><strong>{escape(scope)}</strong>: {escape(SCOPE_DESCRIPTIONS.get(scope, scope))}</li>"
        for scope in scopes
    )
    if workspaces:
        options = "\n".join(
            f'<option value="{escape(w.id)}">{escape(w.name)}</option>' for w in workspaces
        )
        picker = (
            '<p><label for="workspace_id">Workspace</label><br>\n'
            f'<select id="workspace_id" name="workspace_id" required>\n{options}\n</select></p>'
        )
        allow = '<button type="submit" name="decision" value="allow">Allow</button>'
    else:
        picker = "<p>You are not a member of any workspace, so there is nothing to allow.</p>"
        allow = ""
    loopback_warning = ""
    if is_loopback_http(redirect_uri):
        # Any program on the person's computer can listen on a loopback port: what names
        # itself here may be something else than the application the person started.
        loopback_warning = (
            "<p><strong>Warning:</strong> the access goes to a program on this computer"
            f" (<code>{escape(redirect_origin(redirect_uri))}</code>), not to a website."
            " Allow only if you started this yourself, just now, from an application you"
            " trust on this computer.</p>"
        )
    content = f"""<h1>Allow {escape(name)} to use your memory service?</h1>
<p>You are signed in as <strong>{escape(user_label)}</strong>.</p>
<p><strong>{escape(name)}</strong> (it sends you back to <strong>{escape(host)}</strong>)
asks for access to <strong>{escape(resource)}</strong> in one workspace, to:</p>
<ul>
{scope_items}
</ul>
{loopback_warning}
<p>Client id: <code>{escape(client_id)}</code>. Only allow applications you trust: the name is
the application's own claim.</p>
<form method="post" action="{escape(action)}">
<input type="hidden" name="consent" value="{escape(consent)}">
<input type="hidden" name="csrf" value="{escape(csrf)}">
{picker}
<p>{allow}
<button type="submit" name="decision" value="deny">Deny</button></p>
</form>"""
    return _PAGE.format(title=f"Allow {escape(name)}?", content=content)
