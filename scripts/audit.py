#!/usr/bin/env python3
"""Checks Cargo.lock against the RustSec advisory database, offline.

The machines that build Switchboard reach the package registries but not the advisory database's
Git host, so `cargo audit` cannot fetch it. This script reads a snapshot kept in the repository
(`deploy/rustsec-advisories.json`: every advisory's package, affected ranges and title, made from
a checkout of the advisory database with `--refresh`), and fails when a locked crate version is
affected by a vulnerability that `deploy/audit-ignore.txt` does not name with a reason.
Informational advisories (unmaintained, unsound) are listed as warnings.

    python3 scripts/audit.py                      # check Cargo.lock
    python3 scripts/audit.py --refresh DB_CHECKOUT  # rebuild the snapshot from advisory-db
"""

from __future__ import annotations

import json
import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SNAPSHOT = ROOT / "deploy" / "rustsec-advisories.json"
IGNORE = ROOT / "deploy" / "audit-ignore.txt"

Version = tuple[int, int, int, tuple]


def parse_version(text: str) -> Version:
    """`1.2.3-beta.1+build` -> (1, 2, 3, pre); a release sorts after its pre-releases."""
    core = text.strip().split("+", 1)[0]
    core, _, pre = core.partition("-")
    parts = [int(p) for p in core.split(".")] + [0, 0]
    pre_key = tuple((0, int(p)) if p.isdigit() else (1, p) for p in pre.split(".")) if pre else ()
    # A release (no pre-release) compares greater than any of its pre-releases.
    return (parts[0], parts[1], parts[2], (1,) if not pre else (0, pre_key))


def _partial(text: str) -> tuple[list[int], int]:
    nums = [int(p) for p in text.split("-", 1)[0].split(".") if p not in ("*", "x", "")]
    return nums + [0] * (3 - len(nums)), len(nums)


def matches(req: str, v: Version) -> bool:
    """Whether `v` satisfies a Cargo-style requirement: comparators joined by commas."""
    for comp in req.split(","):
        comp = comp.strip()
        if not comp or comp == "*":
            continue
        m = re.fullmatch(r"(>=|<=|>|<|=|\^|~)?\s*(.+)", comp)
        if not m:
            raise ValueError(f"unreadable requirement {comp!r}")
        op, rest = m.group(1) or "^", m.group(2)
        nums, given = _partial(rest)
        base = parse_version(".".join(map(str, nums)) + ("-" + rest.split("-", 1)[1] if "-" in rest else ""))
        if op == ">=" and not v >= base:
            return False
        if op == ">" and not v > base:
            return False
        if op == "<=" and not v <= base:
            return False
        if op == "<" and not v < base:
            return False
        if op == "=" and v[:3] != base[:3]:
            return False
        if op in ("^", "~"):
            if v < base:
                return False
            major, minor, _ = nums
            if op == "~" or given == 1:
                upper = (major + 1, 0, 0) if given == 1 else (major, minor + 1, 0)
            elif major > 0:
                upper = (major + 1, 0, 0)
            elif minor > 0 or given == 2:
                upper = (0, minor + 1, 0)
            else:
                upper = (0, 0, nums[2] + 1)
            if v[:3] >= upper:
                return False
    return True


def affected(adv: dict, v: Version) -> bool:
    if any(matches(r, v) for r in adv.get("unaffected", [])):
        return False
    if any(matches(r, v) for r in adv.get("patched", [])):
        return False
    return True


def refresh(checkout: Path) -> None:
    out = []
    for path in sorted((checkout / "crates").glob("*/RUSTSEC-*.md")):
        text = path.read_text(encoding="utf-8")
        m = re.search(r"```toml\n(.*?)\n```\s*\n#[ \t]*([^\n]+)", text, re.S)
        if not m:
            raise SystemExit(f"{path}: no TOML front matter")
        meta = tomllib.loads(m.group(1))
        a, versions = meta["advisory"], meta.get("versions", {})
        out.append(
            {
                "id": a["id"],
                "package": a["package"],
                "date": a.get("date", ""),
                "title": m.group(2).strip(),
                "informational": a.get("informational", ""),
                "withdrawn": a.get("withdrawn", ""),
                "patched": versions.get("patched", []),
                "unaffected": versions.get("unaffected", []),
            }
        )
    lines = ",\n".join(json.dumps(a, ensure_ascii=False, separators=(",", ":")) for a in out)
    SNAPSHOT.write_text('{"source":"RustSec advisory-db","advisories":[\n' + lines + "\n]}\n")
    print(f"audit: {len(out)} advisories written to {SNAPSHOT.relative_to(ROOT)}")


def self_test() -> None:
    """The version rules this check stands on (run before every check: a broken rule must fail)."""
    v = parse_version
    assert v("1.0.0") > v("1.0.0-rc.1") > v("1.0.0-beta") and v("0.10.0") > v("0.9.9")
    cases = [
        (">= 0.14.10", "0.14.9", False), (">= 0.14.10", "0.14.10", True), (">= 0.14.10", "1.0.0", True),
        ("^0.9.3", "0.9.5", True), ("^0.9.3", "0.10.0", False), ("^0.9.3", "0.9.2", False),
        ("^1.2", "1.9.0", True), ("^1.2", "2.0.0", False), ("^0.0.3", "0.0.4", False),
        ("~1.2.3", "1.2.9", True), ("~1.2.3", "1.3.0", False), ("< 0.2", "0.1.9", True),
        (">= 0.3.0, < 0.3.14", "0.3.13", True), (">= 0.3.0, < 0.3.14", "0.3.14", False),
        ("= 1.0.1", "1.0.1", True), ("= 1.0.1", "1.0.2", False), ("> 2.0.0-rc.1", "2.0.0", True),
    ]
    for req, ver, want in cases:
        assert matches(req, v(ver)) is want, (req, ver, want)
    adv = {"patched": [">= 1.4.2", ">= 1.3.7, < 1.4.0"], "unaffected": ["< 1.0.0"]}
    assert [affected(adv, v(x)) for x in ["0.9.0", "1.2.0", "1.3.8", "1.4.1", "1.4.2"]] == [
        False, True, False, True, False,
    ]


def main() -> int:
    self_test()
    if len(sys.argv) == 3 and sys.argv[1] == "--refresh":
        refresh(Path(sys.argv[2]))
        return 0
    if len(sys.argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    db = json.loads(SNAPSHOT.read_text())["advisories"]
    newest = max(a["date"] for a in db)
    by_pkg: dict[str, list[dict]] = {}
    for a in db:
        if not a["withdrawn"]:
            by_pkg.setdefault(a["package"], []).append(a)
    ignored = {}
    if IGNORE.exists():
        for line in IGNORE.read_text().splitlines():
            line = line.split("#", 1)[0].strip()
            if line:
                adv_id, _, reason = line.partition(" ")
                if not reason.strip():
                    raise SystemExit(f"audit: {IGNORE.name}: {adv_id} needs a reason")
                ignored[adv_id] = reason.strip()
    lock = tomllib.loads((ROOT / "Cargo.lock").read_text())
    packages = [p for p in lock["package"] if p.get("source", "").startswith("registry+")]
    failures, warnings, accepted = [], [], []
    for p in packages:
        v = parse_version(p["version"])
        for a in by_pkg.get(p["name"], []):
            if not affected(a, v):
                continue
            line = f"{a['id']} {p['name']} {p['version']}: {a['title']}"
            if a["informational"]:
                warnings.append(f"{line} ({a['informational']})")
            elif a["id"] in ignored:
                accepted.append(f"{line} (accepted: {ignored[a['id']]})")
            else:
                failures.append(line)
    print(f"audit: {len(packages)} locked crates against {len(db)} advisories (newest {newest})")
    for w in warnings:
        print(f"  warning: {w}")
    for a in accepted:
        print(f"  accepted: {a}")
    for f in failures:
        print(f"  VULNERABLE: {f}")
    if failures:
        print(f"audit: {len(failures)} vulnerable crate version(s); update them or name them in {IGNORE.name}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
