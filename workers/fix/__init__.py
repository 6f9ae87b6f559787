"""Fixing issues: localise, propose patches, run the tests in the sandbox, learn."""
