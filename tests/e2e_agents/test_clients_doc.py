"""docs/providers.md's "Clients" table names the agents this suite runs, at the versions
package-lock.json pins and the installed binaries report."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from conftest import HERE, package_versions

DOC = HERE.parent.parent / "docs" / "providers.md"
# Table row -> (npm package, binary).
CLIENTS = {
    "Claude Code": ("@anthropic-ai/claude-code", "claude"),
    "Codex": ("@openai/codex", "codex"),
    "Gemini CLI": ("@google/gemini-cli", "gemini"),
}


def clients_table() -> dict[str, dict[str, str]]:
    text = DOC.read_text()
    section = re.search(r"^## Clients\n(.*?)(?=^## |\Z)", text, re.S | re.M)
    assert section, f"{DOC} has no '## Clients' section"
    rows = [line for line in section.group(1).splitlines() if line.startswith("|")]
    header = [c.strip().lower() for c in rows[0].strip("|").split("|")]
    assert header[:4] == ["client", "version tested", "protocol", "channel kinds"], header
    table = {}
    for line in rows[2:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        table[cells[0]] = dict(zip(header, cells))
    return table


def test_clients_table_matches_the_lock_and_the_binaries(tmp_path: Path) -> None:
    table = clients_table()
    assert set(table) == set(CLIENTS), f"the Clients table lists {sorted(table)}"
    locked = package_versions()
    for client, (package, binary) in CLIENTS.items():
        version = table[client]["version tested"].strip("`")
        assert version == locked[package], f"{client}: docs say {version}, package-lock.json {locked[package]}"
        out = subprocess.run([str(HERE / "node_modules" / ".bin" / binary), "--version"], env={"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path)}, capture_output=True, text=True, timeout=60)
        assert version in out.stdout, f"{binary} --version printed {out.stdout!r} {out.stderr!r}"
        for kind in ("Anthropic", "OpenAI", "Gemini"):
            assert kind in table[client]["channel kinds"], f"{client}: the suite runs it through {kind} channels"
