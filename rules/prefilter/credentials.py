"""Credential-shaped values, reported as ``secret:*``: cloud keys, tokens, private keys, JWTs, passwords in URLs
and high-entropy values assigned to secret-named keys.

Read everywhere, code included, and again with line breaks joined and URL escapes decoded. A message names the
kind of secret and its line, never the value nor any part of it.
"""

from __future__ import annotations

import base64
import binascii
import bisect
import re
import unicodedata
import urllib.parse
from collections.abc import Callable, Iterator
from typing import Final

from agentmd.rules.prefilter.core import Finding, Lines, entropy, is_filler, is_placeholder, random_looking
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
    if _STAND_IN_SIGNATURE.search(m.group("sig")):
        return False  # a documented example: "eyJ...eyJ...not-a-real-signature"
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


_URL_PASSWORD_PLACEHOLDERS: Final = frozenset(
    {"password", "passwd", "pass", "pwd", "secret", "changeme", "admin", "root", "postgres", "user", "test",
     "example", "mysql", "guest", "default", "123456", "letmein"}
)  # fmt: skip


def _url_password_real(m: re.Match[str], _text: str) -> bool:
    user, password = m.group("user"), m.group("val")
    low = password.lower()
    if low in _URL_PASSWORD_PLACEHOLDERS or low == user.lower() or is_placeholder(password):
        return False
    return not password.isdigit()  # "host:8080@" shapes are ports, not passwords


_SECRET_RULES: Final[tuple[SecretRule, ...]] = (
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
        re.compile(r"(?<![A-Za-z0-9_~.\-])[A-Za-z0-9_\-.]{3}\dQ~[A-Za-z0-9_~.\-]{31,34}(?![A-Za-z0-9_~.\-])"),
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

# Generic assignments: find an assignment operator with a value after it, then read back the key name before it,
# split at "_", ".", "-" and camelCase humps (api_key, clientSecret, DB_PASS), and test both.
# A long quoted value is read whole, signs and brackets included (a framework's secret key).
_ASSIGN_OP = re.compile(
    r"(?::=|=>|=|:)(?=[ \t]{0,3}(?:[\"'`](?P<quoted>[^\s\"'`]{24,400})[\"'`]|"
    r"[\"'`]?(?P<val>[^\s\"'`,;<>(){}\[\]]{8,400})))"
)
_KEY_CHARS: Final = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
_CAMEL_HUMP = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_SECRET_KEY_PARTS: Final = frozenset(
    {"key", "secret", "token", "password", "passwd", "pwd", "pass", "passphrase", "credential", "credentials",
     "apikey", "secretkey", "accesskey", "privatekey", "accountkey", "authtoken", "accesstoken", "refreshtoken",
     "bearer", "clientsecret"}
)  # fmt: skip
_PASSWORD_PARTS: Final = frozenset({"password", "passwd", "pwd", "pass", "passphrase"})
_STRONG_PARTS: Final = _SECRET_KEY_PARTS - {"key"}
_NOT_SECRET_KEY_PARTS: Final = frozenset(
    {"public", "pub", "type", "url", "uri", "endpoint", "name", "path", "file", "dir", "len", "length", "size",
     "count", "id", "ttl", "expiry", "expires", "expiration", "prefix", "field", "header", "format", "kind",
     "limit", "limits", "max", "min", "env", "var", "ref", "hash", "salt", "algorithm", "alg", "policy",
     "provider", "store", "storage", "vault", "manager", "location", "usage", "tokens", "keys", "map", "binding",
     "bindings", "fingerprint", "board", "word", "required", "enabled", "mode", "http", "https"}
)  # fmt: skip
_UNBROKEN_RUN = re.compile(r"[A-Za-z0-9+/=]{16,}")
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_BEARER = re.compile(r"(?i)\bauthorization[\"']?\s*[:=]\s*[\"']?bearer\s+(?P<val>[A-Za-z0-9._~+/\-]{20,}=*)")


def _key_before(text: str, op: int) -> str:
    """The key name that ends just before the operator at `op` (quotes and spaces skipped), or ""."""
    i = op
    while i > 0 and op - i < 4 and text[i - 1] in " \t":
        i -= 1
    if i > 0 and text[i - 1] in "\"'":
        i -= 1
    end = i
    while i > 0 and end - i < 80 and text[i - 1] in _KEY_CHARS:
        i -= 1
    if i > 0 and text[i - 1].isalnum():
        return ""  # the name runs on further than 80 characters, or through a non-ASCII letter
    return text[i:end]


def _key_parts(key: str) -> list[str]:
    return [p for p in re.split(r"[_.\-]+", _CAMEL_HUMP.sub("_", key).lower()) if p]


def _secret_assignment(parts: list[str], value: str) -> bool:
    if not any(p in _SECRET_KEY_PARTS for p in parts) or any(p in _NOT_SECRET_KEY_PARTS for p in parts):
        return False
    if value.startswith(("/", "./", "../", "~/", "file:")) or "://" in value:
        return False  # a path or a URL (URL passwords have their own rule)
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+", value):
        return False  # an attribute access such as settings.api_key
    if re.fullmatch(r"[\d.:\-TZ+]+", value):
        return False  # numbers, versions, dates
    if parts[-1] in _PASSWORD_PARTS:
        return (
            len(value) >= 8
            and not is_placeholder(value)
            and value.lower() not in _URL_PASSWORD_PLACEHOLDERS
            and any(c.isalpha() for c in value)
            and any(not c.isalpha() for c in value)
            and entropy(value) >= 2.8
        )
    strong = any(p in _STRONG_PARTS for p in parts) or ("api" in parts and "key" in parts)
    if strong and (_dense(value) or _hex_secret(value)):
        return True  # a framework's secret key, or a hex token, under a name that says it is a secret
    if not random_looking(value):
        return False
    if _UNBROKEN_RUN.search(value):
        return True
    # Only short segments (a UUID, a snake_case name): a secret only under a key that clearly names one.
    return strong and _UUID.fullmatch(value) is not None


def _dense(value: str) -> bool:
    """At least 24 characters of three of lower case, upper case, digits and signs, with high entropy: no word,
    name or path reads so."""
    kinds = (
        any(c.islower() for c in value)
        + any(c.isupper() for c in value)
        + any(c.isdigit() for c in value)
        + any(not c.isalnum() for c in value)
    )
    low = value.lower()
    return len(value) >= 24 and kinds >= 3 and entropy(value) >= 4.2 and not any(w in low for w in _STAND_INS)


_STAND_INS: Final = ("xxx", "your", "example", "changeme", "placeholder", "redacted", "dummy", "sample", "replace",
                     "insert", "fake", "...", "<", ">", "${", "{{")  # fmt: skip
_HEX = re.compile(r"[0-9a-f]{32,128}|[0-9A-F]{32,128}")


def _hex_secret(value: str) -> bool:
    """32 or more hex digits, letters and digits mixed, not a run or a sequence (Twilio, Datadog, Mailchimp and
    many other services issue such tokens; their entropy is below what `random_looking` asks of mixed text)."""
    return (
        _HEX.fullmatch(value) is not None
        and any(c.isdigit() for c in value)
        and any(c.isalpha() for c in value)
        and entropy(value) >= 3.0
        and not is_placeholder(value)
    )


_MAX_SPLIT_LINES: Final = 8
_MAX_SPLIT_CHARS: Final = 1000
_MIN_WRAPPED: Final = 16  # no token the rules know is shorter once its pieces are joined


def _split_candidates(text: str) -> Iterator[tuple[int, str]]:
    """(1-based line, joined word) for every line break: the last word of a line glued to the first word of the
    next (and on through lines that hold a single word), so a token wrapped across lines is seen whole."""
    lines = text.split("\n")
    for i in range(len(lines) - 1):
        words = lines[i].split()
        if not words:
            continue
        joined = words[-1]
        for j in range(i + 1, min(len(lines), i + _MAX_SPLIT_LINES)):
            following = lines[j].split()
            if not following or len(joined) > _MAX_SPLIT_CHARS:
                break
            joined += following[0]
            if len(following) > 1:
                break
        if len(joined) > len(words[-1]) and len(joined) >= _MIN_WRAPPED:
            yield i + 1, joined


def secret_findings(text: str, field: str) -> Iterator[Finding]:
    seen: set[tuple[str, int]] = set()
    lines = Lines(text)

    def emit(code: str, label: str, line: int, how: str = "") -> Iterator[Finding]:
        if (code, line) not in seen:
            seen.add((code, line))
            yield Finding(
                code,
                field,
                f"{label}{how} on line {line}: secrets must never be stored in memory. Remove the value and name "
                "where it is kept instead (an environment variable or a secret-manager entry); rotate it if it "
                "was real.",
                line,
            )

    low = text.lower()
    for rule in _SECRET_RULES:
        if any(g in low for g in rule.gates):
            for m in rule.regex.finditer(text):
                if rule.check is None or rule.check(m, text):
                    yield from emit(rule.code, rule.label, lines.at(m.start()))
    named_lines = {line for _, line in seen}
    generic_lines: set[int] = set()
    for m in _ASSIGN_OP.finditer(text):
        line = lines.at(m.start())
        if line in named_lines or line in generic_lines:
            continue  # one finding per line; a named rule already spoke for it
        key = _key_before(text, m.start())
        if key and _secret_assignment(_key_parts(key), m.group("quoted") or m.group("val")):
            generic_lines.add(line)
            yield from emit("secret:generic-assignment", "secret-looking value assigned to a secret-named key", line)
    if "bearer" in low:
        for m in _BEARER.finditer(text):
            if random_looking(m.group("val")):
                yield from emit("secret:generic-assignment", "bearer token in an Authorization header",
                                lines.at(m.start()))  # fmt: skip

    if any(w in low for w in _PROSE_PASSWORD_GATES):
        for m in _PROSE_PASSWORD.finditer(text):
            line = lines.at(m.start())
            if line not in named_lines and line not in generic_lines and _prose_password(m.group("val")):
                yield from emit("secret:password", "password written in prose", line)

    if "|" in text and any(w in low for w in _PROSE_PASSWORD_GATES):
        for line, value in _table_passwords(text):
            if line not in named_lines and line not in generic_lines and _prose_password(value):
                yield from emit("secret:password", "password in a table's password column", line)
    if "pgpass" in low:
        for m in _PGPASS_LINE.finditer(text):
            if _prose_password(m.group("val")):
                yield from emit("secret:password", "password in a .pgpass line", lines.at(m.start()))

    found = {code for code, _ in seen}
    retry = [r for r in _SECRET_RULES if r.anchored and r.code not in found]
    if not retry:
        return
    # a wrapped token is a run of the text with its line breaks and spaces taken out, so only the rules with a
    # gate in that squeezed text can match one (the joined words of an ordinary long note are not all tried)
    squeezed = _WHITESPACE.sub("", low) if "\n" in text else ""
    wrapped = [r for r in retry if any(g in squeezed for g in r.gates)]
    if wrapped:
        for line, joined in _split_candidates(text):
            low_joined = joined.lower()
            for rule in wrapped:
                if any(g in low_joined for g in rule.gates):
                    hit = rule.regex.search(joined)
                    if hit and (rule.check is None or rule.check(hit, joined)):
                        yield from emit(rule.code, rule.label, line, " (split across lines)")
    for how, view in _views(text):
        low_view, view_lines = view.lower(), Lines(view)
        for rule in retry:
            if any(g in low_view for g in rule.gates):
                for m in rule.regex.finditer(view):
                    if rule.check is None or rule.check(m, view):
                        yield from emit(rule.code, rule.label, min(view_lines.at(m.start()), lines.at(len(text))), how)


# Passwords in prose: "the password is ...", "pw: ...", "passwort ist ...", "login is admin / ...".
_PASSWORD_WORDS = (
    r"password|passwort|passwd|passphrase|passcode|pass|pwd|pw|kennwort|mot\s+de\s+passe|contraseña|contrasenya|"
    r"senha|palavra-passe|wachtwoord|lösenord|adgangskode|passord|salasana|jelszó|jelszava|hasło|heslo|parol[aăe]|"
    r"şifre(?:si)?|sifre(?:si)?|lozinka|geslo|пароль|парола|密码|密碼|パスワード|비밀번호|kata\s+sandi|mật\s+khẩu|"
    r"κωδικός|סיסמה|كلمة\s+المرور|पासवर्ड"
)
_PROSE_PASSWORD_GATES: Final = ("pass", "pw", "pwd", "wifi", "wi-fi",
                                "kennwort", "mot de passe", "contrase", "senha", "пароль",
                                "logged in", "signed in", "log in", "sign in",
                                "login", "creds", "credentials", "wachtwoord", "lösenord", "adgangskode", "passord",
                                "salasana", "jelsz", "hasło", "heslo", "parol", "şifre", "sifre", "lozinka", "geslo",
                                "парола", "密码", "密碼", "パスワード", "비밀번호", "kata sandi", "mật khẩu", "κωδικ",
                                "סיסמה", "كلمة المرور", "पासवर्ड")  # fmt: skip
_PROSE_PASSWORD = re.compile(
    rf"(?i)(?:\b|(?<=[\s(])|(?<=[\u3040-\u9fff\uac00-\ud7af]))(?:(?:wi-?fi\s+|root\s+|admin\s+|db\s+|new\s+)?"
    rf"(?:{_PASSWORD_WORDS}|wi-?fi(?:\s+(?:key|code))?)(?:\s+(?:for|of|to|"
    r"on|at|in|für|fur|vom|zum|im|am|de|del|do|da|du|des|pour|para|per|di|dla|van|voor|för|til|för|na|для|від|за|от|к|у|od|do|"
    r"della|dello|delle|degli|dei|al|alla|sul|sulla|dos|das|der)"
    r"(?:\s+(?:the|my|our|this|that|le|la|el|les|der|die|das|den|dem|il|lo|o|a|het|de))?\s+[\w.\-]+"
    r"(?:\s+[\w.\-]+)?){0,2}"
    r"(?:\s*(?:is|was|will\s+be|=|:|：|->|ist|lautet|est|es|é|è|era|är|er|on|jest|je|je|это|是|为|は|은|는|—|-)|"
    r"\s+(?=\S*\d))|(?:login|creds|credentials)(?:\s+(?:for|to|on|of)(?:\s+(?:the|my|our|this|that))?\s+[\w.\-]+"
    r"(?:\s+[\w.\-]+)?)?\s*(?:is|are|:|=)\s*[\w.@\-]+\s*(?:/|:|,)|"
    r"\buse\s+(?:the\s+)?password|"
    # "logged into the portal as ops@acme.io with ...": an account named, then what it was opened with
    r"\b(?:logged|log|signed|sign)\s+in(?:to)?\b[^.\n]{0,60}?\bas\s+[\w.@\-]+\s+(?:with|using|and)\b)"
    r"\s*[\"'`“]?(?P<val>[^\s\"'`”]{6,64})"
)
_PROSE_WORD_END = re.compile(r"[.,;:!?)\]]+$")


# A .pgpass line, host:port:database:user:password.
_PGPASS_LINE = re.compile(r"(?<!\S)[\w.\-*]+:(?:\d{2,5}|\*):[\w.\-*]+:[\w.\-*@]+:(?P<val>\S{6,128})")
_TABLE_ROW = re.compile(r"^[ \t]*\|(.*)\|[ \t]*$")
_TABLE_RULE = re.compile(r"^[\s|:\-]+$")
_PASSWORD_HEADER = re.compile(rf"(?i)^\s*(?:{_PASSWORD_WORDS}|secret|credentials?)\s*$")


def _table_passwords(text: str) -> Iterator[tuple[int, str]]:
    """(line, cell) of every body cell of a Markdown table under a header cell that names a password."""
    column: int | None = None
    for number, line in enumerate(text.split("\n"), 1):
        row = _TABLE_ROW.match(line)
        if row is None:
            column = None
            continue
        cells = row.group(1).split("|")
        if _TABLE_RULE.match(row.group(1)):
            continue
        if column is None:
            column = next((i for i, cell in enumerate(cells) if _PASSWORD_HEADER.match(cell)), -1)
            continue
        if 0 <= column < len(cells):
            value = cells[column].strip().strip("`")
            if value and " " not in value:
                yield number, value


def _mixed_case(value: str) -> bool:
    """Letters only, with capitals inside the word as well as small letters: at least eight letters, two capitals
    after the first and two small ones (not "iPhone", "McDonald" or "README")."""
    inner_upper = sum(c.isupper() for c in value[1:])
    return len(value) >= 8 and inner_upper >= 2 and sum(c.islower() for c in value) >= 2


def _prose_password(value: str) -> bool:
    """A written-out value that looks like a password: letters and something else, not a placeholder or a
    word, a number, a path or a URL."""
    value = _PROSE_WORD_END.sub("", value) if not value.endswith(("!", "?")) or len(value) > 7 else value
    if len(value) < 6 or value.lower() in _URL_PASSWORD_PLACEHOLDERS or is_placeholder(value):
        return False
    if "://" in value or value.startswith(("/", "~", "./")) or value.isdigit():
        return False
    if not any(c.isalpha() for c in value):
        return False
    if all(c.isalpha() for c in value) and not _mixed_case(value):
        return False  # a word ("the password is forgotten"); "HuahCTCwtIzv" reads as a generated one
    if re.fullmatch(r"[a-z]+-[a-z]+(?:-[a-z]+)*", value):
        return False  # a hyphenated word ("self-service"), not a passphrase with digits
    return entropy(value) >= 2.5


# Other views of the text, read by the rules with a fixed prefix: escapes decoded, look-alike letters folded,
# spaced-out and concatenated tokens re-joined, reversed text, base64 decoded.
_ESCAPED = re.compile(r"\\u([0-9a-fA-F]{4})|\\x([0-9a-fA-F]{2})|&#x([0-9a-fA-F]{1,6});|&#(\d{1,7});")
_SPACED_RUN = re.compile(r"(?:[A-Za-z0-9_\-+/=.]{1,16}[ \t]){3,}[A-Za-z0-9_\-+/=.]{1,32}")
_CONCAT = re.compile(r"[\"']\s*\+\s*[\"']")
_B64_RUN = re.compile(r"(?<![A-Za-z0-9+/=_\-])[A-Za-z0-9+/_\-]{24,}={0,2}(?![A-Za-z0-9+/=_\-])")
_INVISIBLE = "\u200b\u200c\u200d\u2060\ufeff\u00ad\u180e"
_FOLD: Final = str.maketrans(
    {"І": "I", "і": "i", "А": "A", "а": "a", "Е": "E", "е": "e", "О": "O", "о": "o", "Р": "P", "р": "p",
     "С": "C", "с": "c", "Х": "X", "х": "x", "К": "K", "М": "M", "Н": "H", "Т": "T", "В": "B", "Ѕ": "S",
     "ѕ": "s", "у": "y", "Κ": "K", "Α": "A", "Ο": "O", "ο": "o", "Ι": "I"} | dict.fromkeys(_INVISIBLE, None)
)  # fmt: skip


def _unescape(m: re.Match[str]) -> str:
    code = int(next(g for g in m.groups() if g is not None), 10 if m.group(4) else 16)
    return chr(code) if code < 0x110000 else m.group()


def _token_pieces(run: str) -> bool:
    """A run of pieces that reads as a token written out in groups (`ghp_ aB3d eF5g ...`), not a sentence: most
    pieces after the first hold a digit or a capital after their first letter."""
    pieces = [p for p in run.split()[1:] if len(p) > 1]  # letters spelled out one by one ("x o x b") count for none
    if 2 * len(_MARK.findall(run)) < len(pieces):
        return False  # too few digits and capitals for half the pieces to hold one (most prose)
    marked = sum(any(c.isdigit() for c in p) or any(c.isupper() for c in p[1:]) for p in pieces)
    return 2 * marked >= len(pieces)


_MARK = re.compile(r"[0-9A-Z]")
_WHITESPACE = re.compile(r"\s+")


def _changed_lines(text: str, read: Callable[[str], bool], change: Callable[[str], str]) -> str | None:
    """`text` with `change` applied to the lines `read` picks and every other line left empty, so that a view of
    a long note costs what its few changed lines cost and keeps its line numbers; None when no line changed."""
    out: list[str] = []
    changed = False
    for line in text.split("\n"):
        if not read(line):
            out.append("")
            continue
        new = change(line)
        changed = changed or new != line
        out.append(new)
    return "\n".join(out) if changed else None


_LONG_RUN = re.compile(r"\S{16,}")


# a backslash before punctuation, as Markdown and JSON writers add it (`ghp\\_...` renders as `ghp_...`)
_PUNCT_ESCAPE = re.compile(r"\\([_\-*.~`/+=])")


def _unescape_line(line: str) -> str:
    return _PUNCT_ESCAPE.sub(r"\1", _ESCAPED.sub(_unescape, line))


# What can disguise a token's letters: the look-alikes folded above, invisible characters, and the letters, digits
# and joiners that NFKC maps to ASCII (full-width, mathematical, circled, enclosed, super- and subscript,
# letterlike, ligatures). Other lines (Chinese prose with its full-width commas) are not folded.
_LOOK_ALIKE = re.compile(
    "[" + re.escape("".join(chr(c) for c in _FOLD)) + "\uff10-\uff19\uff21-\uff3a\uff41-\uff5a\uff0d\uff3f"
    "\U0001d400-\U0001d7ff\u2460-\u24ff\U0001f100-\U0001f1ff\u2070-\u209f\u2100-\u214f\ufb00-\ufb06]"
)


def _has_look_alike(line: str) -> bool:
    return _LOOK_ALIKE.search(line) is not None


def _fold(line: str) -> str:
    return unicodedata.normalize("NFKC", line).translate(_FOLD)


def _concatenated(text: str) -> str | None:
    """The lines around string concatenations (`"ghp_" + "..."`), with the concatenations joined and every
    other line left empty; None when there is none."""
    marks = [m.span() for m in _CONCAT.finditer(text)]
    if not marks:
        return None
    breaks = [i for i, ch in enumerate(text) if ch == "\n"] if len(marks) < 64 else None
    if breaks is None:
        return _CONCAT.sub("", text)  # concatenations all over the text: read it whole
    keep: set[int] = set()
    for start, end in marks:
        first, last = bisect.bisect_left(breaks, start), bisect.bisect_left(breaks, end)
        keep.update(range(max(0, first - 1), last + 2))
    lines = text.split("\n")
    return _CONCAT.sub("", "\n".join(line if i in keep else "" for i, line in enumerate(lines)))


def _views(text: str) -> Iterator[tuple[str, str]]:
    if "%" in text and (decoded := _changed_lines(text, lambda line: "%" in line, urllib.parse.unquote)):
        yield " (URL-encoded)", decoded
    if ("\\" in text or "&#" in text) and (
        unescaped := _changed_lines(text, lambda line: "\\" in line or "&#" in line, _unescape_line)
    ):
        yield " (escaped)", unescaped
    if not text.isascii() and (folded := _changed_lines(text, _has_look_alike, _fold)):
        yield " (look-alike characters)", folded
    spaced = [re.sub(r"[ \t]+", "", m.group()) for m in _SPACED_RUN.finditer(text) if _token_pieces(m.group())]
    if spaced:
        yield " (spaced out)", "\n".join(spaced)
    if "+" in text and (joined := _concatenated(text)):
        yield " (concatenated)", joined
    # a reversed token is one long run; the lines without one are not read backwards
    backwards = _changed_lines(text, lambda line: _LONG_RUN.search(line) is not None, lambda line: line[::-1])
    if backwards:
        yield " (reversed)", backwards
    blobs = []
    for m in _B64_RUN.finditer(text):
        blob = m.group()
        try:
            raw = base64.urlsafe_b64decode(blob.replace("+", "-").replace("/", "_") + "=" * (-len(blob) % 4))
            inner = raw.decode("utf-8")
        except (binascii.Error, UnicodeDecodeError, ValueError):
            continue
        if inner.isprintable():
            blobs.append(inner)
    if blobs:
        yield " (base64-encoded)", "\n".join(blobs)
