"""The fixed-format rules of `credentials`: cloud keys, tokens, private keys, JWTs and passwords in URLs, each
with the check that tells a real value from a stand-in (a reserved domain, a placeholder, a header that does not
decode), and the vendors' token formats after them.
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Final

from agentmd.rules.prefilter.core import entropy, is_filler, is_placeholder, random_looking
from agentmd.rules.prefilter.vendor_tokens import VENDOR_RULES, SecretRule, value_not_filler

_STAND_IN_SIGNATURE = re.compile(r"(?i)not[-_]?a[-_]?real|notreal|fake|dummy|example|placeholder|signature|xxxx")


# Claims naming a domain reserved for documentation and tests (RFC 2606, RFC 6761): example.com/.net/.org and
# the .example, .test, .invalid and .localhost names. No live issuer signs for them.
_RESERVED_DOMAIN = re.compile(
    r'"(?:iss|aud|sub|email|azp)"\s*:\s*"[^"]*?(?:\bexample\.(?:com|net|org)|\.(?:example|test|invalid|localhost)'
    r'|^(?:example|test|invalid|localhost))(?:[:/"]|$)'
)


def _b64_json(part: str) -> str:
    try:
        return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)).decode("utf-8", "replace")
    except (binascii.Error, ValueError):
        return ""


def _jwt_header_ok(m: re.Match[str], _text: str) -> bool:
    raw = _b64_json(m.group("head"))
    if _STAND_IN_SIGNATURE.search(m.group("sig")) or is_filler(m.group("sig")):
        return False  # a documented example: "eyJ...eyJ...not-a-real-signature", jwt.io's sample token
    if _RESERVED_DOMAIN.search(_b64_json(m.group("body"))):
        return False  # a test fixture: issued by or for a reserved example domain ("iss": "auth.example.test")
    return raw.lstrip().startswith("{") and ('"alg"' in raw or '"typ"' in raw)


def _private_key_has_body(m: re.Match[str], text: str) -> bool:
    """A PEM header followed by real key material, not `...` or `<your key>`."""
    body = text[m.end() : m.end() + 400].split("-----END", 1)[0]
    # a key kept in JSON or a string literal has its line breaks written as `\n`
    run = re.match(r"[A-Za-z0-9+/=]+", re.sub(r"\s+|\\[nr]", "", body))
    return run is not None and len(run.group()) >= 32 and not is_filler(run.group())


def _split_aws_key_real(m: re.Match[str], _text: str) -> bool:
    """Sixteen characters once the spaces are taken out, digits among them, not a stand-in."""
    joined = re.sub(r"[\s+]", "", m.group("val"))
    return len(joined) == 16 and sum(c.isdigit() for c in joined) >= 2 and not is_filler(joined)


def _aws_secret_near_aws(m: re.Match[str], text: str) -> bool:
    value = m.group("val")
    if re.fullmatch(r"[0-9a-fA-F]+", value):
        return False  # a hex digest (a git sha, a checksum)
    if not (any(c.isupper() for c in value) and any(c.islower() for c in value) and any(c.isdigit() for c in value)):
        return False
    window = text[max(0, m.start() - 120) : m.start()].lower()
    return "aws" in window and entropy(value) >= 4.0 and not is_placeholder(value)


def _openai_key_ok(m: re.Match[str], _text: str) -> bool:
    value = m.group("val")
    if m.group("kind"):  # a project or service-account key: the prefix is distinctive enough
        return not is_filler(value) and entropy(value) >= 3.5
    return random_looking(value, min_len=32, min_entropy=3.8)  # bare "sk-" is a weak prefix


_UUID_VALUE = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")


def _random_or_uuid(value: str, *, uuid: bool = True) -> bool:
    """Random enough to be a token (letters and digits mixed, high entropy; not all hex, which ids and digests
    are), or, where `uuid`, a UUID (Postmark's server tokens are UUIDs)."""
    if _UUID_VALUE.fullmatch(value):
        return uuid
    if re.fullmatch(r"[0-9a-fA-F]+", value):
        return False
    return random_looking(value, min_len=16, min_entropy=3.5) and not is_filler(value)


URL_PASSWORD_PLACEHOLDERS: Final = frozenset(
    {"password", "passwd", "pass", "pwd", "secret", "changeme", "admin", "root", "postgres", "user", "test",
     "example", "mysql", "guest", "default", "123456", "letmein"}
)  # fmt: skip


def _url_password_real(m: re.Match[str], _text: str) -> bool:
    user, password = m.group("user"), m.group("val")
    low = password.lower()
    if low in URL_PASSWORD_PLACEHOLDERS or low == user.lower() or is_placeholder(password):
        return False
    return not password.isdigit()  # "host:8080@" shapes are ports, not passwords


def _written_password(m: re.Match[str], _text: str) -> bool:
    """A password given as an element's text or a command's flag: long enough, not a stand-in, not a variable."""
    value = m.group("val") if m.group("val") is not None else m.group("val2")
    if "{" in value or "}" in value or re.fullmatch(r"[a-z]+(?:-[a-z]+)*", value):
        return False  # a reference or an encrypted value (`#{DbPassword}`, `{DESede}…`), or words (`required`)
    return (
        len(value) >= 6
        and value.lower() not in URL_PASSWORD_PLACEHOLDERS
        and not is_placeholder(value)
        and not value.isdigit()
        and any(c.isalpha() for c in value)
    )


SECRET_RULES: Final[tuple[SecretRule, ...]] = (
    SecretRule(
        "secret:password",
        ("password", "passwd", "secret", "apikey", "api_key", "token"),
        "password or key in a configuration element",
        # `<password>…</password>`, `<add key="ApiKey" value="…"/>`, `<property name="db.password" value="…"/>`
        # (XML configuration files)
        re.compile(
            r"(?i)<(?P<tag>(?:[\w.\-]+:)?(?:password|passwd|pwd|secret|client_?secret|api_?key|apikey|access_?token|token))"
            r"(?:\s[^<>]{0,200})?>\s*(?P<val>[^\s<]{6,200})\s*</(?P=tag)>|<(?:add|property|param|entry|setting)\s+(?:key|name)\s*=\s*[\"'][\w.\-]*(?:password|"
            r"passwd|secret|api_?key|apikey|token)[\"']\s+value\s*=\s*[\"'](?P<val2>[^\"'\s]{6,200})[\"']"
        ),
        lambda m, t: _written_password(m, t),
        anchored=False,
    ),
    SecretRule(
        "secret:password",
        ("-p", "--password", "-a ", "pass", "-w ", "/u", "%"),
        "password given to a command on its command line",
        # `docker login -u ci -p …`, `mysql -u root -p…` (no space: with one, -p asks), `redis-cli -a …`,
        # `sshpass -p …`, `sqlcmd -P …`, `keytool -storepass …`, `ldapsearch -w …`, `openssl … -passin pass:…`,
        # `net use \\host\share /user:name …`, `smbclient -U name%…`, `az login -u … -p …`,
        # a `--password …` of those tools (the flag within 160 characters of the command's name, so
        # that a line of the name repeated is read in linear time)
        re.compile(
            r"(?i)(?:\b(?:docker|podman|nerdctl|skopeo|buildah|oras|helm\s+registry|az)\s+login\b[^\n]{0,160}?\s(?:-p|--password)(?:=|\s+)|"
            r"\b(?:mysql|mysqldump|mariadb|mysqladmin)\b[^\n]{0,160}?\s(?:-p(?=\S)|--password=)|\bredis-cli\b[^\n]{0,160}?\s-a\s+|"
            r"\bsshpass\s+-p\s*|\b(?:mongo\w*|psql|smbclient|xfreerdp)\b[^\n]{0,160}?\s--?password=|"
            r"\b(?:sqlcmd|osql|bcp)\b[^\n]{0,160}?\s(?-i:-P)\s*|\bkeytool\b[^\n]{0,160}?\s-(?:store|key|src|dest)?pass(?:word)?\s+|"
            r"\bldap\w+\b[^\n]{0,160}?\s-w\s+|\bopenssl\b[^\n]{0,160}?\s-pass(?:in|out)?\s+pass:|"
            r"\bnet\s+use\b[^\n]{0,160}?\s/u(?:ser)?:\S+\s+|\b(?:smbclient|rpcclient|smbmap)\b[^\n]{0,160}?\s(?:-U\s*|--user=)[^\s%]+%)"
            r"[\"']?(?P<val>[^\s\"'|;&]{6,200})(?P<val2>)"
        ),
        _written_password,
        anchored=False,
    ),
    SecretRule(
        "secret:password",
        ("secret", "password", "passwd", "passphrase", "token", "key", "getconnection", "auth"),
        "password or key passed to a call in code",
        # `.apiSecret("…")`, `.password("…")` (builders), `DriverManager.getConnection(url, user, "…")`,
        # `auth=('user', '…')` (an HTTP client's basic auth), each a quoted literal
        re.compile(
            r"(?i)(?:\.(?:api_?secret|client_?secret|secret(?:_?key)?|password|passwd|pass_?phrase|"
            r"(?:auth|access|api|bearer|refresh)_?token|token|api_?key|private_?key)\s*\(\s*|"
            r"\bgetConnection\s*\(\s*[\"'][^\"'\n]*[\"']\s*,\s*[\"'][^\"'\n]*[\"']\s*,\s*|"
            r"\bauth\s*=\s*\(\s*[\"'][^\"'\n]{1,80}[\"']\s*,\s*)"
            r"[\"'](?P<val>[^\"'\s]{6,200})[\"'](?P<val2>)"
        ),
        _written_password,
        anchored=False,
    ),
    SecretRule(
        "secret:password",
        ("mc alias", "mc config"),
        "password given to a command on its command line",
        # MinIO's client: `mc alias set NAME URL ACCESS_KEY SECRET_KEY`
        re.compile(r"\bmc\s+(?:alias\s+set|config\s+host\s+add)\s+\S+\s+\S+\s+\S+\s+[\"']?(?P<val>[^\s\"']{6,200})(?P<val2>)"),
        _written_password,
        anchored=False,
    ),
    SecretRule(
        "secret:generic-assignment",
        ("client", "dropbox", "api", "sdk", "bot", ".run(", "session", "token", "key", "secret"),
        "a token handed to a client in code",
        # `new PostmarkClient("…")`, `dropbox.Dropbox("sl.…")`, Discord's `client.run("…")`: one string literal,
        # random or a UUID, as the only argument of a client's constructor or of a bot's run
        re.compile(
            r"(?i)(?:\b\w{0,40}?(?:client|dropbox|api|sdk|bot|session|token|key|secret)\w{0,40}(?!\w)|\bclient\.run|"
            r"\bbot\.run)"
            r"\s*\(\s*[\"'](?P<val>[A-Za-z0-9._\-+/=]{20,})[\"']\s*\)"
        ),
        lambda m, _t: _random_or_uuid(m.group("val")),
        anchored=False,
    ),
    SecretRule(
        "secret:generic-assignment",
        ("/key/", "/keys/", "/token/", "/secret/", "/apikey/", "/api_key/", "/api-key/", "/access_token/", "/api/"),
        "a key in a web address's path",
        # IFTTT's `…/with/key/<key>`, a Hue bridge's `/api/<username>/…`, and any path segment after one named key,
        # token or secret
        re.compile(
            r"(?i)/(?:key|keys|token|secret|apikey|api_key|api-key|access_token)/(?P<val>[A-Za-z0-9_\-]{16,})|"
            r"/api/(?P<val2>[A-Za-z0-9_\-]{32,})(?=/|\s|$)"
        ),
        lambda m, _t: _random_or_uuid(m.group("val") or m.group("val2"), uuid=False),
        anchored=False,
    ),
    SecretRule(
        "secret:recovery-codes",
        ("-",),
        "BitLocker recovery key",
        re.compile(r"(?<![\d-])\d{6}(?:-\d{6}){7}(?![\d-])"),
        lambda m, _t: len(set(m.group())) > 4,
    ),
    SecretRule(
        "secret:aws-access-key",
        ("akia", "asia", "agpa", "aida", "aroa", "aipa", "anpa", "anva", "a3t"),
        "AWS access key id",  # AWS's own documentation example key is refused too, on purpose
        re.compile(r"(?<![A-Z0-9])(?:AKIA|ASIA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|A3T[A-Z0-9])[A-Z0-9]{16}(?![A-Z0-9])"),
        lambda m, _t: not is_filler(m.group()[4:]),  # `AKIAXXXXXXXXXXXXXXXX` in an .env.example is a stand-in
    ),
    SecretRule(
        "secret:aws-access-key",
        ("akia", "asia"),
        "AWS access key id split into pieces",
        # the sixteen characters after the prefix cut by one or two spaces or plus signs ("AKIA1B2C3D4E 5F6G7H8I")
        re.compile(r"(?<![A-Z0-9])(?:AKIA|ASIA)(?P<val>[A-Z0-9]{4,12}(?:(?:[ \t]|[ \t]*\+[ \t]*)[A-Z0-9]{4,12}){1,2})"
                   r"(?![A-Z0-9])"),
        _split_aws_key_real,
    ),
    SecretRule(
        "secret:aws-secret-key",
        ("aws",),
        "AWS secret access key",
        re.compile(r"(?i)aws_?secret_?(?:access_?)?key[\"']?\s*[:=]\s*[\"']?"
                   r"(?P<val>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])"),
        value_not_filler("val"),
        anchored=False,
    ),
    SecretRule(
        "secret:aws-secret-key",
        ("aws",),
        "AWS secret access key",
        re.compile(r"(?<![A-Za-z0-9/+])(?P<val>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])"),
        _aws_secret_near_aws,
        anchored=False,
    ),
    SecretRule(
        "secret:gcp-service-account",
        ("service_account",),
        "Google Cloud service-account key file",
        re.compile(r"\"type\"\s*:\s*\"service_account\""),
        lambda _m, text: re.search(r"\"private_key(?:_id)?\"\s*:\s*\"[^\"]{8,}", text) is not None,
        anchored=False,
    ),
    SecretRule(
        "secret:gcp-api-key",
        ("aiza",),
        "Google API key",
        re.compile(r"(?<![\w-])AIza[0-9A-Za-z_\-]{35}(?![\w-])"),
    ),
    SecretRule(
        "secret:azure-key",
        ("accountkey", "sharedaccesskey"),
        "Azure storage or service-bus account key",
        re.compile(r"(?:AccountKey|SharedAccessKey)\s*=\s*(?P<val>[A-Za-z0-9+/]{30,}={0,2})"),
        value_not_filler("val"),
    ),
    SecretRule(
        "secret:azure-key",
        ("q~",),
        "Azure client secret",
        # 34 characters after "Q~" as issued; any length near it, in case a character was lost or added in a copy
        re.compile(r"(?<![A-Za-z0-9_~.\-])[A-Za-z0-9_\-.]{3}\dQ~[A-Za-z0-9_~.\-]{24,48}(?![A-Za-z0-9_~.\-])"),
        lambda m, _t: random_looking(m.group(), min_entropy=3.0),
    ),
    SecretRule(
        "secret:azure-key",
        ("azure",),
        "Azure client secret",
        re.compile(r"(?i)azure[\w.\-]{0,30}(?:secret|password|key)[\w.\-]{0,20}[\"']?\s*[:=]\s*[\"']?"
                   r"(?P<val>[^\s\"',;]{20,})"),
        lambda m, _t: random_looking(m.group("val")),
        anchored=False,
    ),
    SecretRule(
        "secret:github-token",
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
        "GitHub token",
        re.compile(r"(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})"),
        lambda m, _t: not is_filler(m.group()[4:]),
    ),
    SecretRule(
        "secret:github-token",
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
        "piece of a GitHub token",  # cut short, or split so that scanners miss it ("part1 = 'ghp_1gbey…'")
        re.compile(r"(?<![A-Za-z0-9_])gh[pousr]_(?P<val>[A-Za-z0-9]{16,35})(?![A-Za-z0-9_])"),
        lambda m, _t: random_looking(m.group("val"), min_len=16, min_entropy=3.3) and not is_filler(m.group("val")),
    ),
    SecretRule(
        "secret:digitalocean-token",
        ("dop_v1_", "doo_v1_", "dor_v1_"),
        "piece of a DigitalOcean token",  # split so that scanners miss it, each piece on a line of its own
        re.compile(r"(?<![A-Za-z0-9_])do[por]_v1_(?P<val>[a-f0-9]{16,63})(?![a-f0-9])"),
        lambda m, _t: random_looking(m.group("val"), min_len=16, min_entropy=3.0) and not is_filler(m.group("val")),
    ),
    SecretRule(
        "secret:private-key",
        ("0x",),
        "private key written as hexadecimal (a wallet's or a signing key)",
        re.compile(r"(?i)\b(?:private|wallet|signing|secret)\b[^\n]{0,60}?(?<![0-9a-z])0x(?P<val>[0-9a-f]{64})(?![0-9a-z])"),
        value_not_filler("val"),
        anchored=False,
    ),
    SecretRule(
        "secret:gitlab-token",
        ("glpat-", "gldt-", "glrt-", "glcbt-", "glptt-", "glft-", "glimt-", "glagent-", "gloas-", "glsoat-"),
        "GitLab token",
        re.compile(r"(?<![A-Za-z0-9_\-])gl(?:pat|dt|rt|cbt|ptt|ft|imt|agent|oas|soat)-[A-Za-z0-9_\-]{20,}"),
        lambda m, _t: not is_filler(m.group().split("-", 1)[1]),
    ),
    SecretRule(
        "secret:slack-token",
        ("xox", "xapp-"),
        "Slack token",
        re.compile(r"(?<![A-Za-z0-9])(?:xox[abposre]-\d{5,}-[A-Za-z0-9\-]{8,}|"
                   r"xapp-\d-[A-Z0-9]{6,}-\d{6,}-[a-f0-9]{16,})"),
    ),
    SecretRule(
        "secret:slack-webhook",
        ("webhook.office.com",),
        "Microsoft Teams incoming-webhook URL",
        re.compile(r"\.webhook\.office\.com/webhookb2/[\w-]+@[\w-]+/IncomingWebhook/(?P<val>[0-9a-f]{32})/"),
        value_not_filler("val"),
    ),
    SecretRule(
        "secret:slack-webhook",
        ("hooks.slack.com",),
        "Slack incoming-webhook URL",
        re.compile(r"hooks\.slack\.com/(?:services|workflows|triggers)/(?P<val>T[A-Za-z0-9_]{6,}/[A-Za-z0-9_/]{8,})"),
        value_not_filler("val"),
    ),
    SecretRule(
        "secret:stripe-key",
        ("sk_live_", "sk_test_", "rk_live_", "rk_test_"),
        "Stripe secret key",
        re.compile(r"(?<![A-Za-z0-9_])(?:sk|rk)_(?:live|test)_(?P<val>[A-Za-z0-9]{16,})"),
        value_not_filler("val"),
    ),
    SecretRule(
        "secret:anthropic-key",
        ("sk-ant-",),
        "Anthropic API key",
        re.compile(r"(?<![A-Za-z0-9_\-])sk-ant-(?:api|admin|sid)\d{2}-(?P<val>[A-Za-z0-9_\-]{32,})"),
        value_not_filler("val"),
    ),
    SecretRule(
        "secret:openai-key",
        ("sk-",),
        "OpenAI-style API key",
        re.compile(r"(?<![A-Za-z0-9_\-])sk-(?!ant-)(?P<kind>proj-|svcacct-|admin-|None-)?(?P<val>[A-Za-z0-9_\-]{32,})"),
        _openai_key_ok,
    ),
    SecretRule(
        "secret:private-key",
        ("private key",),
        "private key block",
        re.compile(r"-----BEGIN[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----"),
        _private_key_has_body,
    ),
    SecretRule(
        "secret:private-key",
        ("putty-user-key-file",),
        "PuTTY private key file",
        # `PuTTY-User-Key-File-3: ssh-ed25519` … `Private-Lines: 1` and the key's lines after it
        re.compile(r"PuTTY-User-Key-File-\d+:[^\n]*\n(?:[^\n]*\n){0,40}?Private-Lines:\s*\d+\s*\n(?P<val>[A-Za-z0-9+/=]{16,})"),
        value_not_filler("val"),
        anchored=False,
    ),
    SecretRule(
        "secret:jwt",
        ("eyj",),
        "JSON Web Token",
        re.compile(r"(?<![A-Za-z0-9_\-])(?P<head>eyJ[A-Za-z0-9_\-]{8,})\.(?P<body>ey[A-Za-z0-9_\-]{8,})\.(?P<sig>[A-Za-z0-9_\-]{16,})"),
        _jwt_header_ok,
    ),
    SecretRule(
        "secret:url-credentials",
        ("://",),
        "password inside a URL",
        re.compile(r"\b[a-z][a-z0-9+.\-]{1,20}://(?P<user>[^\s:/@\[\]]{0,64}):(?P<val>[^\s:/@\[\]]{6,128})@[\w.\-]+"),
        _url_password_real,
        anchored=False,
    ),
    *VENDOR_RULES,
)  # fmt: skip
