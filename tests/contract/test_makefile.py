"""`make help` lists every target of the Makefile with one line each."""

from __future__ import annotations

import re
import subprocess

from support.tools import ROOT


def test_make_help_describes_every_phony_target_in_one_line() -> None:
    makefile = (ROOT / "Makefile").read_text()
    (phony,) = re.findall(r"^\.PHONY: (.+)$", makefile, re.M)
    out = subprocess.run(["make", "--no-print-directory", "help"], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    listed = {}
    for line in out.stdout.splitlines():
        match = re.fullmatch(r"  make (\S+) +(\S.*)", line)
        assert match, line
        listed[match[1]] = match[2]
    assert sorted(listed) == sorted(phony.split())
