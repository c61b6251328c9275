"""The local stack: moto as DynamoDB and KMS, resources from infra/, chalice local."""
