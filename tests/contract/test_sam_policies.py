"""The DynamoDB actions the tests assume of SAM's policy templates are the ones SAM grants."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from support.iam import SAM_DYNAMODB_POLICIES, SAM_OTHER_POLICIES

READ_TEMPLATES = """
import json, pathlib, samtranslator
path = pathlib.Path(samtranslator.__file__).parent / "policy_templates_data" / "policy_templates.json"
print(json.dumps(json.loads(path.read_text())["Templates"]))
"""


def test_the_policy_templates_grant_the_actions_the_iam_check_assumes(sam: str) -> None:
    python = Path(sam).parent / "python"  # the SAM CLI's own environment holds samtranslator
    printed = subprocess.run(
        [python, "-c", READ_TEMPLATES], capture_output=True, text=True, check=True
    ).stdout
    templates = json.loads(printed)
    for name, actions in {**SAM_DYNAMODB_POLICIES, **SAM_OTHER_POLICIES}.items():
        granted = {
            action
            for statement in templates[name]["Definition"]["Statement"]
            for action in statement["Action"]
        }
        assert granted == actions, name
