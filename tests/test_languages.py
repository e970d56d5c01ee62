"""Sites in other languages than English.

Japanese, Chinese or Korean write no spaces between words, so the lexical index reads them as
overlapping pairs of characters, and a question finds its page by the words it shares with it,
whatever surrounds them there. A site in German (or another language Snowball stems) sets
`language`: its words are stemmed, and its function words do not match.
"""

import json

import pytest

from tests.conftest import indexed_and_served, write_config
from tests.test_index_run import run_cli

PAGES = {
    "returns.md": "# 返品と返金について\n\n商品到着後30日以内であれば、未使用の商品に限り返品を受け付けます。"
                  "返品をご希望の場合は、注文番号を添えてサポートまでご連絡ください。返金は商品の到着を確認してから5営業日以内に行います。\n",
    "shipping.md": "# 配送について\n\nご注文から通常2〜3営業日で発送いたします。送料は全国一律500円です。"
                   "５０００円以上のご注文は送料無料となります。沖縄と離島への配送には追加で数日かかる場合があります。\n",
    "account.md": "# アカウントとパスワード\n\nパスワードを忘れた場合は、ログイン画面の「パスワードをお忘れですか」から"
                  "メールアドレスを入力してください。再設定用のリンクをお送りします。アカウントの削除はマイページの設定から行えます。\n",
    "invoices.md": "# 发票说明\n\n我们为所有订单提供电子发票。下单时请填写公司名称和税号，发票将在发货后发送到您的电子邮箱。\n",
    "refunds-ko.md": "# 환불 정책\n\n구매 후 14일 이내에 사용하지 않은 상품은 환불을 요청할 수 있습니다. 환불은 영업일 기준 7일 이내에 처리됩니다.\n",
    "course.md": "# Python入門ガイド\n\n初めての方向けに、変数と関数の書き方から説明します。\n",
    "opening-hours.md": "# Opening hours\n\nThe Lisbon store opens at nine and closes at six, Monday to Saturday.\n",
}

CONFIG = """
[[sources]]
name = "help"
type = "files"
path = "docs"
[[spaces]]
provider = "local"
"""


@pytest.fixture(scope="module")
def shop(tmp_path_factory, local_embedder):
    folder = tmp_path_factory.mktemp("cjk")
    (folder / "docs").mkdir()
    for name, text in PAGES.items():
        (folder / "docs" / name).write_text(text, encoding="utf-8")
    with indexed_and_served(folder, CONFIG) as (report, client):
        assert not report.errors, report.errors
        yield client


def search(client, query: str, mode: str) -> dict:
    response = client.post("/v1/search", json={"query": query, "top_k": 3, "mode": mode})
    assert response.status_code == 200, response.text
    return response.json()


@pytest.mark.parametrize("mode", ["lexical", "hybrid"])
@pytest.mark.parametrize("question, page, marked", [
    ("返品できますか", "returns.md", "返品"),  # can I return it?
    ("送料はいくらですか", "shipping.md", "送料"),  # how much is shipping?
    ("パスワードを忘れました", "account.md", "パスワード"),  # I forgot my password
    ("发票怎么开", "invoices.md", "发票"),  # how do I get an invoice?
    ("환불 받을 수 있나요", "refunds-ko.md", "환불"),  # can I get a refund?
    ("python", "course.md", None),  # an English word run together with Japanese ("Python入門")
    ("5000円", "shipping.md", None),  # the page writes its digits full width: ５０００円
    ("ﾊﾟｽﾜｰﾄﾞ", "account.md", "パスワード"),  # half-width katakana, as some keyboards and old systems type it
])
def test_a_question_in_japanese_chinese_or_korean_finds_its_page_by_the_words_it_shares(shop, mode, question, page, marked):
    hits = search(shop, question, mode)["hits"]
    assert hits and hits[0]["doc_id"] == f"file:{page}", [(h["doc_id"], h["scores"]) for h in hits]
    if marked:
        assert f"<mark>{marked}" in hits[0]["snippet"], hits[0]["snippet"]


@pytest.mark.parametrize("question", [
    "東京の天気はどうですか",  # what is the weather in Tokyo? — shares です, か and の with every page
    "明日は雨が降りますか",  # will it rain tomorrow?
])
def test_a_question_that_shares_only_grammar_with_the_pages_is_matched_by_no_word(shop, question):
    """Pairs of hiragana alone (です, ます, すか) are the grammar of every Japanese page: a
    question is not matched on them when it has other words."""
    assert search(shop, question, "lexical")["hits"] == []


GERMAN = {
    "rueckgabe.md": "# Rückgabe und Erstattung\n\nSie können unbenutzte Artikel innerhalb von 30 Tagen nach Erhalt zurückgeben. "
                    "Die Erstattung erfolgt innerhalb von fünf Werktagen auf das ursprüngliche Zahlungsmittel.\n",
    "versand.md": "# Versand\n\nAlle Bestellungen werden innerhalb von zwei Werktagen aus unserem Lager in Hamburg versendet. "
                  "Ab einem Bestellwert von 50 Euro ist der Versand kostenlos.\n",
    "filialen.md": "# Öffnungszeiten\n\nUnsere Filiale in Hamburg ist montags bis samstags von 9 bis 18 Uhr geöffnet.\n",
    "konto.md": "# Konto und Passwort\n\nWenn Sie Ihr Passwort vergessen haben, klicken Sie auf der Anmeldeseite auf „Passwort vergessen“ "
                "und geben Sie Ihre E-Mail-Adresse ein. Wir senden Ihnen einen Link zum Zurücksetzen. Ihr Konto können Sie in den Einstellungen löschen.\n",
    "garantie.md": "# Garantie\n\nAuf alle Stiefel gewähren wir zwei Jahre Garantie. Ist ein Stiefel defekt, reparieren oder ersetzen wir ihn "
                   "kostenlos. Die Garantie gilt nicht für Schäden durch unsachgemäße Pflege.\n",
}


def german_site(folder, language: str | None):
    (folder / "docs").mkdir(exist_ok=True)
    for name, text in GERMAN.items():
        (folder / "docs" / name).write_text(text, encoding="utf-8")
    return write_config(folder, (f'language = "{language}"\n' if language else "") + CONFIG)


def lexical_hits(config, question: str) -> list[dict]:
    return json.loads(run_cli("search", question, "-c", str(config), "--mode", "lexical", "--json").output)["hits"]


def test_a_german_site_finds_words_in_other_forms_and_does_not_match_on_function_words(tmp_path, local_embedder):
    """In English, "Bestellung" (order) met no page that says "Bestellungen" (orders), and "Was ist
    die Hauptstadt von Frankreich?" matched most pages by "von" and "ist". The run said so. Setting
    `language = "german"` rewrites the postings on the next run, embedding nothing."""
    config = german_site(tmp_path, None)
    first = json.loads(run_cli("run", "-c", str(config), "--json").output)
    (hint,) = [w["message"] for w in first["warnings"] if w["code"] == "LANGUAGE_HINT"]
    assert "reads as German" in hint and 'set language = "german"' in hint, hint
    assert lexical_hits(config, "Bestellung") == []
    assert len(lexical_hits(config, "Was ist die Hauptstadt von Frankreich?")) >= 3, "most pages say 'von' or 'ist'"

    german_site(tmp_path, "german")
    report = json.loads(run_cli("run", "-c", str(config), "--json").output)
    space = report["spaces"]["local-all-minilm-l6-v2-384"]
    assert space["embedded"] == 0 and space["postings_rewritten"] == 1, space
    level = tmp_path / "artifacts" / "generations" / report["generation"] / "spaces" / "local-all-minilm-l6-v2-384" / "chance.json"
    assert json.loads(level.read_text())["language"] == "german", "measured again: German counts a question's terms otherwise"
    (hit,) = lexical_hits(config, "Bestellung")
    assert hit["doc_id"] == "file:versand.md" and "<mark>Bestellungen</mark>" in hit["snippet"], hit
    assert lexical_hits(config, "Was ist die Hauptstadt von Frankreich?") == []
    assert lexical_hits(config, "Wann ist die Filiale geöffnet?")[0]["doc_id"] == "file:filialen.md"


def test_a_language_the_index_cannot_read_is_named_with_those_it_can(tmp_path):
    assert run_cli("run", "-c", str(german_site(tmp_path, "German")), "--dry-run").exit_code == 0, "written as people write it"
    config = german_site(tmp_path, "klingon")
    result = run_cli("run", "-c", str(config), "--dry-run")
    assert result.exit_code == 2, result.output
    assert "language: must be one of english, danish, dutch, french, german" in result.output and "got 'klingon'" in result.output, result.output


def test_an_english_site_is_not_told_to_set_another_language(tmp_path):
    """The demo's pages (28, in English) and a shop in Japanese (whose words are no language's
    function words) get no LANGUAGE_HINT."""
    from tests.conftest import EXAMPLES

    report = json.loads(run_cli("run", "-c", str(EXAMPLES / "index.toml"), "--artifacts", str(tmp_path / "artifacts"), "--dry-run", "--json").output)
    assert report["documents"]["added"] == 28, report["documents"]
    assert not [w for w in report["warnings"] if w["code"] == "LANGUAGE_HINT"], report["warnings"]
    (tmp_path / "docs").mkdir()
    for name, text in PAGES.items():
        (tmp_path / "docs" / name).write_text(text, encoding="utf-8")
    shop = json.loads(run_cli("run", "-c", str(write_config(tmp_path, CONFIG)), "--dry-run", "--json").output)
    assert not [w for w in shop["warnings"] if w["code"] == "LANGUAGE_HINT"], shop["warnings"]
