"""Credential-shaped values, reported as ``secret:*``: cloud keys, tokens, private keys, JWTs, passwords in URLs
and high-entropy values assigned to secret-named keys.

Read everywhere, code included, and again with line breaks joined and URL escapes decoded. A message names the
kind of secret and its line, never the value nor any part of it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Final

from agentmd.rules.prefilter.core import Finding, Lines, documented_sample, entropy, is_placeholder, random_looking
from agentmd.rules.prefilter.credential_rules import SECRET_RULES, URL_PASSWORD_PLACEHOLDERS
from agentmd.rules.prefilter.credential_views import B64_RUN, WHITESPACE, views
from agentmd.rules.prefilter.prose_passwords import (
    NAME_PARTS,
    NAMES_PASSWORD,
    SHAREABLE,
    joined_passphrase,
    password_lines,
    password_shaped,
)
from agentmd.rules.prefilter.secret_lists import (
    DIGIT_CODE_GATES,
    byte_key_lines,
    digit_code_lines,
    recovery_code_lines,
)
from agentmd.rules.prefilter.seed_phrases import SEED_WORDS, labelled_phrase_lines, seed_phrase_lines

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
     "bindings", "fingerprint", "board", "word", "required", "enabled", "mode", "http", "https", "encrypted",
     "enc", "ciphertext", "cipher", "sealed", "publishable", "accessor"}
)  # fmt: skip
_UNBROKEN_RUN = re.compile(r"[A-Za-z0-9+/=]{16,}")
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
# A credential after an Authorization header's scheme (Bearer, Token, Bot, ApiKey, …; Basic has its own rule), or
# after the word "Bearer" anywhere
_BEARER = re.compile(
    r"(?i)\b(?:authorization[\"']?\s*[:=]\s*[\"']?(?!basic\b)(?:[a-z][\w-]{1,15}\s+)?|bearer\s+)"
    r"(?P<val>[A-Za-z0-9._~+/\-]{20,}=*)"
)


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
    if SHAREABLE.match(value):
        return False
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+", value):
        return False  # an attribute access such as settings.api_key
    if re.fullmatch(r"[\d.:\-TZ+]+", value):
        return False  # numbers, versions, dates
    if parts[-1] in _PASSWORD_PARTS:
        return joined_passphrase(value) or (
            len(value) >= 8
            and not is_placeholder(value)
            and value.lower() not in URL_PASSWORD_PLACEHOLDERS
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
_HEX = re.compile(r"[0-9a-f]{24,128}|[0-9A-F]{24,128}")


def _hex_secret(value: str, min_len: int = 32) -> bool:
    """`min_len` or more hex digits, letters and digits mixed, not a run or a sequence (Twilio, Datadog, Mailchimp
    and many other services issue such tokens; their entropy is below what `random_looking` asks of mixed text)."""
    return (
        len(value) >= min_len
        and _HEX.fullmatch(value) is not None
        and any(c.isdigit() for c in value)
        and any(c.isalpha() for c in value)
        and entropy(value) >= 3.0
        and not is_placeholder(value)
    )


# A random-looking value that the words before it name a credential, in prose and in any language: "Page access
# token (never expires) for the Acme page:" and the token on the next line, "Azure DevOps PAT für die
# Pipeline-Agenten: …", "sentry-cli releases new … --auth-token …", "wandb login …". Words that name a credential
# whatever comes with them (token, secret, PAT, an API or private key) may stand anywhere in the 80 characters
# before the value on its line, or on the line before when the value opens its line; words that name one only
# next to a value (key, auth, login, session, cookie) must stand just before one of 32 characters or more, or be
# followed by what it is for and a colon, not before a UUID. Words that name something public or an identifier
# (public, fingerprint, id, hash, commit, digest) anywhere in that stretch let the value be.
_STRONG_NOUN = re.compile(
    r"(?i)(?<![^\W_])(?:tokens?|secrets?|pat|credentials?|creds|passphrase|bearer|wif|(?:api|access|private|secret|"
    r"sdk|server|signing|master|deploy|account|service|client|license|licence|live|app|admin|encryption|storage|"
    r"webhook|integration|auth|personal|recovery)[\s_-]?keys?|apikey|xprv|schlüssel|schluessel|clé|clave|chave|"
    r"sleutel|nyckel|nøgle|nøkkel|avain|klucz|klíč|ključ|kulcs|cheie|anahtar\w*|chiave|ключ\w*|токен\w*|κλειδί|"
    r"מפתח|مفتاح|कुंजी|टोकन|jetons?|رمز|توكن|setup[\s_-]?keys?|[^\W\d_]+(?:schlüssel|schluessel|token)|kunci|"
    r"(?:recovery|backup)[\s_-]?codes?|herstel\w*kode|wiederherstellungs\w*|récupération|recuperación|recuperação|"
    r"সিক্রেট|টোকেন|시크릿)(?![^\W_])|โทเค็น|คีย์|密钥|密鑰|金鑰|令牌|トークン|キー|秘密鍵|키|토큰"
)
# a word that names a credential right before a colon or an equals sign, the value after it ("Client Secret:")
_ADJACENT_STRONG = re.compile(
    r"(?i)(?<![^\W_])(?:tokens?|secrets?|pat|passphrase|(?:api|access|private|secret|client|app)[\s_-]?(?:keys?|secrets?)|"
    r"apikey|시크릿|সিক্রেট|シークレット)[\"'`]?[ \t]*[:=：][ \t]*[\"'`]?$"
)
_WEAK_NOUNS: Final = r"(?<![^\W_])(?:key|auth|login|session|cookie|sid)"
_WEAK_NOUN = re.compile(rf"(?i){_WEAK_NOUNS}[\s\"'`:=—–-]*$")
# "REST key for the on-call sync script: …": the word, what it is for, and a colon or "is" just before the value
_WEAK_NOUN_FOR = re.compile(
    rf"(?i){_WEAK_NOUNS}\s+(?:for|of|to|on|at|für|pour|para|per|voor)(?:\s+\S+){{1,5}}?(?:\s*[:=]|\s+is)\s*$"
)
_NOT_SECRET_LABEL = re.compile(
    r"(?i)(?<![^\W_])(?:public|pub|fingerprints?|ids?|hash(?:es)?|sha\d*|md5|digests?|checksums?|commits?|uuid|"
    r"request|trace|kid|example|sample|placeholder|format|prefix|rotat\w*|revoked|expired|url|endpoint|"
    r"integrity|accessors?|signatures?|signed|encrypted|ciphertext|verschlüsselt\w*|chiffré\w*|cifrad\w*)(?![^\W_])"
)
_VALUE_RUN = re.compile(r"[A-Za-z0-9_\-+/=.:%~]{20,}")
_PADDING = re.compile(r"^(.)\1{5,}")  # a run of one character opening a vendor's token (X's bearer tokens)
_LABEL_CHARS = 80


def _labelled_values(text: str) -> Iterator[tuple[int, str]]:
    """(1-based line, value) of every random-looking value whose label names a credential."""
    lines = text.split("\n")
    previous = ""
    for number, line in enumerate(lines, 1):
        for start, value, kind in _runs(line):
            if "://" in value or value.startswith(("/", "~", ".", "-")):
                continue
            if kind != "grouped" and NAME_PARTS.fullmatch(value):
                continue
            if SHAREABLE.match(value) or _TWILIO_SID.fullmatch(value):
                continue
            if _CIPHER_MARK.search(line, max(0, start - 200), start):
                continue
            if documented_sample(value):
                continue  # a vendor's documented sample (jwt.io's token)
            if kind == "short":
                if password_shaped(value) and _ADJACENT_STRONG.search(line, max(0, start - 40), start):
                    yield number, value  # "Client Secret: oND5bgfTFA": a short value right after the word
                continue
            if not (random_looking(value, min_len=16 if kind == "grouped" else 20) or _hex_secret(value, 24)):
                continue
            before = line[max(0, start - _LABEL_CHARS) : start]
            if _LABEL_CHARS < start <= 2 * _LABEL_CHARS and line[:start].rstrip().endswith((":", "：")):
                before = line[:start]  # a long label and a colon: "Clé secrète 2FA du compte … (…) : …"
            label = before if any(c.isalpha() for c in before) else previous
            strong = _last(_STRONG_NOUN, label)  # the words nearest the value
            public = _last(_NOT_SECRET_LABEL, label)
            if public and not (strong and public.start() < strong.start() - 24):
                continue  # a public thing or an id named near the value ("public key", "request id"), not far
            if strong or (kind == "grouped" and NAMES_PASSWORD.search(label)) or (
                label is before
                and not _UUID.fullmatch(value)
                and ((len(value) >= 32 and _WEAK_NOUN.search(before)) or _WEAK_NOUN_FOR.search(before))
            ):
                yield number, value
        if line.strip():
            colon = line.rstrip().endswith((":", "："))
            previous = line[-2 * _LABEL_CHARS :] if colon else line[-_LABEL_CHARS:]


def _last(rx: re.Pattern[str], text: str) -> re.Match[str] | None:
    found = None
    for found in rx.finditer(text):  # noqa: B007 (the last match is what is wanted)
        pass
    return found


_CIPHER_MARK = re.compile(r"ENC\[|\$ANSIBLE_VAULT|U2FsdGVkX1")  # inside sops or Ansible Vault ciphertext
# a Twilio resource's id (a message, account or service SID): two capitals and 32 hex digits, shown in logs
_TWILIO_SID = re.compile(r"(?:AC|SM|MM|MG|PN|CA|RE|CH|IS|US|WS|QU|TR|FW|VA|ZS|ZH)[0-9a-f]{32}")
_SHORT_VALUE = re.compile(r"(?<=[:=：])[ \t]*[\"'`]?([A-Za-z0-9_\-+/=.~!@#$%^&*?]{8,19})[\"'`]?(?=[\s,;]|$)")


def _runs(line: str) -> Iterator[tuple[int, str, str]]:
    """(start, value, kind) of each run of a line that may be a value: unbroken runs ("run"), a code read out in
    groups of one length and one letter case ("grouped": "ZJYM FBHH BW5L 3PPE", a 2FA seed as an authenticator
    app shows it, joined), and a value of eight to nineteen characters after a colon or an equals sign
    ("short")."""
    for m in _VALUE_RUN.finditer(line):
        yield m.start(), _PADDING.sub("", m.group().rstrip(".:,;")), "run"
    if ":" in line or "=" in line or "：" in line:
        for m in _SHORT_VALUE.finditer(line):
            yield m.start(1), m.group(1), "short"
    if line.count(" ") >= 3:
        runs: list[list[tuple[int, str]]] = [[]]
        for m in _WORD.finditer(line):
            word, run = m.group().rstrip(".,;)"), runs[-1]
            if _GROUP.fullmatch(word) is None or not (word.isupper() or word.islower()):
                runs.append([])
            elif run and len(word) == len(run[0][1]) and word.isupper() == run[0][1].isupper():
                run.append((m.start(), word))
            else:
                runs.append([(m.start(), word)])
        for run in runs:
            if len(run) >= 4:
                yield run[0][0], "".join(word for _, word in run), "grouped"


_WORD = re.compile(r"[^\s:=]+")
_GROUP = re.compile(r"[A-Za-z0-9]{3,8}")
_STAND_IN_RUN = re.compile(r"([A-Za-z0-9])\1{5,}$")
_MAX_SPLIT_LINES: Final = 8
_MAX_SPLIT_CHARS: Final = 1000
_MIN_WRAPPED: Final = 16  # no token the rules know is shorter once its pieces are joined


def _split_candidates(text: str) -> Iterator[tuple[int, str]]:
    """(1-based line, joined word) for every line break: the last word of a line glued to the first word of the
    next (and on through lines that hold a single word), so a token wrapped across lines is seen whole."""
    lines = text.split("\n")
    for i in range(len(lines) - 1):
        words = lines[i].split()
        if not words or _STAND_IN_RUN.search(words[-1]):
            continue  # (a stand-in's run of one character, `sk_live_xxxx…`, is not glued to the next line's word)
        joined = words[-1]
        for j in range(i + 1, min(len(lines), i + _MAX_SPLIT_LINES)):
            following = lines[j].split()
            if not following or len(joined) > _MAX_SPLIT_CHARS or _STAND_IN_RUN.search(joined):
                break
            joined += following[0]
            if len(following) > 1:
                break
        if len(joined) > len(words[-1]) and len(joined) >= _MIN_WRAPPED:
            yield i + 1, joined


_SEALED_BLOCK = re.compile(r"^([ \t]*)encryptedData:[ \t]*$")


def _sealed_lines(text: str) -> set[int]:
    """The 1-based lines of the mappings under `encryptedData:` (a SealedSecret's values, encrypted for the
    cluster's key and meant to be committed)."""
    out: set[int] = set()
    depth: int | None = None
    for number, line in enumerate(text.split("\n"), 1):
        if depth is not None and line.strip() and len(line) - len(line.lstrip()) > depth:
            out.add(number)
            continue
        block = _SEALED_BLOCK.match(line)
        depth = len(block.group(1)) if block else None
    return out


def secret_findings(text: str, field: str, *, decoded: bool = False) -> Iterator[Finding]:
    """The secrets of `text`. A base64 blob's decoded text is read by every rule, the generic ones too (an
    assignment encoded to get past a scanner, `QVdTX1NFQ1JFVF9…`), once (`decoded`: the text is such a blob's)."""
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
    for rule in SECRET_RULES:
        if any(g in low for g in rule.gates):
            for m in rule.regex.finditer(text):
                if rule.check is None or rule.check(m, text):
                    yield from emit(rule.code, rule.label, lines.at(m.start()))
    sealed = _sealed_lines(text) if "encryptedData:" in text else set()
    named_lines = {line for _, line in seen} | sealed  # (ciphertext under encryptedData: is no secret)
    generic_lines: set[int] = set()
    for m in _ASSIGN_OP.finditer(text):
        line = lines.at(m.start())
        if line in named_lines or line in generic_lines or line in sealed:
            continue  # one finding per line; a named rule already spoke for it; ciphertext is no secret
        key = _key_before(text, m.start())
        if key and _secret_assignment(_key_parts(key), m.group("quoted") or m.group("val")):
            generic_lines.add(line)
            yield from emit("secret:generic-assignment", "secret-looking value assigned to a secret-named key", line)
    for line, _value in _labelled_values(text):
        if line not in named_lines and line not in generic_lines and line not in sealed:
            generic_lines.add(line)
            yield from emit("secret:generic-assignment", "a random-looking value its label names a credential", line)
    if "bearer" in low or "authorization" in low:
        for m in _BEARER.finditer(text):
            if random_looking(m.group("val")):
                yield from emit("secret:generic-assignment", "a token in an Authorization header or after Bearer",
                                lines.at(m.start()))  # fmt: skip

    for line, label in password_lines(text, low):
        if line not in named_lines and line not in generic_lines:
            yield from emit("secret:password", label, line)

    for line in dict.fromkeys([*seed_phrase_lines(text), *labelled_phrase_lines(text)]):
        label = f"a wallet's recovery phrase ({SEED_WORDS} or more words of a BIP-39 list)"
        yield from emit("secret:seed-phrase", label, line)
    for line in recovery_code_lines(text):
        yield from emit("secret:recovery-codes", "a list of an account's recovery codes", line)
    for line in byte_key_lines(text):
        yield from emit("secret:private-key", "a key written as a list of bytes", line)
    if any(g in low for g in DIGIT_CODE_GATES):
        for line in digit_code_lines(text):
            if line not in named_lines and line not in generic_lines:
                yield from emit("secret:password", "a PIN or a door, alarm or safe code", line)

    found = {code for code, _ in seen}
    retry = [r for r in SECRET_RULES if r.anchored and r.code not in found]
    if not retry:
        return
    # a wrapped token is a run of the text with its line breaks and spaces taken out, so only the rules with a
    # gate in that squeezed text can match one (the joined words of an ordinary long note are not all tried)
    squeezed = WHITESPACE.sub("", low) if "\n" in text else ""
    wrapped = [r for r in retry if any(g in squeezed for g in r.gates)]
    if wrapped:
        for line, joined in _split_candidates(text):
            low_joined = joined.lower()
            for rule in wrapped:
                if any(g in low_joined for g in rule.gates):
                    hit = rule.regex.search(joined)
                    if hit and (rule.check is None or rule.check(hit, joined)):
                        yield from emit(rule.code, rule.label, line, " (split across lines)")
    for how, view in views(text):
        if how == " (base64-encoded)" and not decoded:
            first = B64_RUN.search(text)
            line = lines.at(first.start() if first else 0)
            for inner in secret_findings(view, field, decoded=True):
                yield from emit(inner.code, "a secret inside base64-encoded text", line)
            continue
        low_view, view_lines = view.lower(), Lines(view)
        for rule in retry:
            if any(g in low_view for g in rule.gates):
                for m in rule.regex.finditer(view):
                    if rule.check is None or rule.check(m, view):
                        yield from emit(rule.code, rule.label, min(view_lines.at(m.start()), lines.at(len(text))), how)
