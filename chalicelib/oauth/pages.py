"""The pages people see during an MCP authorization: consent, and an error.

Plain server-rendered HTML: no script at all, every value escaped, one stylesheet of our own
(`pages.css`, served at STYLESHEET_PATH from this origin, no inline style). Each page is sent
with a Content-Security-Policy that allows nothing but that stylesheet, posting the form to
us and, after the post, the redirect to the client (`form-action` governs redirects after a
form submission too), and that forbids framing (`frame-ancestors 'none'`, and
X-Frame-Options for older browsers), so no other site can overlay the consent button.

The consent page leads with the decision: who asks (the name is the application's own
claim), where the person is sent back (the host, with a warning for a program on this
computer and for a host other than the one publishing the application's description), the
workspace, each scope in plain words, then Allow and Deny.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from pathlib import Path
from urllib.parse import urlsplit

from chalicelib.oauth.clients import is_loopback_http
from chalicelib.workspaces.model import Workspace

STYLESHEET_PATH = "/v1/oauth/pages.css"
# Where a person without a workspace creates one: the dashboard (same origin), its section.
DASHBOARD_WORKSPACES = "/dashboard/#workspaces"
STYLESHEET = Path(__file__).with_name("pages.css")

SCOPE_DESCRIPTIONS = {
    "memory": "Read and write your memories",
    "entities": "Read and write the people, places and things your memories are about",
    "reasoning": "Run reasoning over your memories",
    "ontology": "Read and change how your memories are organized (the ontology)",
    "skills": "Use and manage skills",
    "workspace:admin": "Administer the workspace: add and remove members, create and revoke keys",
}

_PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>{title}</title>
<link rel="stylesheet" href="{stylesheet}">
</head>
<body>
<header class="topbar"><p class="brand">Memory service</p></header>
<main>
<div class="card">
{content}
</div>
</main>
</body>
</html>
"""


def stylesheet() -> str:
    return STYLESHEET.read_text(encoding="utf-8")


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
            f"default-src 'none'; style-src 'self'; form-action {form_action}; "
            "frame-ancestors 'none'; base-uri 'none'"
        ),
        "X-Frame-Options": "DENY",
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "no-referrer",
        "Cache-Control": "no-store",
    }


def stylesheet_headers() -> dict[str, str | list[str]]:
    return {
        "Content-Type": "text/css; charset=utf-8",
        "X-Content-Type-Options": "nosniff",
        "Cache-Control": "public, max-age=3600",
    }


def _page(title: str, content: str, issuer: str) -> str:
    return _PAGE.format(
        title=escape(title), content=content, stylesheet=escape(issuer + STYLESHEET_PATH)
    )


def error_page(title: str, message: str, issuer: str, code: str | None = None) -> str:
    """What happened, what to do, and the error code small (for support)."""
    code_line = ""
    if code:
        code_line = f'\n<p class="fineprint">Error code: <code>{escape(code)}</code></p>'
    content = (
        f"<h1>{escape(title)}</h1>\n<p>{escape(message)}</p>\n"
        "<h2>What you can do</h2>\n"
        "<p>Close this window, go back to your application and connect again. If this keeps"
        " happening, tell the application's developer what this page says.</p>"
        f"{code_line}"
    )
    return _page(title, content, issuer)


def _destination(redirect_uri: str, document_host: str | None) -> str:
    host = urlsplit(redirect_uri).hostname or redirect_origin(redirect_uri)
    warning = ""
    if is_loopback_http(redirect_uri):
        # Any program on the person's computer can listen on a loopback port: what names
        # itself here may be something else than the application the person started.
        warning = (
            '<p class="warning"><strong>This goes to a program on this computer, not to a'
            " website.</strong>"
            " Any program running here can receive this access. Allow only if you started"
            " this yourself, just now, from an application you trust.</p>"
        )
    elif document_host is not None and host != document_host:
        warning = (
            '<p class="warning"><strong>Another address than the application&#39;s.</strong>'
            f" The application is described at <strong>{escape(document_host)}</strong>, but"
            f" it sends you back to <strong>{escape(host)}</strong>. Allow only if you expect"
            " this.</p>"
        )
    return (
        '<div class="destination">\n<p class="muted">It sends you back to</p>\n'
        f'<p class="host">{escape(host)}</p>\n'
        f'<p class="muted"><code>{escape(redirect_origin(redirect_uri))}</code></p>\n'
        f"{warning}</div>"
    )


def _remembered(redirect_uri: str) -> str:
    """What "Allow" remembers, said where it skips this page next time (https only)."""
    if urlsplit(redirect_uri).scheme != "https":
        return "We remember your choice of workspace for this application."
    return (
        "We remember your answer: next time this application asks for the same, you go"
        " straight back to it. Revoking its access forgets it."
    )


def consent_page(
    *,
    issuer: str,
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
    selected: str | None = None,
    document_host: str | None = None,
) -> str:
    name = client_name or "An unnamed application"
    scope_items = "\n".join(
        f"<li>{escape(SCOPE_DESCRIPTIONS.get(scope, scope))}</li>" for scope in scopes
    )
    if workspaces:
        options = "\n".join(
            f'<option value="{escape(w.id)}"{" selected" if w.id == selected else ""}>'
            f"{escape(w.name)}</option>"
            for w in workspaces
        )
        picker = (
            '<div class="field">\n<label for="workspace_id">In the workspace</label>\n'
            f'<select id="workspace_id" name="workspace_id" required>\n{options}\n</select>\n'
            "</div>"
        )
        allow = (
            '<button type="submit" class="primary" name="decision" value="allow">Allow</button>\n'
        )
    else:
        # Access is granted in one workspace; with none there is nothing to allow yet.
        picker = (
            '<p class="warning"><strong>You are not a member of any workspace yet.</strong>'
            " An application is allowed in one workspace, so there is nothing to allow it"
            " into.</p>\n<p>Create a workspace in the"
            f' <a href="{escape(issuer + DASHBOARD_WORKSPACES)}" target="_blank"'
            ' rel="noopener">dashboard, under Workspaces</a>, or ask the owner of one to add'
            " you as a member; then reload this page and choose it. Deny tells the application"
            " that you did not allow it.</p>"
        )
        allow = ""
    content = f"""<h1>Allow <strong>{escape(name)}</strong> to use your memories?</h1>
<p class="claim">&ldquo;{escape(name)}&rdquo; is the name the application gives itself; we
cannot check it. Allow only applications you trust.</p>
{_destination(redirect_uri, document_host)}
<form method="post" action="{escape(action)}">
<input type="hidden" name="consent" value="{escape(consent)}">
<input type="hidden" name="csrf" value="{escape(csrf)}">
{picker}
<h2>It will be able to</h2>
<ul class="scopes">
{scope_items}
</ul>
<div class="actions">
{allow}<button type="submit" class="secondary" name="decision" value="deny">Deny</button>
</div>
</form>
<p class="fineprint">Signed in as <strong>{escape(user_label)}</strong>.
Application id <code>{escape(client_id)}</code>, for <code>{escape(resource)}</code>.
{_remembered(redirect_uri)}</p>"""
    return _page(f"Allow {name}?", content, issuer)
