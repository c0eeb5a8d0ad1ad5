"""Tests of hitl_nb.gateway."""
