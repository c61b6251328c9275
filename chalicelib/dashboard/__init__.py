"""The dashboard: the web console people use to manage their keys and workspaces.

Its source is `dashboard/` at the repository root (TypeScript, built with esbuild); the build
writes the static files into `static/` here (never committed), which is how they reach the
Lambda package. `api/dashboard.py` serves them at `/dashboard/`.
"""
