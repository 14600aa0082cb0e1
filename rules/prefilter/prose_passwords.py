"""Passwords written by people rather than by programs: in prose and chats in many languages ("the wifi password
is …", "Lösenordet till SMTP-kontot … är …"), in a table's password column, in a .pgpass line, sent in the message
after the one that asks for one, and a value shaped like nothing but a password in the sentence of a word for one.

A value found so must still read as a password (`prose_password`): not a word, a number, a path, a URL, a variable's
name, a reference to where it is kept or an example shown as what not to choose.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Final

from agentmd.rules.prefilter.core import Lines, entropy, is_placeholder
from agentmd.rules.prefilter.credential_rules import URL_PASSWORD_PLACEHOLDERS

# a name made of words and numbers (`secrets.DEPLOY_TOKEN_2024`, `release-notes-2024-q3`, `ec2-eu-west`), not a
# value
NAME_PARTS = re.compile(r"(?:[A-Za-z]+\d{0,2}|\d+)(?:[._\-:/](?:[A-Za-z]+\d{0,2}|\d+))*")
# Values that are meant to be shared: ciphertext that only a key elsewhere opens (OpenSSL's salted output, an AWS KMS
# blob, sops, Vault transit, Ansible Vault, a sealed secret's encryptedData), a publishable key the vendor puts in
# web pages (Mapbox `pk.`, Stripe `pk_live_`, PostHog `phc_`), a secret manager's reference
SHAREABLE = re.compile(
    r"[\"']?(?:U2FsdGVkX1|AQICAH|AQIBAH|AQIDAH|ENC\[|vault:v\d+:|\$ANSIBLE_VAULT|pk\.ey|pk_(?:live|test)_|phc_|[xyzt]pub[A-Za-z0-9]{20}|"
    r"op://|vault:|ref\+|arn:aws:secretsmanager:|projects/[\w-]+/secrets/)"
)


def _written_out(text: str, m: re.Match[str]) -> bool:
    """The match's value reads as a password, not one shown as an example nor a place where one is kept."""
    example = _shown_as_example(text, m.start()) or _kept_in(text, m.start("val"))
    return not example and prose_password(m.group("val"))


def password_lines(text: str, low: str) -> Iterator[tuple[int, str]]:
    """(1-based line, what was found) for every password written by hand in `text` (`low`: it lowercased)."""
    lines = Lines(text)
    gated = any(w in low for w in _PROSE_PASSWORD_GATES)
    if gated:
        for m in _PROSE_PASSWORD.finditer(text):
            if _written_out(text, m):
                yield lines.at(m.start()), "password written in prose"
    if gated or (("user" in low or "account" in low) and "/" in text):
        for m in _LOOSE_PASSWORD.finditer(text):
            if _written_out(text, m):
                yield lines.at(m.start()), "password written in prose"
    if gated and "|" in text:
        for line, value in _table_passwords(text):
            if prose_password(value):
                yield line, "password in a table's password column"
    if gated:
        for line, value in _answered_passwords(text):
            if prose_password(value):
                yield line, "password sent in the message after the one that names it"
    if gated or "סיסמ" in text or "รหัสผ่าน" in text:
        for line, value in _passwords_in_sentence(text):
            if prose_password(value):
                yield line, "a password-shaped value beside a word for a password"
    if gated:
        for m in _PASSWORD_DIGITS.finditer(text):
            digits = m.group("val")
            if not (_shown_as_example(text, m.start()) or not_a_pin(digits)):
                yield lines.at(m.start()), "a PIN given after a word for a password"
    if "pgpass" in low:
        for m in _PGPASS_LINE.finditer(text):
            if prose_password(m.group("val")):
                yield lines.at(m.start()), "password in a .pgpass line"


# Passwords in prose: "the password is ...", "pw: ...", "passwort ist ...", "login is admin / ...".
# (Germanic compounds and definite forms: "Datenbankpasswort", "BIOS-lösenordet", "wifipassordet")
_PASSWORD_WORDS = (
    r"password|(?:[^\W\d_]{2,}-?)?(?:passwort|kennwort|wachtwoord|lösenord|adgangskode|passord)(?:e?[ts]|en|n)?|"
    r"passwd|passphrase|passcode|pass|pwd|pw|mot\s+de\s+passe|contraseñas?|contrasenya|senhas?|palavra-passe|"
    r"salasana[nt]?|jelszó|jelszava|hasł(?:o|a|em)|hesl(?:o|a|em)|parol[aăe]|şifre(?:si)?|sifre(?:si)?|lozink[aeu]|gesl[oa]|"
    r"парол(?:ь|я|ем)|парола|密码|密碼|パスワード|비밀번호|kata\s+sandi|mật\s+khẩu|κωδικός|סיסמה|كلمة\s+المرور|"
    r"पासवर्ड|lykilorð\w*|pasahitz\w*|fjalëkalim\w*|i?phasiwedi|পাসওয়ার্ড|የይለፍ\s+ቃል|kata\s+laluan|salasõna\w*|"
    r"slaptažod\w*|гасл[оа]|лозинк[аеу]|პაროლ\w*|գաղտնաբառ\w*|رمز\s+عبور|پاس\s*ورڈ|கடவுச்சொல்\w*|nenosiri|"
    r"нууц\s+үг|құпия\s+сөз|şifrə\w*|parool\w*|wagwoord\w*|passwuert|pasvorto"
)
_PROSE_PASSWORD_GATES: Final = ("pass", "pw", "pwd", "wifi", "wi-fi",
                                "kennwort", "mot de passe", "contrase", "senha", "пароль",
                                "logged in", "signed in", "log in", "sign in",
                                "login", "creds", "credentials", "wachtwoord", "lösenord", "adgangskode", "passord",
                                "salasana", "jelsz", "hasło", "heslo", "parol", "şifre", "sifre", "lozinka", "geslo",
                                "парола", "密码", "密碼", "パスワード", "비밀번호", "kata sandi", "mật khẩu", "κωδικ",
                                "סיסמה", "كلمة المرور", "पासवर्ड", "lykilorð", "pasahitz", "fjalëkalim", "phasiwedi",
                                "পাসওয়ার্ড", "የይለፍ", "laluan", "salasõna", "slaptažod", "гасл", "лозинк", "პაროლ",
                                "գաղտնաբառ", "رمز عبور", "ورڈ", "கடவுச்சொல்", "nenosiri", "нууц", "құпия", "şifrə",
                                "parool", "wagwoord", "passwuert", "pasvorto")  # fmt: skip
_PROSE_PASSWORD = re.compile(
    rf"(?i)(?:\b|(?<=[\s(])|(?<=[\u3040-\u9fff\uac00-\ud7af]))(?:(?:wi-?fi\s+|root\s+|admin\s+|db\s+|new\s+)?"
    rf"(?:{_PASSWORD_WORDS}|wi-?fi(?:\s+(?:key|code))?)(?:\s+(?:for|of|to|"
    r"on|at|in|für|fur|vom|zum|im|am|de|del|do|da|du|des|pour|para|per|di|dla|van|voor|för|til|för|na|для|від|за|от|к|у|od|do|"
    r"della|dello|delle|degli|dei|al|alla|sul|sulla|dos|das|der)"
    r"(?:\s+(?:the|my|our|this|that|le|la|el|les|der|die|das|den|dem|il|lo|o|a|het|de))?\s+[\w.\-]+"
    r"(?:\s+[\w.\-]+){0,2}){0,3}(?:\s+(?-i:[A-Z][A-Z0-9]{1,5}))?"
    r"(?:[ \t]*(?:is|was|will\s+be|=|:|：|->|ist|lautet|est|es|é|è|era|är|er|on|jest|je|je|это|是|为|は|은|는|—|-)|"
    r"\s+(?=\S*\d))|(?:login|creds|credentials)(?:\s+(?:for|to|on|of)(?:\s+(?:the|my|our|this|that))?\s+[\w.\-]+"
    r"(?:\s+[\w.\-]+)?)?\s*(?:is|are|:|=)\s*[\w.@\-]+\s*(?:/|:|,)|"
    r"\buse\s+(?:the\s+)?password|"
    # "set the root password to …", "changed my password to …": a password given the value it was set to
    r"\b(?:set|sets|setting|change[ds]?|changing|reset|resets|update[ds]?)\s+(?:the\s+|my\s+|our\s+|its\s+)?"
    rf"(?:[\w\-]+\s+)?(?:{_PASSWORD_WORDS})\s+(?:to|as)|"
    # "logged into the portal as ops@acme.io with ...": an account named, then what it was opened with
    r"\b(?:logged|log|signed|sign)\s+in(?:to)?\b[^.\n]{0,60}?\bas\s+[\w.@\-]+\s+(?:with|using|and)\b)"
    r"\s*(?:[\"'`“«‹„「『]\s?)?(?P<val>[^\s\"'`”«»‹›„“「」『』]{6,64})"
)
_PROSE_WORD_END = re.compile(r"[.,;:!?)\]]+$")
# The same with any few words between the name and the value, read only up to a colon, an equals sign or a verb
# "is" ("Mật khẩu wifi văn phòng mới là: …", "كلمة المرور لحساب المدير: …", "Heslo k produkční databázi je …"),
# and an account written as user / password ("admin user: admin / …"); the value must still read as a password.
_NOT_A_PASSWORD_OF: Final = (
    r"(?:manager|managers|policy|policies|length|reset|requirements?|rules?|field|hash|hashes|expiry|rotation|vault|"
    r"store|strength|prompt|hint|change|changes)"
)
# the names of a password less the short ones other words share ("pass the signals", `pwd`)
_LOOSE_WORDS: Final = "|".join(w for w in _PASSWORD_WORDS.split("|") if w not in ("pass", "pw", "pwd"))
_LOOSE_PASSWORD = re.compile(
    rf"(?i)(?:(?:\b|(?<=[\s(]))(?:{_LOOSE_WORDS})(?:[ \t]+(?!{_NOT_A_PASSWORD_OF}\b)[^\s:=.,;!?]+){{0,5}}?"
    r"(?:[ \t]+(?:is|was|ist|lautet|est|es|é|è|era|är|er|on|jest|je|là|adalah|ialah|है|هي|هو)\s*[:：=]?|[ \t]*[:：=])|"
    r"\b(?:user(?:name)?|login|account)\s*[:=]\s*[\w.@\-]+\s*/)"
    r"\s*(?:[\"'`“«‹„「『]\s?)?(?P<val>[^\s\"'`”«»‹›„“「」『』]{6,64})"
)


# A password sent on its own in the message after one that names it ("Kannst du mir das Passwort schicken?" /
# "[09:15] Sophie: klar: X3gbrbIUd+30"): a message of one value, after a chat line's time and speaker and a word
# of reply, within the three lines after the one naming the password. Hex alone is a commit or an id; a value
# with "=" or "/" is a setting or a path.
_NAMES_PASSWORD = re.compile(rf"(?i)(?:\b|(?<=[\s(]))(?:{_LOOSE_WORDS})(?![^\W_])(?!\s+{_NOT_A_PASSWORD_OF}\b)")
_LONE_VALUE = re.compile(
    r"^\s*(?:[-*>]\s*)?(?:\[[^\]\n]{1,25}\]\s*)?(?:[^\s:]{1,25}(?:\s[^\s:]{1,25})?:\s+)?(?:[^\W\d_]{1,12}[:,!]\s+)?"
    r"[\"'`“]?(?P<val>[^\s\"'`”]{8,40}?)[\"'`”]?[.!]?\s*$"
)


_HEX_OR_SETTING = re.compile(r"^(?:[0-9a-f]+|[0-9A-F]+)$|[=/]")


def _answered_passwords(text: str) -> Iterator[tuple[int, str]]:
    lines = text.split("\n")
    for number, line in enumerate(lines):
        if _NAMES_PASSWORD.search(line) is None:
            continue
        for offset, following in enumerate(lines[number + 1 : number + 4], number + 2):
            m = _LONE_VALUE.match(following)
            value = m.group("val") if m else ""
            if value and not (_HEX_OR_SETTING.search(value) or NAME_PARTS.fullmatch(value)):
                yield offset, value


# A value shaped like nothing but a password (eight or more characters of three kinds, a digit among them:
# `9382dffx1#44`) in the same sentence as a word for a password, however the sentence runs in between
# ("паролем от админки магазина теперь служит …", "Lösenordet till SMTP-kontot noreply@acme.se är …", "root pw for
# ops-03 until we set up SSO: …"). Dotted names (hosts, files), addresses and an example shown are not it.
NAMES_PASSWORD = re.compile(
    rf"(?i)(?:(?:\b|(?<=[\s(])|(?<=[\u0590-\u05ff\u0e00-\u0e7f]))(?:{_LOOSE_WORDS}|סיסמ[הא]|รหัสผ่าน)|"
    r"\b(?:root|admin|db|wifi|wi-fi|sudo|vpn|ssh)[ \t]+(?:pw|pwd|pass)\b)"
)
_SENTENCE_END = re.compile(r"\n|[.!?。；;](?:\s|$)")
_TOKEN_EDGES: Final = "\"'`“”«»‹›„「」『』()[],.;:"
_DOTTED_OR_ADDRESS = re.compile(r"[\w-]+(?:\.[\w-]+)+|[^@\s]+@[^@\s]+")


def password_shaped(token: str) -> bool:
    kinds = (
        any(c.islower() for c in token)
        + any(c.isupper() for c in token)
        + any(c.isdigit() for c in token)
        + any(not c.isalnum() for c in token)
    )
    return (
        8 <= len(token) <= 64
        and kinds >= 3
        and any(c.isdigit() for c in token)
        and any(c.isalpha() for c in token)
        and not _DOTTED_OR_ADDRESS.fullmatch(token)
        and not NAME_PARTS.fullmatch(token)
        and entropy(token) >= 3.0
    )


def _passwords_in_sentence(text: str) -> Iterator[tuple[int, str]]:
    lines, read_to = Lines(text), 0
    for m in NAMES_PASSWORD.finditer(text):
        if m.start() < read_to:
            continue  # inside the stretch of a word just read: its tokens were tried
        end = _SENTENCE_END.search(text, m.end(), m.end() + 100)
        read_to = end.start() if end else m.end() + 100
        stretch = text[m.end() : end.start() if end else m.end() + 100]
        if _shown_as_example(text, m.start()) or _AN_EXAMPLE.search(stretch):
            continue
        for token in stretch.split():
            token = token.strip(_TOKEN_EDGES)
            if password_shaped(token):
                yield lines.at(m.start()), token
                break


# Digits given as a password ("Banka kartının şifresi 8528", "Mật khẩu ví MoMo của mẹ là 933303"): four to ten
# digits right after the word, or after a verb or a colon, not a count of days or characters, a year, a run of one
# digit or a counting run.
_PASSWORD_DIGITS = re.compile(
    rf"(?i)(?:\b|(?<=[\s(]))(?:{_LOOSE_WORDS})(?![^\W_])(?!\s+{_NOT_A_PASSWORD_OF}\b)"
    r"(?:[ \t]+|[^\n\d.!?]{0,40}?[ \t]*(?:\bis|\bist|\best|\bes|\bè|\bé|\bär|\ber|\bjest|\bje|\blà|\bay|\bni|"
    r"είναι|это|:|：|=)[ \t]*)[\"'«„“]?(?P<val>\d{4,10})(?![\d.,:/-]?\d)"
    r"(?!\s*(?:days?|chars?|characters?|times?|attempts?|tries|hours?|minutes?|digits?|bits?|tage|zeichen|jours|"
    r"caractères|días|caracteres|gün|karakter|dni|znaków)\b)"
)
_COUNTING_RUNS: Final = ("0123456789", "9876543210")


def not_a_pin(digits: str) -> bool:
    """A year, a run of one digit or a counting run: no code anyone was given."""
    year = len(digits) == 4 and digits[:2] in ("19", "20")
    return year or len(set(digits)) == 1 or any(digits in run for run in _COUNTING_RUNS)


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


def joined_passphrase(value: str) -> bool:
    """Words run together into one passphrase ("correcthorsebatterystaple"): letters of one case only, longer
    than any word a sentence would give as a password's state ("incomprehensible", "internationalization")."""
    return len(value) >= PASSPHRASE_LETTERS and value.isalpha() and (value.islower() or value.isupper())


# a password shown as what not to choose ("Beispiel für ein schlechtes Passwort: Sommer2024!", "a weak password
# such as …")
_AN_EXAMPLE = re.compile(
    r"(?i)(?<![^\W_.@])(?:examples?|e\.g\.|beispiel\w*|z\.\s?b\.|exemples?|ejemplos?|esempio|exemplo|bad|weak|"
    r"schlecht\w*|schwach\w*|mauvais|faibles?|débil|débiles|insegur\w*|unsafe|unsicher\w*)(?![^\W_])"
)


_WHERE: Final = frozenset({"in", "im", "dans", "en", "bei", "unter", "auf", "within", "inside", "from", "aus", "into",
                           "nel", "nella", "no", "na", "w", "v", "в", "i", "op"})  # fmt: skip


def _kept_in(text: str, at: int) -> bool:
    """The value follows a word saying where something is kept ("… est dans 1Password", "steht im Vault2")."""
    words = text[max(0, at - 20) : at].split()
    return bool(words) and words[-1].lower() in _WHERE


def _shown_as_example(text: str, at: int) -> bool:
    """An example word in the 40 characters before `at` on its line."""
    return _AN_EXAMPLE.search(text, max(0, at - 40, text.rfind("\n", 0, at) + 1), at) is not None


# a variable's name or an attribute (`STRIPE_API_KEY`, `var.db_password`, `settings.DB_PASS`)
_NAMED_ELSEWHERE = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+|[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")
PASSPHRASE_LETTERS: Final = 21  # longer than the longest everyday English words (20 letters)


_PASSWORD_MANAGERS: Final = frozenset(
    {"1password", "bitwarden", "vaultwarden", "keepass", "keepassxc", "keepassx", "lastpass", "dashlane", "keeper",
     "nordpass", "protonpass", "enpass"}
)  # fmt: skip
# a particle of a script without spaces glued to the value ("비밀번호는 663YY3JAD?69이고", "… 123abcXYZ です")
_GLUED_PARTICLE = re.compile(r"(?<=[!-~])[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af\u0e00-\u0e7f]+\W*$")


def prose_password(value: str) -> bool:
    """A written-out value that looks like a password: letters and something else, not a placeholder or a
    word, a number, a path or a URL."""
    if value[:1] in ("[", "<", "{") and value[-1:] in ("]", ">", "}"):
        return False  # a section header or a tag (`[distutils]`, `<none>`)
    value = _GLUED_PARTICLE.sub("", value)
    value = _PROSE_WORD_END.sub("", value) if not value.endswith(("!", "?")) or len(value) > 7 else value
    if len(value) < 6 or value.lower() in URL_PASSWORD_PLACEHOLDERS or is_placeholder(value):
        return False
    if "://" in value or value.startswith(("/", "~", "./", "-")) or value.isdigit():
        return False  # a path, a URL, a number, or the command line's next option (`--password --db admin`)
    if value.count("/") >= 2 and NAME_PARTS.fullmatch(value):
        return False  # a path of words: where it is kept (a vault's `secret/prod/db/admin`)
    if value.lower() in _PASSWORD_MANAGERS:
        return False  # where it is kept ("パスワードは1Passwordで共有しています")
    if SHAREABLE.match(value) or _NAMED_ELSEWHERE.fullmatch(value):
        return False  # a reference to where it is kept, or the name of a variable that holds it
    if NAME_PARTS.fullmatch(value) and not any(c.isdigit() for c in value) and not value.isalpha():
        return False  # words joined into a name: a network's or an account's ("Maison_Dupont", "Acme-Staff")
    if not any(c.isalpha() for c in value):
        return False
    if any(c.isalpha() and not (c.isupper() or c.islower()) for c in value):
        return False  # words of a script without letter case (`パスワードは毎月変更します`): a sentence goes on
    if all(c.isalpha() for c in value) and not _mixed_case(value):
        return joined_passphrase(value)  # a word ("the password is forgotten"), unless words run together
    if re.fullmatch(r"[a-z]+-[a-z]+(?:-[a-z]+)*", value):
        return False  # a hyphenated word ("self-service"), not a passphrase with digits
    return entropy(value) >= 2.5
