"""The packaged templates of `make package` (build/package/<stage>/sam.json), read for tests.

`make test-infra` packages every stage first; a stage that was not packaged fails its tests
with the command that builds it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest

from infra.template import STAGES, Stack, stage_environment
from tools.package import package_dir


@dataclass
class Packaged:
    stage: str
    template: dict[str, Any]
    stack: Stack  # the template evaluated with the parameter values it was packaged for

    def resources(self, kind: str) -> dict[str, dict[str, Any]]:
        return self.stack.resources(kind)

    def resource(self, name: str) -> dict[str, Any]:
        return self.stack.resources()[name]

    def functions(self) -> dict[str, dict[str, Any]]:
        return self.resources("AWS::Serverless::Function")

    def role_of(self, function: str) -> str:
        """The logical id of the IAM role a function runs as."""
        role = self.functions()[function]["Properties"]["Role"]
        assert isinstance(role, dict) and list(role) == ["Fn::GetAtt"], (function, role)
        name, attribute = role["Fn::GetAtt"]
        assert attribute == "Arn" and name in self.resources("AWS::IAM::Role"), (function, role)
        return str(name)

    def policies_of(self, role: str) -> dict[str, dict[str, Any]]:
        """The IAM policies attached to a role, by logical id."""
        return {
            name: policy
            for name, policy in self.resources("AWS::IAM::Policy").items()
            if {"Ref": role} in policy["Properties"]["Roles"]
        }

    def environment(self) -> dict[str, str]:
        """The environment every function gets (they share one)."""
        found = [f["Properties"]["Environment"]["Variables"] for f in self.functions().values()]
        assert all(env == found[0] for env in found)
        return dict(found[0])

    def key_for_alias(self, alias_name: str) -> str:
        """The logical id of the KMS key an alias of this template names."""
        for alias in self.resources("AWS::KMS::Alias").values():
            if alias["Properties"]["AliasName"] == alias_name:
                return str(alias["Properties"]["TargetKeyId"]["Ref"])
        raise AssertionError(f"no alias {alias_name} in the {self.stage} template")

    def bus_named(self, bus_name: str) -> str:
        for name, bus in self.resources("AWS::Events::EventBus").items():
            if bus["Properties"]["Name"] == bus_name:
                return name
        raise AssertionError(f"no event bus {bus_name} in the {self.stage} template")

    def queue_named(self, queue_name: str) -> str:
        for name, queue in self.resources("AWS::SQS::Queue").items():
            if queue["Properties"]["QueueName"] == queue_name:
                return name
        raise AssertionError(f"no queue {queue_name} in the {self.stage} template")

    def table_named(self, table_name: str) -> str:
        for name, table in self.resources("AWS::DynamoDB::Table").items():
            if table["Properties"]["TableName"] == table_name:
                return name
        raise AssertionError(f"no table {table_name} in the {self.stage} template")


def load(stage: str) -> Packaged:
    path = package_dir(stage) / "sam.json"
    if not path.is_file():
        pytest.fail(f"{path} is missing: run `make package STAGE={stage}` (or make test-infra)")
    template = json.loads(path.read_text())
    return Packaged(stage, template, Stack(template, {}))


@pytest.fixture(scope="session", params=STAGES)
def packaged(request: pytest.FixtureRequest) -> Packaged:
    return load(request.param)


@pytest.fixture
def config_env(packaged: Packaged) -> dict[str, str]:
    """The stage's environment as .chalice/config.json gives it."""
    return stage_environment(packaged.stage)
