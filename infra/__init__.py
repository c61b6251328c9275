"""The infrastructure of every stage: `resources.json` (the CloudFormation template the cloud
deployment, the local stack and the tests all build from) and `template.py`, which reads it
for one stage. Never deployed to Lambda."""
