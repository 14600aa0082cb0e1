"""Credential prefilters: one sample per rule, real-shaped tokens, hiding places, harmless look-alikes.

The fake secrets are generated at run time (see prefilter_helpers), so this file holds no secret-shaped literal;
every sample also checks that no message, reason or exception text echoes any part of the value.
"""

from __future__ import annotations

import base64
import itertools
import json
import string

import pytest
from mnemonic import Mnemonic
from prefilter_helpers import ALNUM, B64, FENCE, RNG, UPPER_DIGITS, assert_no_leak, codes, rand

from agentmd.rules.prefilter import CODES, PrefilterRefused, check_fields, check_text, require_clean

# --------------------------------------------------------------------------------------------------------------
# Secrets: one sample per rule; (code, text, the secret value that must never be echoed)


def _jwt() -> str:
    header = base64.urlsafe_b64encode(b'{"alg":"HS256","typ":"JWT"}').rstrip(b"=").decode()
    payload = base64.urlsafe_b64encode(b'{"sub":"4711","name":"Test"}').rstrip(b"=").decode()
    return f"{header}.{payload}.{rand(43, ALNUM + '-_')}"


def no_echo(value: str, *texts: str) -> None:
    """No piece of the secret in any text: six characters of a token, or two words in a row of a phrase (the words
    of a recovery phrase are everyday words, which a refusal's own sentence may hold one at a time)."""
    words = value.split()
    if len(words) < 12:
        assert_no_leak(value, *texts)
        return
    for text in texts:
        for first, second in itertools.pairwise(words):
            assert f"{first} {second}" not in text, f"phrase words {first!r} {second!r} echoed in {text!r}"


def secret_samples() -> list[tuple[str, str, str]]:
    aws_id = "AKIA" + rand(16, UPPER_DIGITS)
    asia_id = "ASIA" + rand(16, UPPER_DIGITS)
    aws_secret = rand(40, B64)
    ghp = "ghp" + "_" + rand(36)
    gho = "gho" + "_" + rand(36)
    pat = "github" + "_pat_" + rand(22) + "_" + rand(59)
    glpat = "glpat" + "-" + rand(20)
    xoxb = "xoxb" + "-" + rand(12, string.digits) + "-" + rand(13, string.digits) + "-" + rand(24)
    xapp = "xapp" + "-1-A" + rand(10, UPPER_DIGITS) + "-" + rand(13, string.digits) + "-" + rand(64, "0123456789abcdef")
    hook_tail = "T" + rand(8, UPPER_DIGITS) + "/B" + rand(8, UPPER_DIGITS) + "/" + rand(24)
    gcp_key = "AIza" + rand(35, ALNUM + "_-")
    azure_account = rand(86, B64) + "=="
    azure_client = rand(3) + "8Q" + "~" + rand(34, ALNUM + "_-.")
    stripe = "sk" + "_live_" + rand(24)
    openai = "sk" + "-proj-" + rand(48, ALNUM + "_-")
    anthropic = "sk" + "-ant-api03-" + rand(93, ALNUM + "_-")
    pem_body = rand(64, B64)
    jwt = _jwt()
    generic = rand(32)
    password = "Tr0ub4" + rand(6, ALNUM) + "&3x"
    url_password = rand(14)
    sa_private = rand(40, B64)
    return [
        ("secret:aws-access-key", f"Deploy user key: {aws_id}", aws_id),
        ("secret:aws-access-key", f"session key {asia_id} expires hourly", asia_id),
        ("secret:aws-secret-key", f"aws_secret_access_key = {aws_secret}", aws_secret),
        ("secret:aws-secret-key", f"The AWS secret for the deploy user is {aws_secret}.", aws_secret),
        (
            "secret:gcp-service-account",
            json.dumps(
                {
                    "type": "service" + "_account",
                    "project_id": "demo",
                    "private_key_id": rand(40, "0123456789abcdef"),
                    "private_key": "-----BEGIN PRIVATE KEY-----\\n" + sa_private + "\\n-----END PRIVATE KEY-----\\n",
                }
            ),
            sa_private,
        ),
        ("secret:gcp-api-key", f"maps key {gcp_key}", gcp_key),
        (
            "secret:azure-key",
            f"DefaultEndpointsProtocol=https;AccountName=demo;AccountKey={azure_account};EndpointSuffix=core.windows.net",
            azure_account,
        ),
        ("secret:azure-key", f"client secret: {azure_client}", azure_client),
        ("secret:github-token", f"export GH_TOKEN={ghp}", ghp),
        ("secret:github-token", f"oauth {gho}", gho),
        ("secret:github-token", f"fine-grained {pat}", pat),
        ("secret:gitlab-token", f"ci token {glpat}", glpat),
        ("secret:slack-token", f"bot token {xoxb}", xoxb),
        ("secret:slack-token", f"app token {xapp}", xapp),
        ("secret:slack-webhook", "post to https://hooks.slack.com/services/" + hook_tail, hook_tail),
        ("secret:stripe-key", f"STRIPE={stripe}", stripe),
        ("secret:openai-key", f"OPENAI_API_KEY={openai}", openai),
        ("secret:anthropic-key", f"key {anthropic}", anthropic),
        (
            "secret:private-key",
            f"-----BEGIN RSA PRIVATE KEY-----\n{pem_body}\n{pem_body}\n-----END RSA PRIVATE KEY-----",
            pem_body,
        ),
        (
            "secret:private-key",
            f"-----BEGIN OPENSSH PRIVATE KEY-----\n{pem_body}\n-----END OPENSSH PRIVATE KEY-----",
            pem_body,
        ),
        ("secret:jwt", f"Authorization cookie: {jwt}", jwt),
        ("secret:generic-assignment", f"API_KEY={generic}", generic),
        ("secret:generic-assignment", f'{{"client_secret": "{generic}"}}', generic),
        ("secret:generic-assignment", f"clientSecret: '{generic}'", generic),
        ("secret:generic-assignment", f"DB_PASSWORD={password}", password),
        ("secret:generic-assignment", f"Authorization: Bearer {generic}", generic),
        ("secret:url-credentials", f"postgres://app:{url_password}@db.internal:5432/app", url_password),
        *vendor_samples(),
    ]


def vendor_samples() -> list[tuple[str, str, str]]:
    hexs = "0123456789abcdef"
    npm = "npm" + "_" + rand(36)
    pypi = "pypi" + "-AgEIcHlwaS5vcmc" + rand(60, ALNUM + "-_")
    hf = "hf" + "_" + rand(34, ALNUM)
    sendgrid = "SG" + "." + rand(22, ALNUM + "-_") + "." + rand(43, ALNUM + "-_")
    twilio = "SK" + rand(32, hexs)
    digitalocean = "dop" + "_v1_" + rand(64, hexs)
    shopify = "shpat" + "_" + rand(32, hexs)
    discord = "M" + rand(23, ALNUM) + "." + rand(6, ALNUM + "-_") + "." + rand(27, ALNUM + "-_")
    telegram = "5" + rand(8, string.digits) + ":AA" + rand(33, ALNUM + "-_")
    mailgun = "key" + "-" + rand(32, hexs)
    databricks = "dapi" + rand(32, hexs)
    basic = base64.b64encode(("deploy:" + rand(14)).encode()).decode()
    linear = "lin" + "_api_" + rand(40)
    password = "hunter" + rand(3, string.digits) + "!" + rand(3, ALNUM)
    return [
        ("secret:npm-token", f"//registry.npmjs.org/:_authToken={npm}", npm),
        ("secret:pypi-token", f"upload with {pypi}", pypi),
        ("secret:huggingface-token", f"HF login {hf}", hf),
        ("secret:sendgrid-key", f"mail key {sendgrid}", sendgrid),
        ("secret:twilio-key", f"twilio {twilio}", twilio),
        ("secret:digitalocean-token", f"doctl auth init -t {digitalocean}", digitalocean),
        ("secret:shopify-token", f"store token {shopify}", shopify),
        ("secret:discord-token", f"bot {discord}", discord),
        ("secret:telegram-token", f"bot {telegram}", telegram),
        ("secret:mailgun-key", f"api:{mailgun}", mailgun),
        ("secret:databricks-token", f"workspace token {databricks}", databricks),
        ("secret:basic-auth", f"Authorization: Basic {basic}", basic),
        ("secret:service-token", f"linear {linear}", linear),
        ("secret:password", f"The staging password is {password} for now.", password),
        *more_samples(),
    ]


def more_samples() -> list[tuple[str, str, str]]:
    """Shapes a fresh payload round found passing: command-line passwords, passwords in prose in other languages,
    signed URLs, tokens in a URL's user part, registry auth entries, session cookies, more vendor prefixes."""
    hexs = "0123456789abcdef"
    password = rand(9) + "%" + rand(2, string.digits)
    sig = rand(43, B64)
    dsn_key = rand(32, hexs)
    docker_auth = base64.b64encode(("ci:" + rand(16)).encode()).decode()
    cookie = rand(32)
    vault = "hvs" + "." + rand(90, ALNUM + "-_")
    alibaba = "LTAI" + rand(20)
    putty = "AAAAI" + rand(43, B64)
    bearer = rand(32)
    azure_secret = rand(3) + "8Q~" + rand(38, ALNUM + "_~.-")
    seed = " ".join(RNG.choice(Mnemonic("english").wordlist) for _ in range(12))
    lower_digits = string.ascii_lowercase + string.digits
    codes_list = "\n".join(f"{rand(5, lower_digits)}-{rand(5, string.digits)}" for _ in range(8))
    return [
        ("secret:password", f"sshpass -p '{password}' ssh deploy@10.0.4.12", password),
        ("secret:password", f"mysql -u root -p{password} -h db.internal", password),
        ("secret:password", f"PGPASSWORD={password} psql -h db", password),
        ("secret:password", f"La contraseña del servidor es {password}, no la compartas.", password),
        ("secret:password", f"Het wachtwoord van de router is {password}.", password),
        ("secret:password", f'sqlcmd -S db01 -U sa -P {password} -Q "select 1"', password),
        ("secret:password", f"keytool -list -keystore app.jks -storepass {password}", password),
        ("secret:password", f'ldapsearch -x -D "cn=admin,dc=corp" -w {password} -b dc=corp', password),
        ("secret:password", f"openssl pkcs12 -export -in a.pem -out a.p12 -passout pass:{password}", password),
        ("secret:password", f'<property name="db.password" value="{password}"/>', password),
        ("secret:password", f"For the staging db, set the root password to {password} until Friday.", password),
        ("secret:password", f"az login -u ops@corp.example -p '{password}'", password),
        ("secret:password", f"net use \\\\fs01\\backup /user:CORP\\svc_backup {password}", password),
        ("secret:password", f"smbclient //fs01/share -U svc%{password}", password),
        ("secret:password", f"Password of the production database server: {password}", password),
        ("secret:password", f"Contraseña de la base de datos de producción: {password}", password),
        (
            "secret:private-key",
            "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: ci\nPublic-Lines: 1\n"
            f"AAAAC3NzaC1lZDI1NTE5AAAAI{rand(20)}\nPrivate-Lines: 1\n{putty}\nPrivate-MAC: {rand(64, hexs)}",
            putty,
        ),
        ("secret:azure-key", f"https://acct.blob.core.windows.net/c?sv=2022-11-02&sp=r&sig={sig}%3D", sig),
        ("secret:url-credentials", f"SENTRY_DSN=https://{dsn_key}@o12345.ingest.sentry.io/678", dsn_key),
        ("secret:url-credentials", f"redis://:{password}@cache.internal:6379/0", password),
        ("secret:basic-auth", f'{{"auths": {{"registry.example.io": {{"auth": "{docker_auth}"}}}}}}', docker_auth),
        ("secret:service-token", f"Cookie: sessionid={cookie}; theme=dark", cookie),
        ("secret:service-token", f"VAULT_TOKEN={vault}", vault),
        ("secret:service-token", f"ALIBABA_CLOUD_ACCESS_KEY_ID={alibaba}", alibaba),
        ("secret:seed-phrase", f"Wallet recovery phrase: {seed}", seed),
        ("secret:recovery-codes", f"Backup codes for the admin account:\n{codes_list}", codes_list.split()[0]),
        ("secret:generic-assignment", f"Call the staging API with Bearer {bearer} until Friday.", bearer),
        ("secret:generic-assignment", f"Authorization: Token {bearer}", bearer),
        ("secret:generic-assignment", f"The API token for the staging cluster: {bearer}", bearer),
        ("secret:azure-key", f"app registration, value {azure_secret}", azure_secret),
    ]


SECRET_SAMPLES = secret_samples()


@pytest.mark.parametrize(
    ("code", "text", "value"), SECRET_SAMPLES, ids=[f"{c}-{i}" for i, (c, _, _) in enumerate(SECRET_SAMPLES)]
)
def test_secret_is_found_and_never_echoed(code: str, text: str, value: str) -> None:
    findings = check_text(text)
    assert code in {f.code for f in findings}, findings
    for f in findings:
        assert f.line == 1 or code == "secret:private-key"
        assert "secret" in f.message.lower() and "remove" in f.message.lower()
        no_echo(value, f.message, f.field)
    verdict = check_fields({"title": "deploy notes", "body": text})
    assert not verdict.ok
    no_echo(value, verdict.reason(), repr(verdict))
    with pytest.raises(PrefilterRefused) as err:
        require_clean({"body": text})
    no_echo(value, str(err.value))


def _pem() -> str:
    body = base64.b64encode(bytes(RNG.getrandbits(8) for _ in range(600))).decode()
    lines = "\n".join(body[i : i + 64] for i in range(0, len(body), 64))
    return f"-----BEGIN PRIVATE KEY-----\n{lines}\n-----END PRIVATE KEY-----"


def _pure(n: int, alphabet: str = ALNUM) -> str:
    """Random characters with no guarantee of mixing classes, as real tokens are."""
    return "".join(RNG.choice(alphabet) for _ in range(n))


TOKEN_MAKERS = {
    "secret:aws-access-key": lambda: "AKIA" + _pure(16, UPPER_DIGITS),
    "secret:github-token": lambda: "ghp" + "_" + _pure(36),
    "secret:gitlab-token": lambda: "glpat" + "-" + _pure(20, ALNUM + "_-"),
    "secret:slack-token": lambda: "xoxb" + "-" + _pure(12, string.digits) + "-" + _pure(13, string.digits) + "-"
    + _pure(24),
    "secret:stripe-key": lambda: "sk" + "_live_" + _pure(24),
    "secret:gcp-api-key": lambda: "AIza" + _pure(35, ALNUM + "_-"),
    "secret:openai-key": lambda: "sk" + "-proj-" + _pure(48, ALNUM + "_-"),
    "secret:anthropic-key": lambda: "sk" + "-ant-api03-" + _pure(93, ALNUM + "_-"),
    "secret:private-key": _pem,
    "secret:jwt": _jwt,
}  # fmt: skip


@pytest.mark.parametrize("code", sorted(TOKEN_MAKERS))
def test_every_real_shaped_token_is_refused(code: str) -> None:
    """The prefixed shapes are deterministic: 300 random tokens each, all refused, in prose and in code."""
    for n in range(300):
        value = TOKEN_MAKERS[code]()
        text = f"note {n}: {value} end" if n % 2 else f"{FENCE}\n{value}\n{FENCE}\n"
        assert code in codes(text), value


def test_a_vendors_documented_example_key_passes_and_a_real_shaped_one_does_not() -> None:
    # AWS's documentation writes its example credentials with EXAMPLE in capitals, as scanners' docs quote them
    assert codes("use AKIA" + "IOSFODNN7" + "EXAMPLE from the AWS docs") == set()
    assert codes("secret: wJalrXUtnFEMI/K7MDENG/bPxRfiCY" + "EXAMPLEKEY") == set()
    # the same shape with other letters where EXAMPLE stood is a key
    assert "secret:aws-access-key" in codes("use AKIA" + "IOSFODNN7" + "EXQMPLE from the AWS docs")


@pytest.mark.parametrize("where", ["body", "frontmatter", "fence", "split", "urlencoded", "tag"])
def test_secret_is_found_wherever_it_hides(where: str) -> None:
    token = "ghp" + "_" + rand(36)
    if where == "body":
        verdict = check_fields({"body": f"The token is {token} for now."})
    elif where == "frontmatter":
        verdict = check_fields({"body": f"---\ntitle: x\nsource_token: {token}\n---\nbody\n"})
    elif where == "fence":
        verdict = check_fields({"body": f"Setup:\n\n{FENCE}bash\nexport GITHUB_TOKEN={token}\n{FENCE}\n"})
    elif where == "split":
        verdict = check_fields({"body": f"token:\n{token[:20]}\n{token[20:]}\n"})
    elif where == "urlencoded":
        verdict = check_fields({"source_url": "https://example.test/?t=" + token.replace("_", "%5F")})
    else:
        verdict = check_fields({"tags": ["ok", token]})
    assert "secret:github-token" in verdict.codes(), verdict
    assert_no_leak(token, verdict.reason(), *(f.message for f in verdict.findings))


def test_split_secret_reports_the_line_it_starts_on() -> None:
    token = "ghp" + "_" + rand(36)
    findings = check_text(f"intro\n\n{token[:18]}\n   {token[18:]}\n")
    assert [(f.code, f.line) for f in findings] == [("secret:github-token", 3)]
    assert "split across lines" in findings[0].message


@pytest.mark.parametrize(
    "text",
    [
        "The AWS docs key looks like AKIA followed by sixteen characters.",
        "Set API_KEY=<your-api-key> in .env before starting.",
        "token: ${GITHUB_TOKEN}",
        "password: changeme",
        "password = os.environ['DB_PASSWORD']",
        "api_key = settings.openai_api_key",
        "secret_key: xxxxxxxxxxxxxxxxxxxxxxxx",
        "A JWT is `header.payload.signature`, e.g. eyJhbGciOi...<payload>.<signature>",
        "Deployed commit 3f786850e387550fdab836ed7e6dc881de23001b to the aws staging account.",
        "commit: 3f786850e387550fdab836ed7e6dc881de23001b",
        "key: 2f1e6c1a-7b3d-4b8e-9a1c-2d3e4f5a6b7c",
        "The primary key: user_id_2023_migration_table",
        "-----BEGIN RSA PRIVATE KEY-----\n...\n-----END RSA PRIVATE KEY-----",
        "-----BEGIN OPENSSH PRIVATE KEY-----\n<paste your key here>\n-----END OPENSSH PRIVATE KEY-----",
        "integrity: sha512-" + "Zk3Qm9Lp2Xv7Bn4Rt8Yw1Hc6Jd0Fg5Ks3Ua9Ee2T",
        "postgres://user:password@localhost/db and mysql://root:root@127.0.0.1/app",
        "max_tokens: 128000",
        "public_key: ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGz",
        "password_min_length: 12",
        "SLACK_TOKEN=xoxb-your-token-here",
        "ghp" + "_" + "x" * 36,
        "Use an OpenAI key (sk-...) from the vault.",
        "uuid = 123e4567-e89b-12d3-a456-426614174000",
        "cache_key = f'{user_id}:{page}:v2'",
        "key=value pairs are split on the first '='.",
        "token=abc",
        "sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        "http://localhost:8080@proxy",
        "Run `gh auth login`; the token lives in the macOS keychain.",
        "ghp_ prefixes identify GitHub personal access tokens; our scanner checks for them.",
        "mysql -u root -p -h db.internal  # prompts for the password",
        'sshpass -p "$SSH_PASSWORD" ssh deploy@host',
        # the examples of database images' documentation: lowercase words that call themselves a secret
        "docker run -e MYSQL_ROOT_PASSWORD=my-secret-pw -d mysql:latest",
        "docker run -e POSTGRES_PASSWORD=mysecretpassword -d postgres",
        '<property name="db.password" value="${DB_PASSWORD}"/>',
        'sqlcmd -S db01 -p -Q "select 1"',
        "Set the password to something long; reset the admin password to a random value.",
        "Remember to change your password to a passphrase of at least 16 characters.",
        "net use Z: \\\\fs01\\share /user:CORP\\alice",
        "smbclient //fs01/share -U alice",
        "PuTTYgen writes a file that starts with `PuTTY-User-Key-File-3:` and holds `Private-Lines:` then the key.",
        "The password for the shared drive on the third floor: ask Maria.",
        "Password policy for all of our production database servers: 16 characters minimum.",
        # a sentence in a script without letter case goes on after "the password is"
        "パスワードは毎月変更します。",
        "パスワードは1Passwordで共有しています。",
        "La contraseña debe tener al menos doce caracteres.",
        "Cookie: theme=dark; lang=en",
        "https://example.com/download?sig=abc&v=2",
        # HTTP Basic's documented example pair (RFC 7617), and header shapes without a value
        "Per RFC 7617 the client sends `Authorization: Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==`.",
        "The header looks like Authorization: Bearer <token>; see RFC 6750, section 2.1.",
        "Send Authorization: Bearer $GITHUB_TOKEN with every request.",
        "Authorization: Bearer ${{ secrets.DEPLOY_TOKEN_2024_PRODUCTION }}",
    ],
)
def test_secret_shaped_but_harmless_text_passes(text: str) -> None:
    assert not {c for c in codes(text) if c.startswith("secret:")}, check_text(text)


def test_every_secret_code_has_a_positive_case() -> None:
    assert {code for code, _, _ in SECRET_SAMPLES} == {code for code in CODES if code.startswith("secret:")}


# --------------------------------------------------------------------------------------------------------------
# Round 4: hex tokens, framework secret keys, short Square tokens, passwords after CJK and Russian prepositions


def _hex(n: int) -> str:
    return rand(n, "0123456789abcdef")


@pytest.mark.parametrize("key", ["TWILIO_AUTH_TOKEN", "DD_API_KEY", "mailchimp_api_key", "webhookSecret"])
def test_a_hex_token_under_a_secret_name_is_refused(key: str) -> None:
    value = _hex(32)
    findings = check_text(f"{key}={value}")
    assert "secret:generic-assignment" in {f.code for f in findings}
    assert_no_leak(value, *(f.message for f in findings))


@pytest.mark.parametrize("line", ["commit: {h}", "checksum = {h}", "etag: {h}", "sha256: {h}"])
def test_a_hex_digest_under_an_ordinary_name_passes(line: str) -> None:
    assert not {c for c in codes(line.format(h=_hex(40))) if c.startswith("secret")}


def test_a_framework_secret_key_with_signs_is_refused() -> None:
    value = rand(20, ALNUM) + "(!%^&*-=+)#@" + rand(18, ALNUM)
    findings = check_text(f"SECRET_KEY = '@{value}'")
    assert "secret:generic-assignment" in {f.code for f in findings}
    assert_no_leak(value, *(f.message for f in findings))


def test_a_short_square_token_is_refused() -> None:
    assert "secret:service-token" in codes("square: sq0atp-" + rand(22, ALNUM + "-_"))


@pytest.mark.parametrize("text", ["Пароль от почты: {pw}", "邮箱密码：{pw}", "Das WLAN-Passwort ist {mixed}"])
def test_passwords_in_prose_after_more_words_are_refused(text: str) -> None:
    mixed = "Hu" + "ahCT" + "CwtIzv"
    value = text.format(pw=rand(12), mixed=mixed)
    assert "secret:password" in codes(value), value


@pytest.mark.parametrize(
    "text",
    [
        "the password is forgotten again",
        "Пароль от почты: забыла",
        "password: iPhone",
        "the password is internationalization, as usual",  # a long word is still a word
        "password: incomprehensible",
    ],
)
def test_words_after_a_password_word_pass(text: str) -> None:
    assert not {c for c in codes(text) if c.startswith("secret")}, text


@pytest.mark.parametrize(
    "text",
    [
        "the wifi password is correcthorsebatterystaple",
        "password=correcthorsebatterystaple",
        "PASSPHRASE: CORRECTHORSEBATTERYSTAPLE",
    ],
)
def test_a_passphrase_of_words_run_together_is_a_secret(text: str) -> None:
    assert {c for c in codes(text) if c.startswith("secret")}, text


def test_a_discord_webhook_address_is_refused_and_its_shape_passes() -> None:
    webhook = "https://discord.com/api/webhooks/" + rand(18, "0123456789") + "/" + rand(68, ALNUM + "_-")
    assert "secret:discord-token" in codes(f"alerts go to {webhook}")
    shape = "https://discord.com/api/webhooks/" + "1" * 18 + "/" + "x" * 68
    assert not {c for c in codes(f"the address looks like {shape}") if c.startswith("secret")}


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("<password>{pw}</password>", "secret:password"),  # an XML configuration's element
        ('<add key="ApiKey" value="{tok}" />', "secret:password"),  # a .NET app.config entry
        ("docker login -u ci -p {pw} registry.example.io", "secret:password"),
        ("mysql -u root -p{pw} app", "secret:password"),  # no space: with one, mysql asks for it
        ("redis-cli -h cache -a {pw}", "secret:password"),
        ("the prod api key is {tok}", "secret:generic-assignment"),
        ('<db:password type="clear">{pw}</db:password>', "secret:password"),
        ("skopeo login -u ci -p {pw} quay.io", "secret:password"),
    ],
)
def test_passwords_in_configuration_elements_command_lines_and_prose_are_refused(text: str, code: str) -> None:
    value = text.format(pw="Hu" + "ahCT" + "Cwt1zv", tok=rand(32))
    assert code in codes(value), value


@pytest.mark.parametrize(
    "text",
    [
        "<password>${DB_PASSWORD}</password>",
        "docker login -u ci --password-stdin registry.example.io",
        "docker login -u ci -p $CI_REGISTRY_PASSWORD",
        "mysql -u root -p production_db",  # -p with a space asks for the password; the next word is the database
        "docker compose -p myproject up -d",
        "docker run -p 8080:80 nginx",
        "the api key is stored in the team's password manager",
        "The secret is that nobody reads the docs.",
        "psql -U postgres --password inventory_production",  # --password asks for it
        "mongosh --password --authenticationDatabase admin",
        '<add key="PasswordPolicyRegex" value="^(?=.*[A-Z]).{12,}$"/>',
        "<token>required</token> <secret>enabled</secret> <password>stored-in-keystore</password>",
        "<password>#{DbPassword}</password> <password>{DESede}aGVsbG8gd29ybGQ=</password>",
    ],
)
def test_command_flags_and_sentences_that_hold_no_password_pass(text: str) -> None:
    assert not {c for c in codes(text) if c.startswith("secret")}, text


# --------------------------------------------------------------------------------------------------------------
# A wallet's recovery phrase: twelve or more words of one BIP-39 list, however they are numbered or spaced


@pytest.mark.parametrize("language", ["english", "spanish", "french", "italian", "czech", "japanese", "korean"])
@pytest.mark.parametrize("count", [12, 24])
def test_a_recovery_phrase_is_refused_in_any_list_and_layout(language: str, count: int) -> None:
    words = [RNG.choice(Mnemonic(language).wordlist) for _ in range(count)]
    space = "\u3000" if language == "japanese" else " "
    layouts = [
        space.join(words),
        "\n".join(f"{n}. {w}" for n, w in enumerate(words, 1)),
        ", ".join(words),
        "| # | word |\n|---|---|\n" + "\n".join(f"| {n} | {w} |" for n, w in enumerate(words, 1)),
    ]
    for layout in layouts:
        text = f"Backup of the hardware wallet ->\n\n{layout}\n"
        findings = [f for f in check_text(text) if f.code == "secret:seed-phrase"]
        assert len(findings) == 1, (language, layout)
        first = next(n for n, line in enumerate(text.split("\n"), 1) if words[0] in line)
        assert findings[0].line == first
        no_echo(" ".join(words), findings[0].message)


@pytest.mark.parametrize(
    "text",
    [
        # eleven words of the list: shorter than any phrase
        " ".join(Mnemonic("english").wordlist[:11]),
        # prose made of the list's words but for the short words every sentence has
        "We found that this year the market was about to absorb the abstract idea of a simple wallet and "
        "the whole team agreed to buy a useful machine for the office before winter arrives again.",
        # one word of the list over and over (a filler body): a phrase drawn at random hardly repeats a word
        "word " * 400,
        # a glossary of twelve words, one of them not in the list
        "abandon ability able about above absent absorb abstract absurd abuse access zebras",
    ],
)
def test_words_of_the_list_in_prose_or_short_runs_pass(text: str) -> None:
    assert "secret:seed-phrase" not in codes(text)


# --------------------------------------------------------------------------------------------------------------
# A random value that the words before it name a credential, in prose and in any language


@pytest.mark.parametrize(
    "template",
    [
        "Page access token (never expires) for the shop page:\n{v}",
        "Azure DevOps PAT für die Pipeline-Agenten: {v} — Ablauf 30 Tage.",
        'sentry-cli releases new "$VERSION" --auth-token {v}',
        "Ключ API облака для распознавания речи: {v}",
        "Mollie betaal-API sleutel (live, webshop): {v}",
        "wandb login {h}",
        "plaid:\n  client_id: 6a500ae47345edad4953ea1c\n  secret: {h30}\n  env: production",
        "X API v2 bearer token for the mentions bot:\nAAAAAAAAAAAAAAAAAAAAA{v}",
    ],
)
def test_a_random_value_its_label_names_a_credential_is_refused(template: str) -> None:
    value, hex_value, hex30 = rand(40, ALNUM), _hex(40), _hex(28) + "a1"
    text = template.format(v=value, h=hex_value, h30=hex30)
    findings = [f for f in check_text(text) if f.code.startswith("secret:")]
    assert findings, text
    assert_no_leak(value if "{v}" in template else hex_value if "{h}" in template else hex30,
                   *(f.message for f in findings))  # fmt: skip


@pytest.mark.parametrize(
    "template",
    [
        "Key takeaway of the incident review: see {h}",  # "key" that does not stand next to the value
        "Deploy key fingerprint: {v}",
        "The token was rotated in commit {h}.",
        "Public key of the signing service:\n{v}",
        "Authorization: Bearer ${{{{ secrets.DEPLOY_TOKEN_2024_PRODUCTION }}}}",
        "Session key: 2f1e6c1a-7b3d-4b8e-9a1c-2d3e4f5a6b7c",  # an identifier, under a word that names one only nearby
        "CTF write-up: the flag was base64 in the cookie: ZmxhZ3tuMGtfMG5seX0= decodes to a flag.",
        "API keys are kept in the vault under release-notes-2024-q3-production-keys.",
    ],
)
def test_a_value_its_label_does_not_name_a_secret_passes(template: str) -> None:
    text = template.format(v=rand(40, ALNUM), h=_hex(40))
    assert not {c for c in codes(text) if c.startswith("secret:")}, check_text(text)


def test_a_json_web_key_with_its_private_part_is_refused_and_a_public_one_passes() -> None:
    public = {"kty": "EC", "crv": "P-256", "kid": "k1", "x": rand(43, ALNUM + "-_"), "y": rand(43, ALNUM + "-_")}
    private = {**public, "d": rand(43, ALNUM + "-_")}
    assert "secret:private-key" in codes(json.dumps(private))
    assert not {c for c in codes(json.dumps(public)) if c.startswith("secret:")}


def test_a_hubspot_private_app_token_is_refused() -> None:
    token = f"pat-eu1-{_hex(8)}-{_hex(4)}-{_hex(4)}-{_hex(4)}-{_hex(12)}"
    assert "secret:service-token" in codes(f'HubSpot private app "crm-sync": {token}')


def test_the_sample_token_of_jwt_io_passes() -> None:
    sample = (
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIy"
        "fQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
    )
    text = f"The jwt.io sample token:\n{sample}\nSigned with their demo secret."
    assert not {c for c in codes(text) if c.startswith("secret:")}
    assert "secret:jwt" in codes(sample.replace("SflKx", "Qm3x9"))


def test_a_key_named_by_what_it_is_for_is_refused() -> None:
    value = rand(20, ALNUM + "+-")
    assert "secret:generic-assignment" in codes(f"PagerDuty REST key for the on-call sync script: {value}")
    assert not {c for c in codes(f"Key takeaway for the on-call rota: {_hex(8)}") if c.startswith("secret:")}


def test_a_teams_webhook_address_is_refused() -> None:
    url = (
        f"https://acme.webhook.office.com/webhookb2/{_hex(8)}-{_hex(4)}-{_hex(4)}-{_hex(4)}-{_hex(12)}@"
        f"{_hex(8)}-{_hex(4)}-{_hex(4)}-{_hex(4)}-{_hex(12)}/IncomingWebhook/{_hex(32)}/{_hex(8)}-{_hex(4)}"
    )
    assert "secret:slack-webhook" in codes(f"Teams incoming webhook for #deployments:\n{url}")


def test_a_sealed_secrets_ciphertext_passes_and_a_plain_secret_beside_it_does_not() -> None:
    sealed = (
        "apiVersion: bitnami.com/v1alpha1\nkind: SealedSecret\nmetadata:\n  name: api-keys\nspec:\n"
        f"  encryptedData:\n    STRIPE_SECRET_KEY: Ag{rand(300, B64)}\n    DB_PASSWORD: Ag{rand(200, B64)}\n"
        "  template:\n    metadata:\n      name: api-keys\n"
    )
    assert not {c for c in codes(sealed) if c.startswith("secret:")}
    assert "secret:generic-assignment" in codes(sealed + f"stringData:\n  STRIPE_SECRET_KEY: {rand(40, ALNUM)}\n")


def test_a_secret_managers_path_after_a_password_word_passes() -> None:
    text = "Das Passwort für den Datenbank-Admin steht im Vault unter secret/prod/db/admin. Bitte nicht kopieren."
    assert not {c for c in codes(text) if c.startswith("secret:")}


def test_a_recovery_phrase_under_a_chinese_label_on_the_next_line_is_refused() -> None:
    words = " ".join(Mnemonic("english").generate(128).split())
    assert "secret:seed-phrase" in codes(f"钱包助记词（千万别丢）：\n{words}")
