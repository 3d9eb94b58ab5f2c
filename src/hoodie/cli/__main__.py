"""``python -m hoodie.cli``: the ``hoodie`` command."""
from hoodie.cli.main import app

app(prog_name="hoodie")
