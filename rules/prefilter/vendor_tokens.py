"""The secret rule type, and the rules for service tokens that carry a vendor's fixed prefix (npm, PyPI, Hugging
Face, SendGrid, Twilio, DigitalOcean, Shopify, Discord, Telegram, Mailgun, Databricks, Airtable, Tailscale,
PlanetScale and a long tail), plus
HTTP Basic credentials.

A prefix alone is never enough: the part after it must look random (mixed characters, entropy, no filler such
as `xxxx` or `<your-token>`), so documentation that shows a token's shape passes.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from agentmd.rules.prefilter.core import entropy, is_filler, is_placeholder


@dataclass(frozen=True)
class SecretRule:
    code: str
    gates: tuple[str, ...]  # one must occur in the lowercased text, or the pattern is not tried
    label: str
    regex: re.Pattern[str]
    check: Callable[[re.Match[str], str], bool] | None = None  # a further test of the match (and the whole text)
    anchored: bool = True  # a fixed prefix: also tried on the decoded and re-joined views of the text


def value_not_filler(group: str) -> Callable[[re.Match[str], str], bool]:
    return lambda m, _text: not is_filler(m.group(group))


def _random_tail(min_entropy: float = 3.2, *, mixed: bool = False) -> Callable[[re.Match[str], str], bool]:
    """The named group `val` looks random: no filler, enough entropy, letters and digits (both cases when
    `mixed`)."""

    def check(m: re.Match[str], _text: str) -> bool:
        value = m.group("val")
        if is_filler(value) or entropy(value) < min_entropy:
            return False
        if mixed:
            return any(c.isupper() for c in value) and any(c.islower() for c in value)
        return any(c.isdigit() for c in value) and any(c.isalpha() for c in value)

    return check


_BASIC_PLACEHOLDERS: Final = frozenset({"password", "pass", "secret", "user", "username", "pwd", "changeme"})
# HTTP Basic's documented example pair (RFC 7617 and RFC 2617 before it; MDN's and most tutorials' example)
_BASIC_DOCUMENTED: Final = frozenset({"aladdin:open sesame"})


def _basic_auth_real(m: re.Match[str], _text: str) -> bool:
    blob = m.group("val")
    try:
        raw = base64.b64decode(blob + "=" * (-len(blob) % 4), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return False
    user, sep, password = raw.partition(":")
    if not sep or not user or len(password) < 4 or not raw.isprintable() or raw.lower() in _BASIC_DOCUMENTED:
        return False
    return password.lower() not in _BASIC_PLACEHOLDERS and not is_placeholder(password)


def _curl_password_real(m: re.Match[str], _text: str) -> bool:
    password = m.group("val")
    return (
        password.lower() not in _BASIC_PLACEHOLDERS
        and not is_placeholder(password)
        and not password.startswith("$")
        and entropy(password) >= 2.5
    )


def _t(code: str, gates: tuple[str, ...], label: str, pattern: str, check: Callable[..., bool] | None) -> SecretRule:
    return SecretRule(code, gates, label, re.compile(pattern), check)


_END = r"(?![A-Za-z0-9_\-])"
_START = r"(?<![A-Za-z0-9_\-])"
_HEX32 = r"[0-9a-f]{32}"

VENDOR_RULES: Final[tuple[SecretRule, ...]] = (
    _t("secret:npm-token", ("npm_",), "npm access token", rf"{_START}npm_(?P<val>[A-Za-z0-9]{{36}}){_END}",
       _random_tail()),
    _t("secret:pypi-token", ("pypi-age",), "PyPI upload token", rf"{_START}pypi-AgE(?P<val>[A-Za-z0-9_\-]{{40,}})",
       value_not_filler("val")),
    _t("secret:huggingface-token", ("hf_",), "Hugging Face token",
       rf"{_START}hf_(?P<val>[A-Za-z0-9]{{30,40}}){_END}", _random_tail(3.5, mixed=True)),
    _t("secret:sendgrid-key", ("sg.",), "SendGrid API key",
       rf"{_START}SG\.(?P<val>[A-Za-z0-9_\-]{{16,32}}\.[A-Za-z0-9_\-]{{30,50}}){_END}", _random_tail()),
    _t("secret:twilio-key", ("sk", "ac"), "Twilio key or account id",
       rf"(?<![A-Za-z0-9_\-])(?:SK|AC)(?P<val>{_HEX32}){_END}", _random_tail(3.0)),
    _t("secret:digitalocean-token", ("_v1_",), "DigitalOcean token",
       rf"{_START}do[opr]_v1_(?P<val>[0-9a-f]{{64}}){_END}", _random_tail(3.0)),
    _t("secret:shopify-token", ("shpat_", "shpss_", "shpca_", "shppa_"), "Shopify access token",
       rf"{_START}shp(?:at|ss|ca|pa)_(?P<val>[0-9a-fA-F]{{32}}){_END}", _random_tail(3.0)),
    _t("secret:discord-token", ("/api/webhooks/",), "Discord webhook address",
       r"https?://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/\d{17,20}/(?P<val>[A-Za-z0-9_\-]{60,68})"
       rf"{_END}", _random_tail()),
    _t("secret:service-token", ("sl.",), "Dropbox access token",
       r"(?<![\w.])sl\.(?:u\.)?(?P<val>[A-Za-z0-9_\-]{100,})", _random_tail(4.0, mixed=True)),
    _t("secret:service-token", ("flyv1", "fo1_"), "Fly.io token",
       r"(?:FlyV1\s+fm[12]_|(?<![\w-])fo1_)(?P<val>[A-Za-z0-9_\-+/=]{40,})", _random_tail(4.0, mixed=True)),
    _t("secret:service-token", ("gr1348941",), "GitLab runner registration token",
       r"(?<![\w-])GR1348941(?P<val>[A-Za-z0-9_\-]{20})(?![\w-])", _random_tail(3.0)),
    _t("secret:service-token", ("xnd_",), "Xendit secret key",
       r"(?<![\w-])xnd_(?:production|development)_(?P<val>[A-Za-z0-9]{40,})", _random_tail(3.5)),
    _t("secret:discord-token", (".",), "Discord bot token",
       rf"{_START}(?P<val>[MNO][A-Za-z0-9]{{23,27}}\.[A-Za-z0-9_\-]{{6}}\.[A-Za-z0-9_\-]{{27,40}}){_END}",
       _random_tail(4.0, mixed=True)),
    _t("secret:telegram-token", (":aa",), "Telegram bot token",
       rf"(?:(?<=/bot)|(?<![A-Za-z0-9_:]))\d{{8,10}}:AA(?P<val>[A-Za-z0-9_\-]{{33}}){_END}", _random_tail()),
    _t("secret:mailgun-key", ("key-",), "Mailgun API key", rf"(?<![A-Za-z0-9_])key-(?P<val>{_HEX32}){_END}",
       _random_tail(3.0)),
    _t("secret:service-token", ("-us",), "Mailchimp API key", rf"{_START}(?P<val>{_HEX32})-us\d{{1,2}}{_END}",
       _random_tail(3.0)),
    _t("secret:databricks-token", ("dapi",), "Databricks token", rf"{_START}dapi(?P<val>{_HEX32})(?:-\d)?{_END}",
       _random_tail(3.0)),
    _t("secret:basic-auth", ("basic",), "HTTP Basic credentials",
       r"(?i:\bbasic)\s+(?P<val>[A-Za-z0-9+/]{8,}={0,2})(?![A-Za-z0-9+/=])", _basic_auth_real),
    _t("secret:basic-auth", ("-u", "--user"), "password passed to curl or wget",
       r"\b(?:curl|wget|http)\b[^\n]{0,120}?\s(?:-u|--user)[ =]['\"]?(?P<user>[^\s:'\"]{1,64}):"
       r"(?P<val>[^\s'\"]{6,128})",
       _curl_password_real),
    _t("secret:service-token", ("ltai", "akid"), "Alibaba or Tencent cloud access key id",
       rf"{_START}(?:LTAI|AKID)(?P<val>[A-Za-z0-9]{{12,32}}){_END}", _random_tail(3.3, mixed=True)),
    _t("secret:url-credentials", ("@",), "token in a URL's user part (a Sentry DSN or similar)",
       r"\b[a-z][a-z0-9+.\-]{1,20}://(?P<val>[0-9a-f]{32,64})(?::[0-9a-f]{32,64})?@[\w.\-]+", _random_tail(3.0)),
    _t("secret:azure-key", ("sig=",), "signed access URL (an Azure SAS signature or similar)",
       r"[?&](?:sig|signature|X-Amz-Signature|Signature)=(?P<val>[A-Za-z0-9%+/_\-]{30,}={0,2})",
       _random_tail(3.5)),
    _t("secret:basic-auth", ('"auth"',), "registry credentials (a Docker config auth entry)",
       r"\"auth\"\s*:\s*\"(?P<val>[A-Za-z0-9+/]{8,}={0,2})\"", _basic_auth_real),
    _t("secret:password", ("-p", "password", "pass="),
       "password passed on a command line",
       r"\b(?:sshpass\s+-p\s*|mysql(?:dump|admin)?\b[^\n]{0,80}?\s-p(?=[^\s-])|redis-cli\b[^\n]{0,80}?\s-a\s+|"
       r"--password[= ]|(?:PGPASSWORD|MYSQL_PWD|SSHPASS|REDISCLI_AUTH)=)['\"]?(?P<val>[^\s'\"]{6,128})",
       _curl_password_real),
    _t("secret:service-token", ("cookie:", "set-cookie:"), "session cookie",
       r"(?i:\b(?:set-)?cookie:)[^\n]{0,200}?\b(?i:[\w-]{0,30}(?:session|sess|sid|csrf|auth|token)[\w-]{0,30})=(?P<val>"
       r"[A-Za-z0-9%+/_.\-]{20,}=*)", _random_tail(3.3)),
    _t("secret:service-token", ("age-secret-key-",), "age secret key",
       r"AGE-SECRET-KEY-1(?P<val>[A-Z0-9]{58})", value_not_filler("val")),
    _t("secret:service-token", ("secret_", "ntn_"), "Notion integration token",
       rf"{_START}(?:secret_|ntn_)(?P<val>[A-Za-z0-9]{{40,50}}){_END}", _random_tail(3.8, mixed=True)),
    _t("secret:service-token",
       ("lin_api_", "hrku-", "dp.", "pul-", "glsa_", "glc_", "pmak-", "nrak-", "eaaa", "sq0", "atatt", "gsk_", "r8_",
        "pplx-", "sbp_", "sntrys_", "figd_", "xai-", "dckr_pat_", "ya29.", "sk.eyj", "fo1_", "tfp_", "hvs.", "hvb.",
        "gocspx-", "whsec_", "nfp_", "cfpat-", "eaab", "eaag", "1//0", "tskey-", "pscale_", "pat-"),
       "service access token",
       rf"{_START}(?:lin_api_|HRKU-|dp\.(?:pt|st|sa|ct|scim|audit)\.|pul-|glsa_|glc_|PMAK-|NRAK-|EAA[ABG]|"
       rf"sq0(?:atp|csp)-|ATATT3|gsk_|r8_|pplx-|sbp_|sntrys_|figd_|xai-|dckr_pat_|ya29\.|sk\.eyJ|fo1_|tfp_|hv[sb]\.|"
       rf"GOCSPX-|whsec_|nfp_|CFPAT-|(?<![\w/])1//0|tskey-(?:auth|api|client|scim|webhook)-|pscale_(?:pw|tkn|oauth)_|pat-(?:na|eu|ap)\d-)"
       rf"(?P<val>[A-Za-z0-9_\-=.]{{22,}})", _random_tail(3.3)),
    _t("secret:service-token", ("pat",), "Airtable personal access token",
       rf"{_START}pat(?P<val>[A-Za-z0-9]{{14}}\.[0-9a-f]{{64}}){_END}", _random_tail(3.3)),
    _t("secret:service-token", ("ssws",), "Okta API token", r"\bSSWS\s+(?P<val>[A-Za-z0-9_\-]{30,})",
       _random_tail(3.3)),
    _t("secret:service-token", (".atlasv1.",), "Terraform Cloud API token",
       rf"{_START}[A-Za-z0-9]{{14}}\.atlasv1\.(?P<val>[A-Za-z0-9_\-=]{{60,}})", _random_tail(3.3)),
    _t("secret:service-token", ("access_token$production$",), "Braintree access token",
       r"access_token\$production\$[0-9a-z]{16}\$(?P<val>[0-9a-f]{32})(?![0-9a-f])", _random_tail(3.0)),
    _t("secret:private-key", ('"kty"',), "JSON web key with its private part",
       r'"(?:d|p|q|dp|dq|qi|k)"\s*:\s*"(?P<val>[A-Za-z0-9_\-]{20,})"', _random_tail(3.3)),
    # 64 hex digits after 0x are a transaction or block hash as often as a key: only a key when the line calls it
    # one (a wallet's private key, a signer's key)
    _t("secret:private-key", ("0x",), "blockchain wallet private key",
       r"(?im)^[^\n]*?\b(?:private[\s_-]?key|priv[\s_-]?key|wallet[\s_-]key|signer[\s_-]key|signing[\s_-]key|"
       r"deployer[\s_-]key|secret[\s_-]key)\b[^\n]{0,40}?\b0x(?P<val>[0-9a-f]{64})(?![0-9a-f])", _random_tail(3.3)),
)  # fmt: skip
