"""The AWS operations the deployed code performs, recorded by the functional tests.

Every operation the app performs under the functional tests is recorded (botocore's
`before-parameter-build` event) and written to build/aws-operations.json when the session
ends, so that the infrastructure tests can hold each function's IAM policy against what its
code really calls. Only calls made by the deployed code (`app.py`, `chalicelib/`) count: a
test reading the table directly, or an operator tool, does not run with the service's roles.
Each operation is attributed to the Lambda function that would perform it: to `Authorizer`
while the authorizer's handler (`app.authorizer`, `chalicelib/decisions/authorizer.py`) is on
the call stack, to `ExpirySweep` while the sweep's (`app.expiry_sweep`,
`chalicelib/keys/expiry.py`) is, to `WebhookDelivery` while the work queue's consumer
(`app.webhook_delivery`) is, to `APIHandler` otherwise. The file reads

    {"format": "per-function", "complete": true,
     "functions": {"APIHandler": [["dynamodb", "GetItem"], ...], "Authorizer": [...]}}

with, per function, (service, operation) pairs plus (service, operation, member) for each
kind of transaction member, (service, operation, "index", name) for a query of an index
(instead of the pair: it acts on the index's ARN), and for the authorizer's UpdateItem
(service, operation, "attribute", name) and (service, operation, "leading-key", "CRED#"):
what the IAM condition on its one write names.

Each run replaces the file; nothing of an earlier run survives. A permission the code no
longer uses must show up as a grant nobody performs, which an operation kept from an older
run would hide. A run of only part of the functional tests (some files, `-k`, `-x`) writes
`"complete": false`, and the infrastructure tests refuse such a record rather than report
the permissions the skipped tests would have used.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from infra.template import PROJECT_DIR

OPERATIONS_FILE = PROJECT_DIR / "build" / "aws-operations.json"
FORMAT = "per-function"
APP_MODULE = str(PROJECT_DIR / "app.py")
AUTHORIZER_MODULE = str(PROJECT_DIR / "chalicelib" / "decisions" / "authorizer.py")
SWEEP_MODULE = str(PROJECT_DIR / "chalicelib" / "keys" / "expiry.py")
DEPLOYED_CODE = (str(PROJECT_DIR / "chalicelib") + "/", APP_MODULE)
# The Lambda functions, by their logical ids in the packaged template.
API_HANDLER = "APIHandler"
AUTHORIZER = "Authorizer"
EXPIRY_SWEEP = "ExpirySweep"
WEBHOOK_DELIVERY = "WebhookDelivery"

# (service, operation), plus (service, operation, member) for each kind of transaction
# member, e.g. ("dynamodb", "TransactWriteItems", "ConditionCheck"): IAM authorizes those.
Operations = set[tuple[str, ...]]


def calling_function() -> str | None:
    """The Lambda function whose code makes the current AWS call; None if no deployed code does.

    The authorizer's function runs only `app.authorizer` and what it calls; an operation
    with the authorizer's handler anywhere on the stack is the authorizer's, any other one
    the deployed code makes is the API handler's.
    """
    frame = sys._getframe(1)
    deployed = False
    while frame is not None:
        code = frame.f_code
        if code.co_filename == AUTHORIZER_MODULE or (
            code.co_filename == APP_MODULE and code.co_name == "authorizer"
        ):
            return AUTHORIZER
        if code.co_filename == SWEEP_MODULE or (
            code.co_filename == APP_MODULE and code.co_name == "expiry_sweep"
        ):
            return EXPIRY_SWEEP
        if code.co_filename == APP_MODULE and code.co_name == "webhook_delivery":
            return WEBHOOK_DELIVERY
        deployed = deployed or code.co_filename.startswith(DEPLOYED_CODE)
        frame = frame.f_back  # type: ignore[assignment]
    return API_HANDLER if deployed else None


@dataclass
class Recording:
    """function → the operations its code performed, and whether every test ran."""

    functions: dict[str, Operations] = field(default_factory=dict)
    complete: bool = True

    def watch(self, client: Any) -> None:
        """Record each operation the deployed code sends through this boto3 client."""
        service = client.meta.service_model.signing_name

        def before_parameter_build(params: dict[str, Any], model: Any, **_: Any) -> None:
            function = calling_function()
            if function is None:
                return
            recorded = self.functions.setdefault(function, set())
            if "IndexName" in params:
                recorded.add((service, model.name, "index", params["IndexName"]))
            else:
                recorded.add((service, model.name))
            for member in params.get("TransactItems", []):
                recorded.update((service, model.name, kind) for kind in member)
            if function != AUTHORIZER:
                return
            # The authorizer's writes, direct or in a transaction (IAM judges each member as
            # its item action): the attributes they name and their partitions' prefixes.
            writes = [(model.name, params)] if model.name in ("UpdateItem", "PutItem") else []
            for member in params.get("TransactItems", []):
                for kind, action in (("Update", "UpdateItem"), ("Put", "PutItem")):
                    if kind in member:
                        writes.append((action, member[kind]))
            for action, write in writes:
                key = write.get("Key") or write["Item"]
                names = [*key, *write.get("ExpressionAttributeNames", {}).values()]
                recorded.update((service, action, "attribute", name) for name in names)
                prefix = key["pk"]["S"].split("#", 1)[0] + "#"
                recorded.add((service, action, "leading-key", prefix))

        client.meta.events.register("before-parameter-build", before_parameter_build)

    def write(self, path: Path) -> None:
        """Replaces whatever an earlier run wrote."""
        path.parent.mkdir(parents=True, exist_ok=True)
        functions = {name: sorted(ops) for name, ops in sorted(self.functions.items())}
        document = {"format": FORMAT, "complete": self.complete, "functions": functions}
        path.write_text(json.dumps(document, indent=1) + "\n")


def read(path: Path) -> Recording:
    """What the last functional run recorded; ValueError if the file says nothing usable."""
    data = json.loads(path.read_text())
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ValueError(f"{path} does not say which function performed each operation")
    return Recording(
        functions={
            function: {tuple(entry) for entry in entries}
            for function, entries in data["functions"].items()
        },
        complete=data.get("complete") is True,
    )
