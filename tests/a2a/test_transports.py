"""One vocabulary for bindings and versions: what each ``binding=``/``version=`` accepts."""

import pytest

from hitl_nb.a2a import BINDINGS, VERSIONS, binding_choice, spoken_version, version_choice


def test_the_spoken_values_are_a2a_names_preferred_first():
    assert BINDINGS == ("JSONRPC", "HTTP+JSON", "GRPC")
    assert VERSIONS == ("1.0", "0.3")


@pytest.mark.parametrize(
    ("given", "checked"),
    [
        ("auto", "auto"),
        ("AUTO", "auto"),
        ("JSONRPC", "JSONRPC"),
        ("jsonrpc", "JSONRPC"),
        ("HTTP+JSON", "HTTP+JSON"),
        ("http+json", "HTTP+JSON"),
        ("GRPC", "GRPC"),
        ("grpc", "GRPC"),
    ],
)
def test_binding_choice(given, checked):
    assert binding_choice(given) == checked


@pytest.mark.parametrize("given", ["http-json", "REST", "gRPC-web", "", None, 1])
def test_binding_choice_refuses_other_spellings(given):
    with pytest.raises(
        ValueError, match="binding must be 'auto', 'JSONRPC', 'HTTP\\+JSON' or 'GRPC'"
    ):
        binding_choice(given)


@pytest.mark.parametrize(
    ("given", "checked"),
    [("auto", "auto"), ("1.0", "1.0"), ("0.3", "0.3"), ("0.3.0", "0.3"), (" 1.0.2 ", "1.0")],
)
def test_version_choice(given, checked):
    assert version_choice(given) == checked


@pytest.mark.parametrize("given", ["2.0", "1", "", "Auto", None])
def test_version_choice_refuses_others(given):
    with pytest.raises(ValueError, match="version must be 'auto', '1.0' or '0.3'"):
        version_choice(given)


def test_spoken_version():
    assert spoken_version("0.3.5") == "0.3"
    assert spoken_version("0.2") is None
