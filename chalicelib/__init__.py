"""The memory service's authentication service: everything the Lambda runs besides wiring."""
