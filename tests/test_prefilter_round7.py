"""What the seventh pass over the prefilters changed: more vendor token shapes (webhook signing secrets, Netlify,
Contentful, Facebook, Google refresh tokens, Terraform Cloud, Braintree), wallet keys named as keys, logins
written as "login for the portal: name / password"; and on the directive side orders to an AI that use no
override words. Each refused shape is checked next to a benign note of the same kind that must pass."""

from __future__ import annotations

import pytest
from prefilter_helpers import codes, rand

HEX = "0123456789abcdef"


@pytest.mark.parametrize(
    "text",
    [
        "webhook signing secret: whsec_" + rand(32),
        "Netlify deploy token nfp_" + rand(36),
        "Contentful management token CFPAT-" + rand(43),
        "page token EAAB" + rand(150),
        "refresh token: 1//0" + rand(100, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"),
        'token = "' + rand(14) + ".atlasv1." + rand(67) + '"',
        "braintree: access_token$production$" + rand(16, "abcdefghijklmnopqrstuvwxyz0123456789") + "$"
        + rand(32, HEX),
        "Hot wallet key for the payout bot: 0x" + rand(64, HEX),
        "PRIVATE_KEY=0x" + rand(64, HEX),
    ],
)
def test_vendor_and_wallet_keys_are_refused(text: str) -> None:
    assert any(c.startswith("secret:") for c in codes(text)), text


@pytest.mark.parametrize(
    "text",
    [
        "webhook secrets start with whsec_ followed by 32 characters (whsec_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx)",
        "The transfer went through: tx hash 0x" + rand(64, HEX) + " on block 19,204,551.",
        "storage slot 0x" + rand(64, HEX) + " holds the owner address",
        "Refresh tokens from the OAuth playground start with 1//0 and expire after seven days if unused.",
    ],
)
def test_token_shapes_described_or_hashes_pass(text: str) -> None:
    assert codes(text) == set(), text


def test_a_login_for_a_named_portal_is_a_password() -> None:
    value = rand(9) + "+" + rand(2, "0123456789")
    assert "secret:password" in codes(f"Ana's login for the payroll portal: ana.silva / {value} (while she is away)")
    assert codes("The login for the payroll portal: use your company account / SSO.") == set()
