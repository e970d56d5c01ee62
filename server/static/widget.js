/* static-rag search widget: one <script> tag on any page.
 *
 *   <div id="help-search"></div>
 *   <script src="https://search.example.com/widget.js" data-target="#help-search" defer></script>
 *
 * Options (data-* attributes on the script tag):
 *   data-target       CSS selector of the element to fill (default: a new element after the script)
 *   data-endpoint     search URL (default: /v1/search on the server that served this script)
 *   data-top-k        hits per page, 1 to 50 (default 5; another value is warned about in the console)
 *   data-source       only documents of this source
 *   data-space        the embedding space to search (default: the server's default space; see /v1/info)
 *   data-api-key      sent as a Bearer key; anyone can read it in the page, so use a key scoped
 *                     to this site's sources, and rely on CORS and the rate limit for the rest
 *   data-placeholder  the search box's placeholder text
 *   data-theme        "none": no default stylesheet (style the classes below yourself)
 *   data-parse-time   "false": do not read time phrases ("last week", "since Monday") as date filters
 *   data-timeout      seconds to wait for the server, 1 to 120 (default 15)
 * The server must list this page's origin in [server] cors_origins unless both share an origin;
 * when it does not, the widget says so ("this site's origin … is not allowed by the search server").
 * A server that does not answer in time is reported ("did not answer within 15 s"), not waited on.
 * A page with a Content-Security-Policy must allow the server in connect-src (the widget says so
 * when it does not); the default stylesheet takes the script tag's nonce, and where the policy
 * refuses inline styles anyway it is added as a constructed stylesheet, which the policy allows.
 *
 * Markup and classes (the default stylesheet has zero specificity, so any rule of the page wins):
 *   .srag (the target element; + .srag-unanswered, .srag-error)  form.srag-form  input.srag-input
 *   button.srag-button  p.srag-status  button.srag-show-anyway  ol.srag-results  li.srag-hit
 *   a.srag-title (span without a url; href = link, else url)  span.srag-page (PDFs)  div.srag-path  p.srag-snippet (with <mark>)  button.srag-more
 *   div.srag-answers > div.srag-answer (p.srag-answer-question, p.srag-answer-text, a.srag-answer-link)
 *
 * Curated answers (`answers` in the response) are shown first, in div.srag-answer boxes.
 * When the server says no hit answers the question (`answerable: false`), the widget says so
 * instead of listing weak hits; a "Show anyway" button lists them. When the server could not
 * embed the question and BM25 alone answered (`degraded`), the status line says "matched by
 * keywords only", and its tooltip gives the server's reason.
 */
(function () {
  "use strict";
  var script = document.currentScript;
  var opts = script ? script.dataset : {};
  var origin = script ? new URL(script.src, location.href).origin : location.origin;
  var endpoint = opts.endpoint || origin + "/v1/search";
  // A mistyped number is named in the console and its default used: the server would refuse every
  // search over a bad top-k with a message that does not name the attribute.
  function wholeNumber(value, attribute, low, high, fallback, unit) {
    if (value === undefined) return fallback;
    var n = parseInt(value, 10);
    if (n >= low && n <= high && String(n) === String(value).trim()) return n;
    console.warn("static-rag widget: " + attribute + " must be a whole number from " + low + " to " + high + "; got \"" + value + "\"; using " + fallback + unit);
    return fallback;
  }
  var topK = wholeNumber(opts.topK, "data-top-k", 1, 50, 5, " results");

  function counted(n, more, word) {  // "1 result", "5+ results"
    return n + (more ? "+ " : " ") + word + (n === 1 && !more ? "" : "s");
  }

  // The default look: every rule inside :where(), so a page's own CSS overrides it at any specificity.
  // Text takes the page's own colour (secondary text a little fainter), and tints are translucent,
  // so the widget reads as well on a dark site as on a light one.
  var STYLE = [
    ":where(.srag){display:block;max-width:100%;box-sizing:border-box}",
    ":where(.srag) :where(*){box-sizing:border-box}",
    ":where(.srag-form){display:flex;gap:.5rem;width:100%}",
    ":where(.srag-input){flex:1 1 auto;min-width:0;font:inherit;padding:.55rem .75rem;border:1px solid #b8bcc4;border-radius:6px;background:#fff;color:#222}",
    ":where(.srag-button){flex:0 0 auto;font:inherit;padding:.55rem 1rem;border:0;border-radius:6px;background:#2a5bd7;color:#fff;cursor:pointer}",
    ":where(.srag-more:disabled){opacity:.6;cursor:progress}",
    ":where(.srag-more,.srag-show-anyway){font:inherit;font-size:.9em;padding:.4rem .9rem;margin:.25rem 0;border:1px solid #c9ccd2;border-radius:6px;background:#f4f5f7;color:#222;cursor:pointer}",
    ":where(.srag-status){margin:.5rem 0;opacity:.8;font-size:.9em}",
    ":where(.srag-unanswered .srag-status){opacity:1;font-weight:600}",
    ":where(.srag-error .srag-status){opacity:1;font-weight:600;border-left:3px solid #d93025;padding-left:.5rem}",
    ":where(.srag-results){list-style:none;margin:0;padding:0}",
    ":where(.srag-hit){padding:.6rem 0;border-top:1px solid rgba(128,128,128,.3);overflow-wrap:anywhere}",
    ":where(.srag-title){font-weight:600}",
    ":where(.srag-path,.srag-page){opacity:.8;font-size:.85em}",
    ":where(.srag-snippet){margin:.2rem 0 0}",
    ":where(.srag-answer){background:rgba(59,111,216,.12);border-left:3px solid #3b6fd8;padding:.5rem .75rem;margin:.5rem 0}",
    ":where(.srag-answer-question){font-weight:600;margin:0}",
    ":where(.srag-answer-text){margin:.25rem 0}",
    ":where(.srag mark){background:#ffe58a;color:#222;padding:0 .1em}"
  ].join("\n");

  function addStyle() {
    if (opts.theme === "none" || document.getElementById("srag-style")) return;
    var style = document.createElement("style");
    style.id = "srag-style";
    if (script && script.nonce) style.nonce = script.nonce;  // a Content-Security-Policy that allows styles by nonce
    style.textContent = STYLE;
    document.head.insertBefore(style, document.head.firstChild);  // first: the page's own sheets come after it
    if (!style.sheet && "adoptedStyleSheets" in document) {
      // The page's Content-Security-Policy refused an inline stylesheet; it does not govern a constructed one.
      try {
        var sheet = new CSSStyleSheet();
        sheet.replaceSync(STYLE);
        document.adoptedStyleSheets = [sheet].concat(Array.from(document.adoptedStyleSheets));
      } catch (e) { /* unstyled, still working */ }
    }
  }

  // A page's Content-Security-Policy may refuse connections to the search server (connect-src):
  // fetch then fails as it does for a server that is down, so the violation is remembered to say so.
  var server = new URL(endpoint, location.href).origin;
  // A search answers in milliseconds; past this the server or a proxy in between is stuck.
  var TIMEOUT_SECONDS = wholeNumber(opts.timeout, "data-timeout", 1, 120, 15, " s");
  var refusedByPolicy = false;
  document.addEventListener("securitypolicyviolation", function (e) {
    if (e.effectiveDirective === "connect-src" && (e.blockedURI || "").indexOf(server) === 0) refusedByPolicy = true;
  });

  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text) node.textContent = text;
    return node;
  }

  // The API escapes snippets and adds only <mark>; still, keep nothing but text and <mark>.
  function snippetNode(html) {
    var out = el("p", "srag-snippet");
    var parsed = new DOMParser().parseFromString("<p>" + html + "</p>", "text/html").body.firstChild;
    parsed.childNodes.forEach(function (n) {
      if (n.nodeName === "MARK") out.appendChild(el("mark", null, n.textContent));
      else out.appendChild(document.createTextNode(n.textContent));
    });
    return out;
  }

  // Web, mail and phone links only: a `javascript:` url (front matter or an answers file indexed
  // before the indexer refused them) must never become a link that runs script in this page.
  function linkable(url) {
    try { return /^(https?|mailto|tel):$/.test(new URL(url, document.baseURI).protocol) ? url : null; } catch (e) { return null; }
  }

  function hitNode(hit) {
    var item = el("li", "srag-hit");
    // `link` points at the passage (a heading's #fragment, a PDF's #page=N); `url` at the page.
    var target = linkable(hit.link || hit.url);
    var title = el(target ? "a" : "span", "srag-title", hit.title || hit.doc_id);
    if (target) { title.href = target; title.rel = "noopener"; }
    item.appendChild(title);
    if (hit.page_start) {
      var pages = hit.page_end && hit.page_end !== hit.page_start ? "pp. " + hit.page_start + "–" + hit.page_end : "p. " + hit.page_start;
      item.appendChild(el("span", "srag-page", " " + pages));
    }
    if (hit.heading_path && hit.heading_path.length > 1) {
      item.appendChild(el("div", "srag-path", hit.heading_path.slice(1).join(" › ")));
    }
    item.appendChild(snippetNode(hit.snippet || ""));
    return item;
  }

  // A curated answer (a source of type "answers"): shown above the hits, as the team wrote it.
  function answerNode(answer) {
    var box = el("div", "srag-answer");
    box.appendChild(el("p", "srag-answer-question", answer.question));
    box.appendChild(el("p", "srag-answer-text", answer.answer));
    if (answer.url && linkable(answer.url)) {
      var link = el("a", "srag-answer-link", "Read more");
      link.href = answer.url;
      link.rel = "noopener";
      box.appendChild(link);
    }
    return box;
  }

  function mount(root) {
    root.classList.add("srag");
    var form = el("form", "srag-form");
    form.setAttribute("role", "search");
    var input = el("input", "srag-input");
    input.type = "search";
    input.name = "q";
    input.placeholder = opts.placeholder || "Search the docs";
    input.setAttribute("aria-label", input.placeholder);
    var button = el("button", "srag-button", "Search");
    form.append(input, button);
    var status = el("p", "srag-status");
    status.setAttribute("aria-live", "polite");
    var answers = el("div", "srag-answers");
    var list = el("ol", "srag-results");
    var more = el("button", "srag-more", "More results");
    more.type = "button";
    more.hidden = true;
    var anyway = el("button", "srag-show-anyway", "Show anyway");
    anyway.type = "button";
    anyway.hidden = true;
    root.append(form, status, answers, anyway, list, more);
    var nextOffset = null, lastQuery = "", keywordsOnly = "";
    // The search asked last: an answer to an earlier one (a visitor who fixed a typo and pressed
    // Enter again while it was on its way) is dropped, whichever order the answers arrive in.
    var latest = 0;

    function run(query, offset) {
      var mine = ++latest;
      var body = { query: query, top_k: topK, offset: offset };
      if (opts.source) body.filters = { source: opts.source };
      if (opts.space) body.space = opts.space;
      // "what changed last week?": the server reads the phrase as a date filter, in the visitor's time zone
      if (opts.parseTime !== "false") {
        body.parse_time = true;
        try { body.timezone = Intl.DateTimeFormat().resolvedOptions().timeZone; } catch (e) { /* UTC */ }
      }
      var headers = { "content-type": "application/json" };
      if (opts.apiKey) headers.authorization = "Bearer " + opts.apiKey;
      status.textContent = "Searching…";
      // Only "More results" waits: a disabled search button would make the browser drop the next Enter.
      more.disabled = true;
      // A server or a proxy that takes the request and never answers left "Searching…" for minutes.
      var controller = window.AbortController ? new AbortController() : null;
      var timer = controller && setTimeout(function () { controller.abort(); }, TIMEOUT_SECONDS * 1000);
      fetch(endpoint, { method: "POST", headers: headers, body: JSON.stringify(body), signal: controller ? controller.signal : undefined })
        .then(function (r) {
          return r.json().catch(function () { return { code: "BAD_RESPONSE", message: "the server sent no JSON" }; })
            .then(function (data) { return { ok: r.ok, status: r.status, data: data, retry: r.headers.get("retry-after") }; });
        })
        .then(function (res) {
          if (mine !== latest) return;
          root.classList.toggle("srag-error", !res.ok);
          if (!res.ok) {
            status.textContent = res.status === 429
              ? "Too many searches; try again in " + (res.retry || "a few") + " s."
              : "Search failed: " + (res.data.message || res.status);
            return;
          }
          if (offset === 0) {
            list.replaceChildren();
            answers.replaceChildren.apply(answers, (res.data.answers || []).map(answerNode));
          }
          res.data.hits.forEach(function (h) { list.appendChild(hitNode(h)); });
          var shown = list.children.length;
          nextOffset = res.data.next_offset;
          var unanswered = offset === 0 && shown && res.data.answerable === false;
          root.classList.toggle("srag-unanswered", unanswered);
          list.hidden = unanswered;
          anyway.hidden = !unanswered;
          more.hidden = unanswered || nextOffset === null;
          var when = res.data.time_filter;
          if (unanswered) status.textContent = "Nothing in these documents answers that.";
          else if (!shown && when && when.only_time) status.textContent = "Nothing was updated " + when.phrase + ".";  // "what changed yesterday?"
          else status.textContent = (shown ? counted(shown, nextOffset !== null, "result") : "No results for “" + query + "”.")
            + (when ? " (updated " + when.phrase + ")" : "");
          // The query could not be embedded (provider down, key missing): BM25 alone answered. Say so; the reason is for the site's owner.
          keywordsOnly = res.data.degraded ? " · matched by keywords only" : "";
          if (keywordsOnly) status.textContent = status.textContent.replace(/\.$/, "") + keywordsOnly;
          status.title = res.data.degraded_reason || "";
        })
        .catch(function (err) {
          if (mine !== latest) return;
          if (err && err.name === "AbortError") {
            root.classList.add("srag-error");
            status.textContent = "Search failed: the search server did not answer within " + TIMEOUT_SECONDS + " s.";
            return;
          }
          return unreachable(err);
        })
        .finally(function () {
          clearTimeout(timer);
          if (mine === latest) more.disabled = false;
        });
    }

    // A script cannot tell a refused CORS check from a server that is down: both are a bare
    // "Failed to fetch". A request that needs no CORS permission (its answer stays unreadable)
    // tells them apart: it reaches a running server whatever the origin.
    function unreachable(err) {
      root.classList.add("srag-error");
      var probe = server === location.origin ? Promise.reject(err) : fetch(server + "/healthz", { mode: "no-cors", cache: "no-store" });
      return probe.then(
        function () { status.textContent = "Search failed: this site's origin (" + location.origin + ") is not allowed by the search server; add it to [server] cors_origins."; },
        function () {
          return new Promise(function (done) { setTimeout(done, 50); }).then(function () {  // a violation is reported after the failure
            if (refusedByPolicy) status.textContent = "Search failed: this page's Content-Security-Policy does not allow connections to " + server + "; add it to connect-src.";
            else if (server === location.origin) status.textContent = "Search failed: the search server cannot be reached (" + err.message + ").";
            else status.textContent = "Search failed: the search server at " + server + " cannot be reached.";
          });
        });
    }

    form.addEventListener("submit", function (e) {
      e.preventDefault();
      lastQuery = input.value.trim();
      if (lastQuery) run(lastQuery, 0);
    });
    more.addEventListener("click", function () { if (nextOffset !== null) run(lastQuery, nextOffset); });
    anyway.addEventListener("click", function () {
      anyway.hidden = true;
      list.hidden = false;
      more.hidden = nextOffset === null;
      status.textContent = counted(list.children.length, nextOffset !== null, "weak result") + " (none seems to answer the question)" + keywordsOnly;
    });
  }

  // A data-target that matches nothing (a typo, an id renamed) is named in the console, and the box
  // goes after the script; a script in <head> would put it where nothing shows, so then it ends <body>.
  function start() {
    addStyle();
    var root = null;
    if (opts.target) {
      try { root = document.querySelector(opts.target); } catch (e) { /* not a CSS selector: named below */ }
      if (!root) console.warn("static-rag widget: data-target \"" + opts.target + "\" matches no element on this page; the search box is placed after the script instead");
    }
    if (!root) {
      root = document.createElement("div");
      if (script && document.body && document.body.contains(script)) script.parentNode.insertBefore(root, script.nextSibling);
      else document.body.appendChild(root);
    }
    mount(root);
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
