"""The run inspector: the journal's runs in a browser (app.py)."""
