"""Route blueprints; `app.py` registers them."""
