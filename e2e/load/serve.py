"""Starts `clarify serve` on a SQLite file in `directory`, on a free port,
for the load scripts; stops it when the block ends."""

import contextlib
import os
import subprocess
from pathlib import Path


@contextlib.contextmanager
def serve(binary, directory, extra=(), database=None):
    """Yields (the server's process, its base URL); `extra` are more flags;
    a SQLite file in `directory` unless `database` names another."""
    database = database or f"sqlite://{Path(directory) / 'clarify.db'}"
    server = subprocess.Popen(
        [binary, "serve", "--listen", "127.0.0.1:0", "--database-url", database, *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "RUST_LOG": "warn"},
        text=True,
    )
    try:
        line = server.stdout.readline().strip()
        assert line.startswith("listening on "), line
        yield server, line.removeprefix("listening on ").split()[0]
    finally:
        server.terminate()
        server.wait(timeout=10)
