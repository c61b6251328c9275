"""The memory service's authentication service: everything the Lambda functions run besides
the wiring in `app.py`.

docs/architecture.md holds the code map and the layers (which `make lint` checks). Package
`__init__` files hold docstrings only: a re-export would load the routes and Powertools onto
the authorizer's cold start.
"""
