"""Secrets as people pass them on by hand: codes read out in groups, recovery-code lists, keys as lists of bytes,
a password in the chat message after the one that asks for it, inflected and compound words for a password, and
values in guillemets. Each with the honest look-alike beside it that must pass.

The values are generated at run time (see prefilter_helpers); no refusal may echo them.
"""

from __future__ import annotations

import random
import string

from prefilter_helpers import ALNUM, RNG, assert_no_leak, codes, rand

from agentmd.rules.prefilter import check_text

BASE32 = string.ascii_uppercase + "234567"
LOWER_DIGITS = string.ascii_lowercase + string.digits


def secret_codes(text: str) -> set[str]:
    return {c for c in codes(text) if c.startswith("secret:")}


def refused_without_echo(text: str, value: str) -> set[str]:
    findings = check_text(text)
    assert_no_leak(value, *(f.message for f in findings))
    return {f.code for f in findings if f.code.startswith("secret:")}


def _grouped(groups: int = 8, size: int = 4) -> str:
    while True:
        value = " ".join(rand(size, BASE32) for _ in range(groups))
        if any(c.isdigit() for c in value):
            return value


def test_a_2fa_seed_read_out_in_groups_is_refused_after_a_long_label() -> None:
    seed = _grouped()
    text = f"Clé secrète 2FA du compte OVH partagé (à saisir dans l'application d'authentification) : {seed}"
    assert refused_without_echo(text, seed.replace(" ", ""))
    assert refused_without_echo(f"TOTP secret for the shared admin account: {seed.lower()}", seed.lower())


def test_groups_of_words_or_mixed_lengths_after_a_credential_word_pass() -> None:
    assert not secret_codes("Token ring notes: ring wire card port hubs cost much")
    assert not secret_codes("API key rotation plan: Q1 2025 review with SRE team and SEC ops")
    assert not secret_codes("Secret Santa list: ANNA 2B BOB4 CARL DAVE1 ERIK")


def test_a_list_of_recovery_codes_under_its_heading_is_refused() -> None:
    items = [f"{rand(5, LOWER_DIGITS)}-{rand(5, LOWER_DIGITS)}" for _ in range(8)]
    text = "GitHub recovery codes (org owner account)\n" + "\n".join(items)
    assert "secret:recovery-codes" in refused_without_echo(text, items[0])
    pairs = [f"- {RNG.randint(1000, 9999)} {RNG.randint(1000, 9999)}" for _ in range(5)]
    google = "Backup-Codes Google:\n\n" + "\n".join(pairs)
    assert "secret:recovery-codes" in secret_codes(google)


def test_lists_under_a_recovery_heading_that_are_not_codes_pass() -> None:
    steps = "Recovery codes: where they live\n- printed copy\n- safe at home\n- password manager entry"
    assert not secret_codes(steps)
    stand_in = "Backup codes (example)\nxxxxx-xxxxx\nxxxxx-xxxxx\nxxxxx-xxxxx"
    assert not secret_codes(stand_in)
    assert not secret_codes("Release 4.2 recovery codes path\nv4.2.0\nv4.2.1\nv4.2.2")


def test_a_key_written_as_a_list_of_bytes_is_refused_only_beside_a_key_name() -> None:
    values = ",".join(str(random.Random(7).randint(0, 255) ^ i) for i in range(64))
    assert "secret:private-key" in refused_without_echo(f"~/.config/solana/id.json\n[{values}]", values[:20])
    assert "secret:private-key" in secret_codes(f"let signing_key: [u8; 64] = [{values}];")
    assert not secret_codes(f"Daily step counts for March:\n[{values}]")
    zeros = ",".join(["0"] * 64)
    assert not secret_codes(f"Keypair placeholder: [{zeros}]")


def test_a_password_sent_in_the_next_chat_message_is_refused() -> None:
    value = rand(9, ALNUM) + "+30"
    text = (
        "[09:14] Lukas: Kannst du mir kurz das Passwort für die Staging-DB schicken?\n"
        f"[09:15] Sophie: klar: {value}\n[09:15] Sophie: User ist staging_rw"
    )
    assert "secret:password" in refused_without_echo(text, value)


def test_the_next_message_after_a_password_word_that_is_no_password_passes() -> None:
    for reply in ("Bob: see INC-20431", "Bob: 3f9a2b1c", "REDIS_URL=redis://localhost:6379/0", "Bob: sounds good!"):
        assert not secret_codes(f"Alice: which commit changed the password form?\n{reply}"), reply
    assert not secret_codes("Bob: is the password policy doc up to date?\nAlice: v2.3.1-rc4")


def test_inflected_and_compound_password_words_are_read() -> None:
    value = rand(10, ALNUM) + "!48"
    assert "secret:password" in refused_without_echo(f"BIOS-lösenordet på laptopen är {value} och inget annat.", value)
    assert "secret:password" in secret_codes(f"Das Datenbankpasswort lautet {value}")
    assert "secret:password" in secret_codes(f"Wifipassordet er {value}")
    assert "secret:password" in secret_codes(f"mot de passe VNC {value}")
    assert not secret_codes("Lösenordet är bytt och ligger i Bitwarden.")


def test_a_password_in_guillemets_or_corner_quotes_is_refused() -> None:
    value = rand(9, ALNUM) + "!51"
    text = f"Le mot de passe du wifi invités est « {value} » et voilà."
    assert "secret:password" in refused_without_echo(text, value)
    assert "secret:password" in secret_codes(f"Das Passwort lautet „{value}“.")
    assert "secret:password" in secret_codes(f"パスワードは「{value}」です")
    assert not secret_codes("Le mot de passe est « oublié » comme d'habitude.")


def test_a_recovery_phrase_of_generated_words_over_several_lines_is_refused() -> None:
    rows = [" ".join(rand(RNG.randint(4, 7), LOWER_DIGITS) for _ in range(8)) for _ in range(3)]
    text = "Ledger recovery phrase (24 words), wrote it here temporarily:\n" + "\n".join(rows)
    assert "secret:seed-phrase" in secret_codes(text)
    prose = "Seed phrase: kept on steel plates\nin two places\nfar apart since the move in 2021"
    assert not secret_codes(prose)


def test_a_pin_or_a_door_code_after_its_name_is_refused() -> None:
    pin = str(RNG.randint(100000, 999999))
    assert "secret:password" in refused_without_echo(f"Unser Türcode fürs Treppenhaus ist {pin}, danach Raute.", pin)
    assert "secret:password" in secret_codes(f"Neue Firmen-SIM\nPIN: {pin[:4]}\nPUK: {pin}{pin[:2]}")
    assert "secret:password" in secret_codes(f"Kod do sejfu w pokoju księgowości: {pin[:4]}-{pin[4:]}")
    spaced = " – ".join(pin[:4])
    assert "secret:password" in secret_codes(f"hey, the garage keypad code is {spaced}, then press enter")


def test_numbers_after_pin_and_code_words_that_open_nothing_pass() -> None:
    for text in ("GPIO PIN 13 drives the LED", "error code 5003 again", "the door code changed in 2024",
                 "PIN: 1234 is what the manual shows", "zip code 10115", "Pin numpy to 1.26.4"):  # fmt: skip
        assert not secret_codes(text), text


def test_a_secret_passed_to_a_call_in_code_is_refused() -> None:
    value = rand(16, ALNUM)
    assert "secret:password" in refused_without_echo(f'Client.builder()\n  .apiSecret("{value}")\n  .build();', value)
    jdbc = f'DriverManager.getConnection(\n  "jdbc:mysql://erp-db.internal:3306/erp",\n  "erp_app",\n  "{value}");'
    assert "secret:password" in secret_codes(jdbc)
    assert "secret:password" in secret_codes(f"auth = ('agent@acme.example/token', '{value}')")
    assert "secret:password" in secret_codes(f"mc alias set prod https://minio.internal:9000 admin {value}")
    assert not secret_codes('cfg.password(System.getenv("DB_PASS"))\nauth = (user, password)')


def test_a_bitlocker_recovery_key_is_refused() -> None:
    key = "-".join(str(RNG.randint(100000, 999999)) for _ in range(8))
    assert "secret:recovery-codes" in refused_without_echo(f"Laptop BitLocker recovery key:\n{key}", key[:13])


def test_values_meant_to_be_shared_pass_under_secret_words() -> None:
    blob = "U2FsdGVkX1" + rand(60, ALNUM + "+/")
    assert not secret_codes(f'Encrypted backup (passphrase in 1Password, "wiki-export"):\n{blob}')
    assert not secret_codes(f'{{"api_token": "ENC[AES256_GCM,data:{rand(40, ALNUM)},iv:{rand(22, ALNUM)}=,type:str]"}}')
    assert not secret_codes(f"mapboxgl.accessToken = 'pk.ey{rand(60, ALNUM)}.{rand(22, ALNUM)}';")
    assert not secret_codes(f"EncryptedDbPassword: AQICAH{rand(120, ALNUM + '+/')}")
    assert not secret_codes("db:\n  passwordRef: vault:secret/data/prod/orders-db#password\nstripe:\n  apiKeyRef: x")
    assert not secret_codes('resource "aws_db_instance" "main" {\n  password = var.db_password\n}')
    assert not secret_codes(f"Die SMS mit der SID SM{rand(32, '0123456789abcdef')} wurde zugestellt.")
    assert not secret_codes(f"$ vault token lookup -accessor {rand(24, ALNUM)}")
    assert not secret_codes("Beispiel für ein schlechtes Passwort: Sommer2024! – Passwortmanager benutzen.")
    assert not secret_codes("Le mot de passe de la box est dans 1Password, coffre « Famille ».")


def test_a_password_shaped_value_in_the_sentence_of_a_password_word_is_refused() -> None:
    value = rand(8, ALNUM) + "#44"
    text = f"Напоминалка: паролем от админки магазина теперь служит {value}\nСтарый пароль отключили."
    assert "secret:password" in refused_without_echo(text, value)
    assert "secret:password" in secret_codes(f"Lösenordet till SMTP-kontot noreply@acme.se är {value} – port 587.")
    assert "secret:password" in secret_codes(f"- root pw for ops-03 until we set up SSO: {value}")
    assert "secret:password" in secret_codes(f"הסיסמה לרשת האלחוטית בבית: {value}")
    assert not secret_codes("The password server runs on smtp.office365.com port 587 with STARTTLS, v2.4.1-rc3.")


def test_a_token_handed_to_a_client_or_in_a_path_is_refused() -> None:
    token = rand(40, ALNUM)
    assert refused_without_echo(f'var client = new PostmarkClient("{token}");', token)
    assert secret_codes(f'client.run("{rand(24, ALNUM)}.{rand(6, ALNUM)}.{rand(38, ALNUM)}")')
    assert secret_codes(f"ESP32 calls https://maker.ifttt.com/trigger/door/with/key/{rand(22, ALNUM + '_')}")
    assert secret_codes(f"curl -X PUT http://192.168.1.40/api/{token}/groups/1/action")
    assert not secret_codes(f"GET https://api.example.com/api/{rand(32, '0123456789abcdef')}/status")
    assert not secret_codes('client = OpenAI(api_key=os.environ["OPENAI_API_KEY"])\nsession = Session("default")')


def test_vendor_prefixed_tokens_of_this_round_are_refused() -> None:
    for text in (
        f'dbx = dropbox.Dropbox("sl.{rand(130, ALNUM + "_-")}")',
        f'export FLY_API_TOKEN="FlyV1 fm2_{rand(80, ALNUM + "+/")}"',
        f"gitlab-runner register --registration-token GR1348941{rand(20, ALNUM)}",
        f"Kunci API Xendit (live): xnd_production_{rand(60, ALNUM)}",
    ):
        assert secret_codes(text), text


def test_a_pin_after_a_word_for_a_password_is_refused_and_counts_pass() -> None:
    assert "secret:password" in secret_codes("Banka kartının şifresi 8528, annemin kartı; kimseye söyleme.")
    assert "secret:password" in secret_codes("Mật khẩu ví MoMo của mẹ là 933303, nhớ đừng nói cho ai nhé.")
    assert "secret:password" in secret_codes("Ang MPIN ng GCash ni Nanay ay 7088, huwag mong ipagsabi.")
    for text in ("password expires after 3650 days", "Passwort seit 2019 nicht geändert", "Passwort: 2024-05-01",
                 "password length is 12345 chars", "the password must be 1234 minimum?"):  # fmt: skip
        assert not secret_codes(text), text


def test_words_for_a_password_in_more_languages_and_glued_particles_are_read() -> None:
    value = rand(9, ALNUM) + "&49"
    for text in (
        f"Lykilorðið á þráðlausa netinu í sumarbústaðnum er „{value}“ og netið heitir Bustadur-2G.",
        f"Datu-basearen pasahitza „{value}“ da; erabiltzailea: admin.",
        f"Iphasiwedi ye-imeyili yebhizinisi ithi {value}, uyishintshe.",
        f"আমার জিমেইলের পাসওয়ার্ড {value}, দুই ধাপের যাচাই বন্ধ আছে।",
        f"Fjalëkalimi i Wi-Fi-së në zyrë: „{value}“",
        f"공동인증서 비밀번호는 {value}이고, 은행 OTP 일련번호는 따로 적어 둠.",
    ):
        assert "secret:password" in refused_without_echo(text, value), text


def test_short_secrets_right_after_their_word_and_app_passwords_in_groups_are_refused() -> None:
    letters, digits = RNG.sample(string.ascii_letters, 8), RNG.sample(string.digits, 2)
    short = "".join(letters[:3] + digits[:1] + letters[3:6] + digits[1:] + letters[6:])
    assert secret_codes(f"네이버 검색 API\nClient ID: {rand(20, ALNUM)}\nClient Secret: {short}")
    chars = RNG.sample(string.ascii_lowercase, 14) + RNG.sample(string.digits, 2)
    groups = " ".join("".join(chars[i : i + 4]) for i in range(0, 16, 4))
    assert secret_codes(f"Пароль застосунку Google для поштового клієнта: {groups}. Звичайний пароль не підходить.")
    assert not secret_codes("Client Secret: stored-in-vault\nAPI key: see 1Password")


def test_public_and_stand_in_values_near_secret_words_pass() -> None:
    xpub = "xpub" + rand(107, ALNUM)
    assert not secret_codes(f"Watch-only wallet\nElectrum → Use a master key\n{xpub}\nthe seed stays on the device.")
    placeholder = "README:\nOPENAI_API_KEY=YOUR_API_KEY\nSTRIPE_SECRET_KEY=sk_live_xxxxxxxxxxxxxxxxxxxxxxxxx\nFine."
    assert not secret_codes(placeholder)
    assert not secret_codes("~/.pypirc — no password here, keyring\n[distutils]\nindex-servers = pypi testpypi")
    assert not secret_codes("- Réseau wifi : « Maison_Dupont »\n- Le mot de passe est sur l'étiquette")
    flag = f"gitlab-runner register --url https://gitlab.example.pl --registration-token {rand(29, ALNUM)}"
    assert secret_codes(flag)  # an address named far before the token's own word does not clear it
