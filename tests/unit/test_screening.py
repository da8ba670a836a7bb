"""Secret screening of tool outputs (forge_core/guardrails/screening.py, detect-secrets)."""

from __future__ import annotations

import pytest

from forge_core.guardrails.screening import find_secrets, screen

JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0"
    ".dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
)


@pytest.mark.parametrize(
    ("text", "secret", "kind"),
    [
        ('{"user": "bob", "password": "hunter2xyz!"}', "hunter2xyz!", "Secret Keyword"),
        ("login failed: password=hunter2", "hunter2", "Secret Keyword"),
        ("key AKIAIOSFODNN7EXAMPLE here", "AKIAIOSFODNN7EXAMPLE", "AWS Access Key"),
        (
            "token ghp_abcdefghijklmnopqrstuvwxyz0123456789 end",
            "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
            "GitHub Token",
        ),
        (f"session {JWT} ok", JWT, "JSON Web Token"),
    ],
)
def test_each_secret_is_redacted_whole_and_named(text: str, secret: str, kind: str) -> None:
    screening = screen(text, "redact")
    assert screening is not None
    assert screening.secret_types == (kind,)
    assert secret not in screening.content
    # Nothing of a token survives: no tail of a lazily matched JWT, no body
    # of a GitHub token whose detector reports only its prefix.
    assert secret[-8:] not in screening.content
    assert f"[REDACTED: {kind}]" in screening.content
    assert screening.content.split("[REDACTED")[0] == text.split(secret)[0]


def test_a_private_key_block_is_redacted_to_its_end_line() -> None:
    text = (
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEkeymaterial\nmore\n-----END RSA PRIVATE KEY-----\nok"
    )
    screening = screen(text, "redact")
    assert screening is not None
    assert "keymaterial" not in screening.content
    assert screening.content.endswith("\nok")


def test_ids_hashes_and_addresses_are_not_secrets() -> None:
    text = (
        '{"order": "A-19", "id": "a3f9c2e7b1d04f5a9c8e", "sha": '
        '"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", '
        '"ip": "8.8.8.8", "email": "w@example.com", "token_count": 42}'
    )
    assert find_secrets(text) == []
    assert screen(text, "redact") is None


def test_block_withholds_the_output_and_names_only_the_types() -> None:
    screening = screen("db: postgres password=s3cr3t-pw", "block")
    assert screening is not None
    assert screening.action == "block"
    assert "s3cr3t-pw" not in screening.content
    assert "withheld" in screening.content and "Secret Keyword" in screening.content


def test_allow_scans_nothing() -> None:
    assert screen("password=hunter2", "allow") is None


def test_secrets_on_several_lines_are_all_found_at_their_offsets() -> None:
    text = "first line\npassword=one-secret\nthird AKIAIOSFODNN7EXAMPLE\n"
    findings = find_secrets(text)
    assert [text[f.start : f.end] for f in findings] == ["one-secret", "AKIAIOSFODNN7EXAMPLE"]
