"""The search API as a chatbot backend sees it: answers with citations, filters, and JSON errors."""

import re
from urllib.parse import quote

import pytest
from litestar.testing import TestClient

from indexer.config import load_config
from indexer.pipeline import run_index
from server.app import create_app
from server.service import Settings
from tests.conftest import LOOPBACK_WEB, write_config

CITATION_FIELDS = {"chunk_id", "doc_id", "title", "url", "path", "source", "heading_path", "text", "start", "end", "score", "scores", "updated_at", "chunk_ids", "snippet",
                   "relevance", "stale", "link", "page_start", "page_end"}


@pytest.fixture(scope="module")
def client(examples_client):
    return examples_client


def search(client, **body):
    response = client.post("/v1/search", json=body)
    assert response.status_code == 200, response.text
    return response.json()


def test_health_readiness_and_info(client):
    assert client.get("/healthz").json() == {"status": "ok"}
    ready = client.get("/readyz")
    info = client.get("/v1/info").json()
    assert ready.status_code == 200 and ready.json()["generation"] == info["generation"]
    assert info["documents"] == 28 and info["chunks"] > 28
    defaults = {"min_relevance": 0.045, "min_lexical_relevance": 0.0625, "hybrid_weight": 0.6}  # the thresholds of `answerable` and the blend
    assert info["spaces"] == [{"space_id": "local-all-minilm-l6-v2-384", "provider": "local", "model": "all-MiniLM-L6-v2", "dimension": 384,
                               "vectors": info["chunks"], "rebuilt_at": info["spaces"][0]["rebuilt_at"], "stale_documents": 0, "chance_level": True,
                               **defaults, "degraded_reason": None}]
    assert info["built_at"] and info["default_space"] == "local-all-minilm-l6-v2-384"


@pytest.mark.parametrize(
    "question, doc_id",
    [
        ("how do I undo a bad index run?", "file:generations.md"),
        ("what does exit status 4 mean for the nightly job", "file:exit-codes.md"),
        ("which nearest neighbour structure suits millions of embeddings", "file:vector-indexes.html"),
        ("why strip word endings before keyword matching", "file:stemming-and-stopwords.txt"),
        ("is an OpenAI account required to try this", "file:faq.md"),
        ("how should the chatbot show where an answer came from", "file:citing-sources.md"),
    ],
)
def test_a_paraphrased_question_finds_the_right_document(client, question, doc_id):
    hits = search(client, query=question, top_k=3)["hits"]
    assert doc_id in [h["doc_id"] for h in hits]


def test_hits_carry_everything_needed_to_cite(client):
    result = search(client, query="how do I undo a bad index run?", top_k=5)
    assert result["space"] == "local-all-minilm-l6-v2-384" and result["mode"] == "hybrid" and result["took_ms"] > 0
    top = result["hits"][0]
    assert set(top) == CITATION_FIELDS
    assert top["title"] == "Generations, CURRENT and rollback"
    assert top["heading_path"] == ["Generations, CURRENT and rollback", "Rolling back a bad run"]
    assert top["path"] == "generations.md" and top["source"] == "guide"
    assert top["updated_at"] == "2026-11-22T00:00:00Z", "timestamps say they are UTC"
    assert top["scores"]["dense"] > 0 and top["scores"]["lexical"] > 0
    document = client.get(f"/v1/documents/{top['doc_id']}").json()
    assert document["text"][top["start"] : top["end"]] == top["text"], "offsets point into the document text"
    scores = [h["score"] for h in result["hits"]]
    assert scores == sorted(scores, reverse=True)


def test_overlapping_chunks_of_one_document_are_returned_once(client):
    hits = search(client, query="BM25 term frequency saturation and length normalization", top_k=20)["hits"]
    for i, a in enumerate(hits):
        for b in hits[i + 1 :]:
            if a["doc_id"] == b["doc_id"]:
                assert a["end"] <= b["start"] or b["end"] <= a["start"], "two hits share text"


def test_modes_use_one_retriever_each(client):
    dense = search(client, query="undo a bad index run", mode="dense")["hits"]
    lexical = search(client, query="undo a bad index run", mode="lexical")["hits"]
    assert all(h["scores"]["lexical"] is None and h["score"] == h["scores"]["dense"] for h in dense)
    assert all(h["scores"]["dense"] is None and h["score"] == h["scores"]["lexical"] > 0 for h in lexical)
    assert search(client, query="the of and", mode="lexical")["hits"] == [], "stop words alone match nothing lexically"


def test_filters_apply_before_the_cut_to_top_k(client):
    hits = search(client, query="how do I undo a bad index run?", top_k=7, filters={"source": "articles"})["hits"]
    assert len(hits) == 7 and {h["source"] for h in hits} == {"articles"}
    one_doc = search(client, query="rollback", top_k=50, filters={"doc_id": "file:bm25.md"})["hits"]
    assert one_doc and {h["doc_id"] for h in one_doc} == {"file:bm25.md"}
    assert search(client, query="rollback", filters={"source_type": "notion"})["hits"] == []
    recent = search(client, query="rollback", top_k=50, filters={"updated_after": "2026-11-21T00:00:00Z"})["hits"]
    assert recent and all(h["updated_at"] >= "2026-11-21" for h in recent)
    older = search(client, query="rollback", top_k=50, filters={"updated_before": "2026-09-01T00:00:00+00:00"})["hits"]
    assert older and all(h["updated_at"] < "2026-09-01" for h in older)


@pytest.mark.parametrize(
    "body, code, fragment",
    [
        ({"query": "   "}, "EMPTY_QUERY", "query must contain some text"),
        ({"query": "\u0000\u200b\ufeff\t"}, "EMPTY_QUERY", "query must contain some text"),
        ({"query": "x" * 2001}, "QUERY_TOO_LONG", "the limit is 2000"),
        ({"query": "x", "top_k": 0}, "INVALID_REQUEST", "top_k"),
        ({"query": "x", "top_k": 51}, "TOP_K_TOO_LARGE", "the limit is 50"),
        ({"query": "x", "mode": "fuzzy"}, "INVALID_REQUEST", "mode"),
        ({"qurey": "x"}, "INVALID_REQUEST", "qurey"),
        ({"query": "x", "filters": {"colour": "red"}}, "INVALID_REQUEST", "colour"),
        ({"query": "x", "filters": {"updated_after": "last week"}}, "INVALID_REQUEST", '"last week" or "7d" in filters.updated_within'),
        ({"query": "x", "filters": {"updated_before": "2026-11-20"}}, "INVALID_REQUEST", "filters.updated_before: Invalid RFC3339 encoded "
                                                                                          "datetime; send a date and time such as 2026-11-20T00:00:00Z"),
        ({"query": "x", "filters": {"updated_within": "a while ago"}}, "INVALID_REQUEST", '"last week"'),
        ({"query": "x", "filters": {"updated_within": "today", "timezone": "Mars/Olympus"}}, "INVALID_REQUEST", "unknown time zone"),
        ({"query": "x", "offset": 201}, "OFFSET_TOO_LARGE", "the limit is 200"),
        ({"query": "x", "min_score": 1.5}, "INVALID_REQUEST", "min_score"),
        ({"query": "x", "max_chunks_per_doc": 0}, "INVALID_REQUEST", "max_chunks_per_doc"),
        ({"query": 3}, "INVALID_REQUEST", "query"),
    ],
)
def test_invalid_requests_get_a_400_with_a_code(client, body, code, fragment):
    response = client.post("/v1/search", json=body)
    assert response.status_code == 400
    error = response.json()
    assert error["code"] == code and fragment in error["message"] and error["retryable"] is False


def test_a_search_without_a_body_or_not_in_json_says_what_to_send(client):
    response = client.post("/v1/search", content=b"")  # was: "body: 'data'"
    assert response.status_code == 400
    assert response.json()["message"] == 'body: empty; send a JSON object such as {"query": "how do I reset my password?"}'
    form = client.post("/v1/search", content=b"query=refunds", headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert form.status_code == 400 and form.json()["message"].endswith(
        'send a JSON object such as {"query": "how do I reset my password?"} with Content-Type: application/json'), form.json()
    typed = client.get("/v1/search?query=refunds")  # tried in a browser's address bar
    assert typed.status_code == 405 and typed.json() == {
        "code": "METHOD_NOT_ALLOWED", "retryable": False,
        "message": 'search with POST /v1/search and a JSON body such as {"query": "how do I reset my password?"}; GET is not supported'}


def test_an_unknown_space_or_an_impossible_date_is_a_clear_client_error(client):
    space = client.post("/v1/search", json={"query": "x", "space": "openai-x-1"})
    assert space.status_code == 404 and space.json()["code"] == "UNKNOWN_SPACE" and "available: local-all-minilm-l6-v2-384" in space.json()["message"]
    late = client.post("/v1/search", json={"query": "x", "filters": {"updated_before": 253402300800}})
    assert late.status_code == 400 and late.json()["code"] == "INVALID_REQUEST" and "out of range" in late.json()["message"]


@pytest.mark.parametrize(
    "body, message",
    [
        ({"query": "x", "filters": {"source": "halp"}}, "no source is named 'halp'; sources: articles, guide"),
        ({"query": "x", "filters": {"source_type": "pdf"}}, "filters.source_type: Invalid enum value 'pdf'; one of files, urls, notion"),
        ({"query": "x", "topk": 3}, "body: Object contains unknown field `topk`; did you mean `top_k`? Allowed: query, space, top_k,"),
        ({"query": "x", "filters": {"sourse": "guide"}}, "filters: Object contains unknown field `sourse`; did you mean `source`?"),
        ({"q": "x"}, "body: Object contains unknown field `q`; did you mean `query`? Allowed: query,"),  # other search APIs' names
        ({"query": "x", "limit": 3}, "unknown field `limit`; did you mean `top_k`?"),
        ({"query": "x", "source": "guide"}, "unknown field `source`; did you mean `filters.source`?"),
        ({"query": "x", "colour": "red"}, "body: Object contains unknown field `colour`; Allowed: query,"),
        ({"query": "x", "mode": "semantic"}, "mode: Invalid enum value 'semantic'; one of hybrid, dense, lexical"),
    ],
)
def test_a_typo_in_a_request_is_named_with_what_was_meant(client, body, message):
    """A filter on a source that does not exist is a typo, not "no results"; field and mode typos
    get the nearest name and the allowed ones."""
    response = client.post("/v1/search", json=body)
    assert response.status_code == 400 and message in response.json()["message"], response.json()
    assert response.json()["code"] == ("UNKNOWN_SOURCE" if body.get("filters", {}).get("source") else "INVALID_REQUEST")


def test_the_api_reference_page_needs_nothing_from_the_internet(client):
    page = client.get("/schema")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert "POST</span> <code>/v1/search</code>" in page.text and "id='schema-SearchRequest'" in page.text
    assert not re.findall(r"""(?:src|href)=['"](?:https?:)?//""", page.text), "no script, style or font from another host"
    assert client.get("/schema/openapi.json").json()["info"]["title"] == "static-rag search API"


def test_malformed_json_and_unknown_routes_are_json_errors(client):
    broken = client.post("/v1/search", content=b"{nope", headers={"content-type": "application/json"})
    assert broken.status_code == 400 and broken.json()["code"] == "INVALID_REQUEST"
    assert client.get("/v1/nowhere").json()["code"] == "NOT_FOUND"
    assert client.get("/v1/search").status_code == 405 and client.get("/v1/search").json()["code"] == "METHOD_NOT_ALLOWED"


def test_documents_and_chunks_by_id(client):
    hit = search(client, query="token bucket refill rate", top_k=1)["hits"][0]
    chunk = client.get(f"/v1/chunks/{hit['chunk_id']}").json()
    assert (chunk["doc_id"], chunk["text"], chunk["start"], chunk["heading_path"]) == (hit["doc_id"], hit["text"], hit["start"], hit["heading_path"])
    for path in (hit["doc_id"], quote(hit["doc_id"], safe="")):
        document = client.get(f"/v1/documents/{path}")
        assert document.status_code == 200 and document.json()["title"] == "Rate limiting with token buckets"
    assert client.get("/v1/documents/file:nope.md").json() == {"code": "DOCUMENT_NOT_FOUND", "message": "no document 'file:nope.md' in this generation", "retryable": False}
    assert client.get("/v1/chunks/0000").status_code == 404


def test_titles_and_headings_read_as_text_while_the_hit_keeps_its_markdown(tmp_path, local_embedder):
    """A result shows its title and heading path above the snippet (the demo page, the widget):
    they showed "Install `widgetctl` from [the site](https://…)" as written."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "guide.md").write_text("# Guide to **widgets**\n\nWidgets in short.\n\n## Install `widgetctl` from [the site](https://example.com/get)\n\n"
                                                "Run the installer with administrator rights and reboot.\n\n### *Python* tips: *args and **kwargs\n\nPass options through.\n")
    run_index(load_config(write_config(tmp_path, '[[sources]]\nname = "d"\ntype = "files"\npath = "docs"\n[[spaces]]\nprovider = "local"\n')))
    with TestClient(create_app(Settings(artifacts=tmp_path / "artifacts"))) as c:
        install = search(c, query="run the installer and reboot", top_k=1)["hits"][0]
        assert (install["title"], install["heading_path"]) == ("Guide to widgets", ["Guide to widgets", "Install widgetctl from the site"])
        assert install["snippet"].startswith("<mark>Run</mark> the <mark>installer</mark>"), "the heading shown above is not said again"
        assert install["text"].startswith("## Install `widgetctl` from [the site](https://example.com/get)\n"), "the chatbot's text keeps its Markdown"
        tips = search(c, query="pass options through", top_k=1)["hits"][0]
        assert tips["heading_path"][-1] == "Python tips: *args and **kwargs", "stars that open no emphasis are text"
    from server.snippets import snippet

    assert snippet("Call it with *args and **kwargs.", "") == "Call it with *args and **kwargs.", "in a snippet too (it read 'args and *kwargs')"


def test_url_document_ids_with_double_slashes_resolve(tmp_path, site, local_embedder):
    site.routes = {"/help/a": (200, "text/plain", b"Help page\n\nThe help page explains passwords.")}
    config = write_config(tmp_path, f'[[sources]]\nname = "w"\ntype = "urls"\n{LOOPBACK_WEB}urls = ["{site.url("/help/a")}"]\n[[spaces]]\nprovider = "local"\n')
    run_index(load_config(config))
    with TestClient(create_app(Settings(artifacts=tmp_path / "artifacts"))) as c:
        doc_id = f"url:{site.base}/help/a"
        for path in (doc_id, quote(doc_id, safe="")):
            response = c.get(f"/v1/documents/{path}")
            assert response.status_code == 200 and response.json()["doc_id"] == doc_id


def test_not_ready_until_a_generation_is_published(tmp_path, local_embedder):
    artifacts = tmp_path / "artifacts"
    with TestClient(create_app(Settings(artifacts=artifacts))) as c:
        assert c.get("/healthz").status_code == 200
        not_ready = c.get("/readyz")
        assert not_ready.status_code == 503 and not_ready.json()["code"] == "NO_GENERATION"
        refused = c.post("/v1/search", json={"query": "x"})
        assert refused.status_code == 503 and refused.json()["retryable"] is True
        (tmp_path / "docs").mkdir()
        (tmp_path / "docs" / "a.md").write_text("# Passwords\n\nReset your password from the account page.")
        run_index(load_config(write_config(tmp_path, '[[sources]]\nname = "d"\ntype = "files"\npath = "docs"\n[[spaces]]\nprovider = "local"\n')))
        assert c.get("/readyz").status_code == 200
        assert c.post("/v1/search", json={"query": "forgot my login secret"}).json()["hits"][0]["doc_id"] == "file:a.md"


def test_openapi_schema_describes_search(client):
    schema = client.get("/schema/openapi.json").json()
    assert "/v1/search" in schema["paths"] and "post" in schema["paths"]["/v1/search"]


@pytest.mark.parametrize("query", ["\x0f\U000cc5db", "\ue000", "e\u0301", "\u3000\u200b", "\x00\x85", "\u2066\u2069", "\U000e0041"])
def test_the_schema_says_which_queries_are_empty_as_the_server_decides(client, query):
    """schemathesis sent "\x0f" and an unassigned code point, which the schema's pattern (\\S) allowed and
    the server refused as EMPTY_QUERY (ST202, "schema-valid request rejected"): a client validating
    against /schema was told one thing and the server did another. Now the pattern is the rule."""
    import re

    described = client.get("/schema/openapi.json").json()["components"]["schemas"]["SearchRequest"]["properties"]["query"]
    pattern = described["pattern"]
    assert "up to 2000 characters" in described["description"] and "EMPTY_QUERY" in described["description"]
    answered = client.post("/v1/search", json={"query": query}).status_code
    assert answered == (200 if re.search(pattern, query) else 400), (pattern, answered)


def test_a_snippet_does_not_repeat_the_heading_shown_above_it(client):
    """A result shows the title and heading path, then the snippet: a chunk that opens with its
    own heading reads from the words under it, while the hit's text keeps the heading."""
    top = search(client, query="how do I undo a bad index run?", top_k=1)["hits"][0]
    assert top["heading_path"][-1] == "Rolling back a bad run" and top["text"].startswith("## Rolling back a bad run\n")
    assert top["snippet"].startswith("If a <mark>run</mark> <mark>indexed</mark> something wrong"), top["snippet"]


def test_headings_and_title_lines_stay_in_a_snippet_unless_they_repeat_what_is_shown():
    from server.snippets import snippet

    text = "# Returns\n\n## Refunds ##\n\nMoney back within **14 days**."
    assert snippet(text, "refunds", shown=("Returns", "Refunds")) == "Money back within 14 days."
    assert snippet(text, "refunds", shown=("Returns",)) == "<mark>Refunds</mark> Money back within 14 days."
    assert snippet(text, "refunds") == "Returns <mark>Refunds</mark> Money back within 14 days."
    assert snippet("## Refunds\n", "", shown=("Refunds",)) == "Refunds", "a text of headings only keeps them"
    assert snippet("Returns\n\nMoney back.", "", shown=("Returns",)) == "Money back.", "a text file's first line is its title"
    assert snippet("Returns are free.\n\nMoney back.", "", shown=("Returns",)) == "Returns are free. Money back."


def test_wiki_links_footnotes_and_admonitions_read_as_their_words():
    """An Obsidian or Foam vault indexed as files: its snippets showed [[Refund policy]] and [^1];
    a Docusaurus or VuePress site's showed ":::tip"."""
    from server.snippets import snippet

    notes = "See [[Refund policy]] and [[Refunds#Cards|the card page]].![[diagram.png]] Paid in 5 days[^1].\n\n[^1]: Business days."
    assert snippet(notes, "refund") == "See <mark>Refund</mark> policy and the card page. Paid in 5 days. Business days."
    admonitions = ":::tip Pro tip\n\nRefunds are quick.\n\n:::\n\n::: warning\nCards take longer.\n:::\n\n:::note[Heads up]\nNo cash.\n:::"
    assert snippet(admonitions, "refunds") == "Pro tip <mark>Refunds</mark> are quick. Cards take longer. Heads up No cash."
    assert snippet("Ratio 16:9 fits: see below", "") == "Ratio 16:9 fits: see below"
    references = 'Read [the refund policy][policy] and [FAQ][].\n\n[policy]: https://shop.example/refunds "Refunds"\n[faq]: /faq'
    assert snippet(references, "refund") == "Read the <mark>refund</mark> policy and FAQ."


def test_list_items_table_rows_and_code_lines_stay_apart_in_a_snippet():
    """A snippet is one line: items, rows and code lines that do not end a sentence end with ";"
    rather than running into the next ("missing API key 3 · the delete guard…" read as one phrase)."""
    from server.snippets import snippet

    table = "| code | meaning |\n|---|---|\n| 0 | success |\n| 1 | a fatal error |\n\nSee the log."
    assert snippet(table, "") == "code · meaning; 0 · success; 1 · a fatal error; See the log."
    items = "Steps:\n\n- install the package\n- write index.toml,\n  then run it\n- serve"
    assert snippet(items, "serve") == "Steps: install the package; write index.toml, then run it; <mark>serve</mark>"
    assert snippet("Prose wrapped\nover lines\n\nand a paragraph", "") == "Prose wrapped over lines and a paragraph"
    assert snippet("Run it:\n\n```\nindex runs\nindex rollback\n```\nDone.", "") == "Run it: index runs; index rollback; Done."
    assert snippet("```toml\na = 1\nb = 2\n```", "") == "a = 1; b = 2"
    assert snippet("Pipe it:\n\n```\nls | wc -l | sort\n```", "") == "Pipe it: ls | wc -l | sort", "code is not a table"
    cut_inside_code = "x = 1\n```\n\nProse wrapped\nover lines"  # a chunk that starts inside a code block
    assert snippet(cut_inside_code, "") == "x = 1 Prose wrapped over lines", "its closing fence opens nothing"


@pytest.mark.parametrize("query", ["what does exit code 4 mean?", "how do I roll back with index rollback?", "which keys does the configuration file accept?"])
def test_snippets_read_as_text_while_the_hit_keeps_its_markdown(client, query):
    hits = client.post("/v1/search", json={"query": query, "top_k": 5}).json()["hits"]
    assert any(any(mark in h["text"] for mark in ("##", "**", "`", "|")) for h in hits), "the chunks this checks do hold Markdown"
    for h in hits:
        plain = h["snippet"].replace("<mark>", "").replace("</mark>", "")
        assert not any(mark in plain for mark in ("##", "**", "`", "| ", "---")), plain
