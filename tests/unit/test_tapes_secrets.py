"""Secret scanning: every known pattern is found (and covered by the fast pre-check), prose is not."""

from __future__ import annotations

import pytest

from windtunnel._tapes.secrets import PATTERNS, SecretScanner, redact

SAMPLES = {
    "anthropic-key": "sk-ant-api03-" + "a1B2" * 10,
    "openai-key": "sk-proj-" + "Xy9" * 16,
    "aws-access-key": "AKIAIOSFODNN7EXAMPLE",
    "github-token": "ghp_" + "a" * 36,
    "github-pat": "github_pat_" + "B" * 30,
    "google-api-key": "AIza" + "c" * 35,
    "slack-token": "xoxb-1234567890-abcdef",
    "huggingface-token": "hf_" + "D" * 34,
    "groq-key": "gsk_" + "e" * 48,
    "bearer-token": "BEARER abcdefghijklmnopqrstuvwxyz012345",
    "private-key": "-----BEGIN RSA PRIVATE KEY-----",
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.abcdefghijkl",
}


def test_every_pattern_has_a_sample() -> None:
    assert set(SAMPLES) == {kind for kind, _ in PATTERNS}


@pytest.mark.parametrize(("kind", "secret"), sorted(SAMPLES.items()))
def test_each_pattern_is_found_in_text_and_redacted(kind: str, secret: str) -> None:
    scanner = SecretScanner()
    text = f'{{"content": "here it is: {secret} and more"}}'
    assert scanner.might_hold(text), "the fast pre-check must not skip a real secret"
    assert [found for found, _ in scanner.find(text)] == [kind]
    redacted = scanner.redact_text(text)
    assert secret not in redacted
    assert f"[REDACTED:{kind}]" in redacted
    assert scanner.scan("line one\n" + text)[0].line == 2


@pytest.mark.parametrize(
    "prose",
    [
        "Use a task-management-system-design-document-template for this.",
        "Shipping to Asia takes through the night; the right ghost.",
        "The bearer of bad news",
        "sk-short",
    ],
)
def test_prose_is_not_a_secret(prose: str) -> None:
    assert SecretScanner().find(prose) == []


def test_keys_in_use_are_found_from_eight_characters() -> None:
    scanner = SecretScanner(["plain-key-99", "short"])
    assert scanner.find("sent plain-key-99 and short") == [("key-in-use", "plain-key-99")]


def test_redact_returns_values_without_secrets_unchanged_and_redacts_keys_too() -> None:
    clean = {"messages": [{"role": "user", "content": "hello"}]}
    assert redact(clean) is clean
    secret = SAMPLES["openai-key"]
    assert redact({secret: [secret, 1, None]}) == {
        "[REDACTED:openai-key]": ["[REDACTED:openai-key]", 1, None]
    }


@pytest.mark.parametrize(
    "prose",
    [
        "the bearer responsibilities of the account owner",
        "The Bearer Responsibilities section",
        "bearer internationalization",
        "Bearer token_with_words_only_here",
    ],
)
def test_bearer_prose_is_not_a_token(prose: str) -> None:
    scanner = SecretScanner()
    assert scanner.find(prose) == []
    assert scanner.redact_text(prose) == prose


@pytest.mark.parametrize(
    "token",
    [
        "abcdefghijklmnop0123",  # a digit
        "eyJhbGciOiJIUzI1NiJ9.payload.signature",  # a JWT
        "aBcDeFgHiJkLmNoPqRsT",  # an inner capital
        "c2VjcmV0LXRva2VuLXZhbHVl==",  # base64 with padding
    ],
)
def test_bearer_tokens_are_found_in_any_case(token: str) -> None:
    for scheme in ("Bearer", "bearer", "BEARER"):
        text = f"Authorization: {scheme} {token}"
        assert [kind for kind, _ in SecretScanner().find(text)] == ["bearer-token"], text
        assert token not in SecretScanner().redact_text(text)
    assert SecretScanner().find("Bearer abc123") == []  # shorter than 16: not a token
