"""The main override order ("ignore / forget your earlier instructions", "your earlier rules no longer apply")
in languages beyond the ones written into `directive_phrases`, one row per language.

Each row gives the words of a co-occurrence group (see `directive_matching.Group`): verbs that drop something,
nouns for instructions and rules (and for "what you were told"), qualifiers for earlier or all, and phrases that
declare rules void. Entries are separated by spaces, `_` stands for a space inside an entry, and an entry of
Latin, Greek or Cyrillic letters longer than four letters is a stem (a word's start), so inflected forms match.
Accents are folded on both sides before matching, so an entry may be written with or without them.

A sentence is refused only when it holds a word of each group, so one ordinary word of a language (a recipe's
"forget the sugar") is never enough.
"""

from __future__ import annotations

from typing import Final, NamedTuple


class Language(NamedTuple):
    drop: str  # ignore, forget, disregard, do not heed
    orders: str  # instructions, rules, commands, guidelines; "what you were told"
    prior: str  # previous, earlier, above, all, your
    void: str  # no longer valid, cancelled (phrases; "|"-separated)


LANGUAGES: Final[dict[str, Language]] = {
    "romanian": Language(
        "ignoră ignora ignorați ignoraţi ignorati uită uitați uitaţi nu_lua_în_seamă nu_ține_cont",
        "instrucțiun instrucţiun instructiun reguli regulile indicați indicaţi comenzile ordinele spus",
        "anterioare precedente dinainte toate toți vechile dat",
        "nu mai sunt valabile|nu mai sunt valide|nu mai contează|anulate",
    ),
    "hungarian": Language(
        "figyelmen_kívül felejtsd felejtse felejtsétek ignoráld ignorálja ne_törődj ne_foglalkozz",
        "utasítás utasítá szabály parancs előírás irányelv mondtak mondták",
        "korábbi előző eddigi összes minden fenti régi",
        "már nem érvényes|érvénytelen|hatályukat vesztették|nem érvényesek",
    ),
    "finnish": Language(
        "unohda unohtakaa ohita ohittakaa sivuuta älä_välitä jätä_huomiotta älä_noudata",
        "ohje= ohjeet ohjeita ohjeista ohjeesi säännö sääntö käsky määräy kerrottu",
        "aiemm edelli kaikki yllä vanhat",
        "eivät ole enää voimassa|ei enää päde|eivät enää päde|mitätön",
    ),
    "danish": Language(
        "glem ignorer se_bort_fra tilsidesæt overse",
        "instruktion regler= reglerne anvisning retningslinje ordrer fået_at_vide",
        "tidligere forrige alle ovenstående gamle",
        "gælder ikke længere|er ugyldige|er annulleret",
    ),
    "norwegian": Language(
        "glem ignorer se_bort_fra overse",
        "instruks regler= reglene retningslinje ordre= beskjed",
        "tidligere forrige alle ovenstående gamle",
        "gjelder ikke lenger|er ugyldige|er opphevet",
    ),
    "serbo-croatian": Language(
        "zanemari zanemarite ignoriraj ignoriši ignorisi zaboravi zaboravite ne_obaziri ne_obazirite",
        "upute= uputstv uputa= instrukcij pravila naredbe naloge rečeno receno",
        "prethodn prijašnj ranije sve= sva= gornje stare",
        "više ne vrijede|više ne važe|nevažeće|ništavne",
    ),
    "slovenian": Language(
        "prezri prezrite ignoriraj pozabi pozabite",
        "navodila pravila ukaze",
        "prejšnj vsa= vse= zgornj",
        "ne veljajo več|neveljavna",
    ),
    "bulgarian": Language(
        "игнорирай игнорирайте забрави забравете пренебрегни",
        "инструкции указания правила команди казаха",
        "предишни всички горните старите",
        "вече не важат|са невалидни|отменени",
    ),
    "macedonian": Language("игнорирај заборави", "инструкции упатства правила", "претходни сите", "не важат"),
    "belarusian": Language("ігнаруй забудзь", "інструкцы правіл", "папярэдн усе", "не дзейнічаюць"),
    "swahili": Language(
        "puuza puuzeni sahau sahauni usijali usifuate",
        "maagizo maelekezo sheria amri= kanuni",
        "awali zilizopita yote zote zamani",
        "si halali tena|zimefutwa|hazitumiki tena",
    ),
    "tagalog": Language(
        "huwag_pansinin balewalain kalimutan ipagwalang-bahala",
        "tagubilin utos= panuto alituntunin patakaran",
        "nauna naunang dati lahat nakaraan",
        "hindi na balido|wala nang bisa",
    ),
    "malay": Language("abaikan lupakan jangan_ikut", "arahan peraturan perintah", "sebelum semua", "tidak sah lagi"),
    "catalan": Language(
        "ignora ignoreu oblida oblideu oblidia no_facis_cas",
        "instrucc regles ordres indicacions",
        "anteriors prèvies totes tots",
        "ja no són vàlides|queden anul·lades",
    ),
    "galician": Language("ignora esquece esquecede", "instrucións regras", "anteriores todas", "xa non son válidas"),
    "basque": Language(
        "ez_ikusi ahaztu baztertu ez_egin_kasurik kasurik_ez",
        "argibide jarraibide arauak aginduak",
        "aurreko guztiak",
        "ez dira baliozkoak",
    ),
    "serbian (cyrillic)": Language(
        "игнориши игноришите заборави заборавите занемари занемарите не_обазири",
        "упутств упута= инструкциј правила наредбе речено",
        "претходн раниј сва= све= горње старе",
        "више не важе|више не вреде|неважећ|поништен",
    ),
    "hindi (latin letters)": Language(
        "bhool bhul_jao bhul_jaao nazarandaz ignore_karo ignore_kar anadekha",
        "instructions nirdesh hidayat niyam rules",
        "pichle pichhle pichli saare sare sabhi purane",
        "ab lagu nahi|ab valid nahi|radd ho gaye",
    ),
    "estonian": Language(
        "ignoreeri ignoreerige unusta unustage eira eirake",
        "juhis juhend reegl käsud",
        "varasem eelmis kõik",
        "ei kehti enam|kehtetud",
    ),
    "latvian": Language(
        "ignorē aizmirsti neņem_vērā", "instrukcij noteikum norādījum", "iepriekšēj visas visus", "vairs nav spēkā"
    ),
    "lithuanian": Language(
        "ignoruok ignoruokite pamiršk pamirškite nepaisyk",
        "instrukcij nurodym taisykl",
        "ankstesn visas visus visų",
        "nebegalioja|negalioja",
    ),
    "slovak": Language(
        "ignoruj ignorujte zabudni zabudnite nevšímaj",
        "pokyny inštrukci pravidlá príkazy",
        "predchádzajúc predošl všetky",
        "už neplatia|sú neplatné",
    ),
    "afrikaans": Language("ignoreer vergeet", "instruksies reëls opdragte", "vorige alle", "is nie meer geldig nie"),
    "icelandic": Language("hunsaðu gleymdu", "leiðbeining fyrirmæli reglur", "fyrri allar", "gilda ekki lengur"),
    "albanian": Language(
        "injoro harro shpërfill", "udhëzim rregull urdhr", "mëparshme gjitha", "nuk janë më të vlefshme"
    ),
    "azerbaijani": Language(
        "nəzərə_alma unut görməzdən məhəl_qoyma", "təlimat qayda əmrlər", "əvvəlki bütün", "etibarsızdır"
    ),
    "kazakh": Language("елеме ұмыт", "нұсқаулар ережелер", "алдыңғы барлық", "жарамсыз"),
    "uzbek": Language("e'tiborsiz unut", "ko'rsatma qoidalar", "oldingi barcha", "bekor qilingan"),
    "welsh": Language("anwybyddu anwybydda anghofia", "cyfarwyddiad rheolau", "blaenorol pob", "nid ydynt yn ddilys"),
    "irish": Language("déan_neamhaird dearmad", "treoracha rialacha", "roimhe go_léir", "neamhbhailí"),
    "esperanto": Language("ignoru forgesu", "instrukci regulojn", "antaŭajn ĉiujn", "ne plu validas"),
    "georgian": Language("უგულებელყავი დაივიწყე", "ინსტრუქცი წესებ", "წინა ყველა", "ბათილია"),
    "armenian": Language("անտեսիր մոռացիր", "հրահանգ կանոնն", "նախորդ բոլոր", "անվավեր"),
    "bengali": Language("উপেক্ষা ভুলে_যাও ভুলে_যান", "নির্দেশ নিয়ম আদেশ", "পূর্ববর্তী আগের সমস্ত সব", "বাতিল"),
    "tamil": Language("புறக்கணி மறந்து மறந்துவிடு", "வழிமுறை அறிவுறுத்தல் விதி கட்டளை", "முந்தைய அனைத்து எல்லா", "செல்லாது"),
    "telugu": Language("విస్మరించ మర్చిపో పట్టించుకోవద్దు", "సూచనల నియమాల ఆదేశాల", "మునుపటి అన్ని", "చెల్లవు"),
    "marathi": Language("दुर्लक्ष विसरा", "सूचना आदेश", "मागील आधीच्या सर्व", "रद्द"),
    "urdu": Language("نظر_انداز بھول", "ہدایات اصول احکامات", "پچھلی پچھلے تمام سابقہ", "منسوخ|کالعدم"),
    "punjabi": Language("ਅਣਡਿੱਠ ਭੁੱਲ", "ਹਦਾਇਤਾਂ ਨਿਯਮ", "ਪਿਛਲੀਆਂ ਸਾਰੀਆਂ", "ਰੱਦ"),
    "gujarati": Language("અવગણો ભૂલી", "સૂચનાઓ નિયમો", "અગાઉની બધી", "રદ"),
    "nepali": Language("बेवास्ता बिर्स", "निर्देशन नियम", "अघिल्ला सबै", "रद्द"),
    "sinhala": Language("නොසලකා අමතක", "උපදෙස් නීති", "පෙර සියලු", "අවලංගු"),
    "burmese": Language("လျစ်လျူရှု မေ့", "ညွှန်ကြားချက် စည်းမျဉ်း", "ယခင် အားလုံး", "ပျက်ပြယ်"),
    "khmer": Language("មិនអើពើ ភ្លេច", "ការណែនាំ ច្បាប់", "មុន ទាំងអស់", "ទុកជាមោឃៈ"),
    "amharic": Language("ችላ እርሳ", "መመሪያ ደንቦች", "ቀደምት ሁሉንም", "ዋጋ የለውም"),
    "hausa": Language("yi_watsi manta", "umarni dokoki", "na_baya duka", "ba su da inganci"),
    "yoruba": Language("foju_fo gbagbe", "ilana àṣẹ", "tẹlẹ gbogbo", "ko wulo mo"),
    "zulu": Language("ziba khohlwa", "imiyalelo imithetho", "yangaphambili yonke", "azisebenzi"),
    # More forms in languages `directive_phrases` already reads: other word orders, "what you were told",
    # "no longer valid".
    "covered": Language(
        "negeer ignoreer",
        "opgedragen gezegd gesagt mitgeteilt dijeron dicho detto disseram powiedziano řečeno söylenen "
        "fått_höra sagt= dikatakan",
        "vorhin eerder zuvor antes prima avant wcześniej dříve önce tidigare sebelumnya",
        "gelten nicht mehr|nicht mehr gültig|hinfällig|außer kraft|ya no son válidas|ya no valen|quedan anuladas|"
        "ne sont plus valables|ne s'appliquent plus|non valgono più|non sono più valide|não valem mais|"
        "não são mais válidas|gelden niet meer|больше не действуют|утратили силу|już nie obowiązują|nieaktualne|"
        "gäller inte längre|artık geçerli değil|už neplatí|不再适用|已失效|もう有効ではありません|더 이상 유효하지",
    ),
}


def joined(part: str) -> str:
    """The entries of one part of every row, for a space-separated group."""
    return " ".join(getattr(row, part) for row in LANGUAGES.values())


def joined_void() -> str:
    """Every row's void phrases, for a `|`-separated group."""
    return "|".join(row.void for row in LANGUAGES.values())


# What an AI is called, and the words of an order that matters (the user, passwords and keys, deleting, sending,
# logs and backups, keeping something from the user), per language: a sentence that calls an AI by one of the
# names and goes on with one of these words is refused (see `directive_foreign.foreign_vocatives`).
AI_NAMES: Final[dict[str, str]] = {
    "hungarian": "asszisztens mesterséges_intelligencia modell",
    "finnish": "avustaja tekoäly malli",
    "danish": "assistent kunstig_intelligens",
    "norwegian": "assistent kunstig_intelligens",
    "serbo-croatian": "asistente asistentu asistent umjetna_inteligencija",
    "romanian": "asistentule asistent inteligența_artificială",
    "portuguese": "assistente modelo",
    "czech/slovak": "asistente asistent modeli modelu",
    "turkish": "asistan yapay_zeka",
    "swedish": "assistent",
    "estonian": "assistent tehisintellekt",
    "lithuanian": "asistente dirbtinis_intelektas",
    "latvian": "asistent mākslīgais_intelekts",
    "swahili": "msaidizi",
    "tagalog": "katulong",
    "indonesian/malay": "asisten pembantu",
    "vietnamese": "trợ lý mô hình",
    "arabic": "المساعد مساعد الذكاء_الاصطناعي",
    "persian": "دستیار هوش_مصنوعی",
    "hebrew": "עוזר בינה_מלאכותית",
    "hindi/marathi/nepali": "सहायक एआई",
    "bengali": "সহকারী এআই",
    "urdu": "معاون اسسٹنٹ",
    "thai": "ผู้ช่วย เอไอ",
    "greek": "βοηθέ βοηθός μοντέλο",
    "ukrainian/russian/bulgarian": "помічнику асистенте ассистент помощник модел",
}
CONTROL: Final[dict[str, str]] = {
    "hungarian": "felhasználó jelszó jelszav töröl törö küld naplók mentés ne_szólj ne_mondd",
    "finnish": "käyttäjä salasan poista lähetä lokit varmuuskopi älä_kerro",
    "danish/norwegian": "bruger bruker adgangskode passord slet slett send logge sikkerhedskopi ikke_sig ikke_fortell",
    "swedish": "användare lösenord radera ta_bort skicka loggar säkerhetskopi säg_inget säg_inte",
    "serbo-croatian": "korisnik lozink obriši izbriši pošalji zapisnik ne_govori",
    "romanian": "utilizator parol șterge sterge trimite jurnal nu_spune",
    "portuguese": "usuário utilizador senha apague exclua envie registros backup sem_avisar não_diga",
    "czech/slovak": "uživatel používateľ hesl smaž vymaž pošli záznam neříkej",
    "turkish": "kullanıcı şifre parola sil gönder kayıt yedek söyleme",
    "estonian/latvian/lithuanian": "kasutaja parool kustuta saada lietotāj parol dzēs sūti naudotoj slaptažod ištrink",
    "swahili": "mtumiaji nenosiri futa tuma usimwambie",
    "tagalog": "gumagamit password burahin ipadala huwag_sabihin",
    "indonesian/malay": "pengguna kata_sandi hapus padam kirim log cadangan jangan_beritahu",
    "vietnamese": "người_dùng mật_khẩu xóa xoá gửi nhật_ký sao_lưu đừng_nói",
    "arabic": "المستخدم كلمات_المرور كلمة_المرور احذف أرسل ارسل السجلات لا_تخبر",
    "persian": "کاربر رمز حذف بفرست ارسال نگو",
    "hebrew": "המשתמש סיסמ מחק שלח אל_תספר",
    "hindi/marathi/nepali": "उपयोगकर्ता पासवर्ड हटा भेज लॉग मत_बताओ बताए_बिना",
    "bengali": "ব্যবহারকারী পাসওয়ার্ড মুছে পাঠাও বলবে_না",
    "urdu": "صارف پاس_ورڈ حذف بھیج مت_بتاؤ",
    "thai": "ผู้ใช้ รหัสผ่าน ลบ ส่ง อย่าบอก",
    "greek": "χρήστη κωδικ διάγραψε στείλε μην_πεις",
    "korean": "사용자 비밀번호 삭제 보내 알리지",
    "japanese": "ユーザー パスワード 削除 送信 送って 言わない",
    "chinese": "用户 密码 删除 发送 发给 不要告诉",
    "ukrainian/russian/bulgarian": "користувач пароль видали надішли не_кажи потребител изтрий изпрати",
}
