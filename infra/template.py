"""The infrastructure template (`infra/resources.json`) read for one stage.

One template serves every stage. What differs per stage comes from `.chalice/config.json`,
the same file that gives the Lambda functions their environment (`stage_environment`): the
stage name, and which token-signing key slots the stage's `TOKEN_SIGNING_KEY_ID` and
`TOKEN_PREVIOUS_SIGNING_KEY_ID` name. From those, `parameters` derives the template's
parameter values, so that the packaged template, the deployed stack and the app's
configuration cannot disagree.

`Stack` evaluates the template the way CloudFormation would for those parameters (the
intrinsic functions this template uses, and its conditions), for packaging (`tools/`), for
the local stack (`local/`, which creates the tables and keys with API calls from it) and for
the tests. References to resources' physical ids stay symbolic: `{"Ref": name}` and
`{"Fn::GetAtt": [name, attr]}`. Any other intrinsic function is refused: passed through, it
would reach the local stack or a test as if it were a value.

Both `local/` and `tools/` import this module and it imports neither, so the project
directory is defined here once.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

# The repository's root: .chalice/config.json, infra/, app.py and chalicelib/ live here.
PROJECT_DIR = Path(__file__).resolve().parent.parent
CHALICE_CONFIG = PROJECT_DIR / ".chalice" / "config.json"
TEMPLATE = PROJECT_DIR / "infra" / "resources.json"
STAGES = ("dev", "staging", "prod")

# The two token-signing key slots: a rotation creates a fresh key in the free slot,
# publishes it, then moves signing to it (README, "Rotating the signing key"). Each slot's
# alias always names its own key, so no process ever holds a stale alias-to-key mapping.
SIGNING_KEY_SLOTS = {"a": "TokenSigningKeyA", "b": "TokenSigningKeyB"}
NO_PREVIOUS_SLOT = "none"


def stage_environment(stage: str) -> dict[str, str]:
    """The stage's environment variables from .chalice/config.json (global, then stage)."""
    config = json.loads(CHALICE_CONFIG.read_text())
    env = dict(config.get("environment_variables", {}))
    env.update(config["stages"][stage].get("environment_variables", {}))
    return env


class TemplateError(Exception):
    """The template, or a stage's configuration, is inconsistent."""


def load_template(path: Path = TEMPLATE) -> dict[str, Any]:
    template: dict[str, Any] = json.loads(path.read_text())
    return template


class Stack:
    """The template as CloudFormation would see it with these parameter values."""

    PSEUDO = ("AWS::AccountId", "AWS::Partition", "AWS::Region", "AWS::StackName", "AWS::URLSuffix")

    def __init__(self, template: Mapping[str, Any], parameters: Mapping[str, str]):
        self.template = template
        self.parameters = dict(parameters)
        for name, spec in template.get("Parameters", {}).items():
            if name not in self.parameters and "Default" in spec:
                self.parameters[name] = str(spec["Default"])

    # -- conditions -----------------------------------------------------------------------

    def condition(self, name: str) -> bool:
        return bool(self.value(self.template["Conditions"][name]))

    def exists(self, resource: str) -> bool:
        condition = self.template["Resources"][resource].get("Condition")
        return condition is None or self.condition(condition)

    # -- values ---------------------------------------------------------------------------

    def value(self, node: Any) -> Any:
        """`node` with every intrinsic function this template uses evaluated.

        An `Fn::` function this reader does not know raises `TemplateError`.
        """
        if isinstance(node, list):
            values = [self.value(item) for item in node]
            return [v for v in values if v != {"Ref": "AWS::NoValue"}]
        if not isinstance(node, dict):
            return node
        if len(node) == 1:
            (function, argument), = node.items()
            if function == "Ref":
                return self._ref(argument)
            if function == "Condition":
                return self.condition(argument)
            if function == "Fn::Sub":
                return self._sub(argument)
            if function == "Fn::If":
                name, if_true, if_false = argument
                return self.value(if_true if self.condition(name) else if_false)
            if function == "Fn::Equals":
                left, right = (self.value(a) for a in argument)
                return left == right
            if function == "Fn::Not":
                return not self.value(argument[0])
            if function == "Fn::Or":
                return any(self.value(a) for a in argument)
            if function == "Fn::And":
                return all(self.value(a) for a in argument)
            if function == "Fn::FindInMap":
                mapping, top, second = (self.value(a) for a in argument)
                return self.template["Mappings"][mapping][top][second]
            if function == "Fn::GetAtt":
                return {"Fn::GetAtt": list(argument)}
            if function.startswith("Fn::"):
                # Passed through, it would look like a property value to whoever reads it.
                raise TemplateError(f"{function} is not an intrinsic function this reader knows")
        evaluated = {key: self.value(item) for key, item in node.items()}
        return {k: v for k, v in evaluated.items() if v != {"Ref": "AWS::NoValue"}}

    def _ref(self, name: str) -> Any:
        if name in self.parameters:
            return self.parameters[name]
        if name == "AWS::NoValue" or name in self.PSEUDO:
            return {"Ref": name}
        if name in self.template.get("Resources", {}) or self._is_sam_reference(name):
            return {"Ref": name}
        raise TemplateError(f"Ref to unknown name {name!r}")

    # What the SAM transform generates for a function with AutoPublishAlias, and lets a
    # template name as `<function>.Alias` and `<function>.Version`. In infra/resources.json
    # the functions are fragments without a Type, which `chalice package` completes.
    SAM_FUNCTION = "AWS::Serverless::Function"
    SAM_FUNCTION_REFERENCES = ("Alias", "Version")

    def _is_sam_reference(self, name: str) -> bool:
        function, _, generated = name.partition(".")
        resource = self.template.get("Resources", {}).get(function, {})
        return (
            generated in self.SAM_FUNCTION_REFERENCES
            and resource.get("Type", self.SAM_FUNCTION) == self.SAM_FUNCTION
            and "AutoPublishAlias" in resource.get("Properties", {})
        )

    def _sub(self, argument: Any) -> str:
        text = argument if isinstance(argument, str) else argument[0]
        extra = {} if isinstance(argument, str) else argument[1]

        def replace(match: re.Match[str]) -> str:
            name = match.group(1)
            if name in extra:
                found = self.value(extra[name])
                return found if isinstance(found, str) else match.group(0)
            if name in self.parameters:
                return self.parameters[name]
            return match.group(0)  # pseudo parameters and resource attributes stay symbolic

        return re.sub(r"\$\{([^}!]+)\}", replace, text)

    # -- resources ------------------------------------------------------------------------

    def resources(self, kind: str | None = None) -> dict[str, dict[str, Any]]:
        """The resources this stack creates (their conditions hold), properties evaluated."""
        found = {}
        for name, resource in self.template["Resources"].items():
            if "Type" not in resource or not self.exists(name):
                continue
            if kind is not None and resource["Type"] != kind:
                continue
            found[name] = {**resource, "Properties": self.value(resource.get("Properties", {}))}
        return found

    def alias_of(self, key_resource: str) -> str | None:
        for alias in self.resources("AWS::KMS::Alias").values():
            if alias["Properties"]["TargetKeyId"] == {"Ref": key_resource}:
                return str(alias["Properties"]["AliasName"])
        return None


def signing_key_aliases(template: Mapping[str, Any], stage: str) -> dict[str, str]:
    """slot → the alias the stage gives that slot's key (whether or not it exists now)."""
    aliases = {}
    for slot, key in SIGNING_KEY_SLOTS.items():
        for alias in template["Resources"].values():
            if alias.get("Type") == "AWS::KMS::Alias" and alias["Properties"]["TargetKeyId"] == {
                "Ref": key
            }:
                aliases[slot] = Stack(template, {"Stage": stage}).value(
                    alias["Properties"]["AliasName"]
                )
    if set(aliases) != set(SIGNING_KEY_SLOTS):
        raise TemplateError("every signing key slot needs exactly one alias")
    return aliases


_QUOTABLE_ORIGIN = re.compile(r"https?://[^\s'\"\\]+")

# Where API Gateway's own answers take Access-Control-Allow-Origin from when the stage allows
# several origins: the request's (a mapping expression, unquoted), since it cannot pick one.
REQUEST_ORIGIN = "method.request.header.origin"


def parameters(stage: str, template: Mapping[str, Any] | None = None) -> dict[str, str]:
    """The template's parameter values for a stage, from that stage's configuration."""
    template = template if template is not None else load_template()
    env = stage_environment(stage)
    slot_of = {alias: slot for slot, alias in signing_key_aliases(template, stage).items()}
    current = env.get("TOKEN_SIGNING_KEY_ID", "")
    if current not in slot_of:
        raise TemplateError(
            f"stage {stage}: TOKEN_SIGNING_KEY_ID {current!r} is none of the signing key "
            f"slot aliases {sorted(slot_of)}"
        )
    previous = env.get("TOKEN_PREVIOUS_SIGNING_KEY_ID", "").strip()
    if previous and (previous not in slot_of or slot_of[previous] == slot_of[current]):
        raise TemplateError(
            f"stage {stage}: TOKEN_PREVIOUS_SIGNING_KEY_ID {previous!r} must name the other "
            "signing key slot's alias"
        )
    # The service checks the list's origins when it starts (chalicelib/config.py); here one
    # is quoted into API Gateway's answers as it is, so it must at least be a plain token.
    try:
        origins = json.loads(env.get("ALLOWED_ORIGINS", "").strip() or "[]")
    except ValueError:
        origins = None
    if not isinstance(origins, list) or not all(
        isinstance(origin, str) and _QUOTABLE_ORIGIN.fullmatch(origin) for origin in origins
    ):
        raise TemplateError(f"stage {stage}: ALLOWED_ORIGINS must be a JSON list of origins")
    origins = list(dict.fromkeys(origins))
    return {
        "Stage": stage,
        "SigningKeySlot": slot_of[current],
        "PreviousSigningKeySlot": slot_of[previous] if previous else NO_PREVIOUS_SLOT,
        # API Gateway's own error answers cannot pick one origin from a list: with one
        # allowed origin they name it exactly (quoted: a static value), as the service does;
        # with several they echo the request's Origin (README, "Calling from a browser").
        "CrossOriginCalls": "on" if origins else "off",
        "GatewayAllowOrigin": (
            f"'{origins[0]}'" if len(origins) == 1 else REQUEST_ORIGIN if origins else ""
        ),
    }


def stack(stage: str, template: Mapping[str, Any] | None = None) -> Stack:
    template = template if template is not None else load_template()
    return Stack(template, parameters(stage, template))


def merge_template(stage: str, template: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The template `chalice package --merge-template` takes for a stage.

    Its parameters default to the stage's values and allow nothing else: the package of
    one stage cannot be deployed as another, and a later deployment cannot silently keep
    an older signing-key slot.
    """
    rendered = copy.deepcopy(dict(template if template is not None else load_template()))
    for name, value in parameters(stage, rendered).items():
        spec = rendered["Parameters"][name]
        spec["Default"] = value
        spec["AllowedValues"] = [value]
    return rendered
