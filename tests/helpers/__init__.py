"""Test-only helpers: kernels, tiny hostile servers, an a2a-sdk agent with the extension."""
