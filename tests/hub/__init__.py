"""Tests of hitl_nb.hub: the gateway as a JupyterHub service, against a real hub."""
