"""Addresses from the administrator's table and template (the hub's auth state:
test_hub_users.py, on a real hub)."""

from __future__ import annotations

import asyncio

import pytest

from hitl_nb.errors import NotifyRefused
from hitl_nb.notify import AddressBook


def address(book: AddressBook, name: str) -> str | None:
    return asyncio.run(book.address(name))


def test_the_table_first_then_the_template():
    book = AddressBook(table={"bob": "robert@example.org"}, template="{name}@example.org")
    assert address(book, "bob") == "robert@example.org"
    assert address(book, "carol") == "carol@example.org"
    assert address(AddressBook(table={"bob": "robert@example.org"}), "carol") is None
    assert address(AddressBook(), "bob") is None


def test_a_template_of_the_whole_address_for_hubs_whose_names_are_addresses():
    book = AddressBook(template="{name}")
    assert address(book, "carol@example.org") == "carol@example.org"
    assert address(book, "carol") is None


@pytest.mark.parametrize(
    "name",
    [
        "bob smith",
        "bob@evil.example",  # a second @
        "bob\r\nBcc: victim@example.org",
        "bob>",
        "",
        ".bob",
        "bøb",
    ],
)
def test_a_name_that_makes_no_plain_address_makes_none(name):
    assert address(AddressBook(template="{name}@example.org"), name) is None


@pytest.mark.parametrize(
    "template",
    ["example.org", "{name}@{domain}", "{name}{name}@example.org", "{name}@", "{0}@example.org"],
)
def test_templates_that_cannot_work_are_refused(template):
    with pytest.raises(NotifyRefused):
        AddressBook(template=template)


def test_a_table_of_addresses_only():
    with pytest.raises(NotifyRefused):
        AddressBook(table={"bob": "Bob <bob@example.org>"})
