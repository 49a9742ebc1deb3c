"""The AWS plumbing: Lambda events, boto3 clients made on first use, DynamoDB tables and paging, HTTP over
botocore's urllib3, secrets from SSM. Empty, so that importing one module loads none of its siblings."""
