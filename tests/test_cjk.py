"""A help site in Japanese, Chinese or Korean: these languages write no spaces between words, so
the lexical index reads them as overlapping pairs of characters, and a question finds its page by
the words it shares with it, whatever surrounds them there."""

import pytest

from tests.conftest import indexed_and_served

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
