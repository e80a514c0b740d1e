(function () {
  "use strict";
  // Everything from scanned files reaches the page through textContent / text nodes only.
  var DATA = JSON.parse(document.getElementById("report-data").textContent);
  var S = DATA.statuses;
  var LABELS = DATA.statusLabels;
  var PAGE_FINDINGS = 100;
  var PAGE_FILES = 25;
  var F_FILE = 0, F_CELL = 1, F_LINE = 2, F_COL = 3, F_RULE = 4, F_STATUS = 5, F_API = 6, F_MSG = 7;
  var FILE_PATH = 0, FILE_KIND = 1, FILE_STATUS = 2, FILE_ERROR = 3, FILE_LINES = 4, FILE_DIFF = 5, FILE_EXCERPTS = 6;

  function $(id) { return document.getElementById(id); }

  function el(tag, attrs) {
    var node = document.createElement(tag);
    if (attrs) {
      Object.keys(attrs).forEach(function (key) {
        var value = attrs[key];
        if (value === null || value === undefined) return;
        if (key === "class") node.className = value;
        else if (key === "text") node.textContent = String(value);
        else node.setAttribute(key, String(value));
      });
    }
    for (var i = 2; i < arguments.length; i++) {
      var child = arguments[i];
      if (child === null || child === undefined) continue;
      node.append(child);
    }
    return node;
  }

  var lower = {
    paths: DATA.files.map(function (f) { return f[FILE_PATH].toLowerCase(); }),
    messages: DATA.messages.map(function (m) { return m.toLowerCase(); }),
    apis: DATA.apis.map(function (a) { return a.toLowerCase(); }),
    rules: DATA.rules.map(function (r) { return r.toLowerCase(); })
  };
  var byFile = DATA.files.map(function () { return []; });
  DATA.findings.forEach(function (f, i) { byFile[f[F_FILE]].push(i); });

  var state = { api: "", rule: "", statuses: {}, file: "", q: "", findingPage: 0, filePage: 0 };
  S.forEach(function (s) { state.statuses[s] = true; });
  var shown = [];
  var shownFiles = [];
  var shownSet = new Uint8Array(DATA.findings.length);

  function statusesAll() { return S.every(function (s) { return state.statuses[s]; }); }
  function findingFilterActive() { return !!(state.api || state.rule || state.q || !statusesAll()); }

  function matches(f) {
    if (state.api && DATA.apis[f[F_API]] !== state.api) return false;
    if (state.rule && DATA.rules[f[F_RULE]] !== state.rule) return false;
    if (!state.statuses[S[f[F_STATUS]]]) return false;
    if (state.file && lower.paths[f[F_FILE]].indexOf(state.file) < 0) return false;
    if (state.q) {
      var q = state.q;
      if (lower.messages[f[F_MSG]].indexOf(q) < 0 && lower.apis[f[F_API]].indexOf(q) < 0 &&
          lower.rules[f[F_RULE]].indexOf(q) < 0 && lower.paths[f[F_FILE]].indexOf(q) < 0) return false;
    }
    return true;
  }

  function applyFilters() {
    shown = [];
    shownSet = new Uint8Array(DATA.findings.length);
    var hit = new Uint8Array(DATA.files.length);
    for (var i = 0; i < DATA.findings.length; i++) {
      if (matches(DATA.findings[i])) { shown.push(i); shownSet[i] = 1; hit[DATA.findings[i][F_FILE]] = 1; }
    }
    var active = findingFilterActive();
    shownFiles = [];
    for (var j = 0; j < DATA.files.length; j++) {
      var file = DATA.files[j];
      if (hit[j]) shownFiles.push(j);
      else if (!active && (!state.file || lower.paths[j].indexOf(state.file) >= 0) && (file[FILE_DIFF] || file[FILE_ERROR])) shownFiles.push(j);
    }
    state.findingPage = 0;
    state.filePage = 0;
    renderFindings();
    renderFiles();
    markApiRows();
  }

  // -- highlighting (a line at a time; good enough for excerpts) ------------------------------
  var KEYWORDS = {};
  ("False None True and as assert async await break class continue def del elif else except finally for from " +
   "global if import in is lambda nonlocal not or pass raise return try while with yield").split(" ").forEach(function (k) { KEYWORDS[k] = true; });
  var TOKEN = /#.*|[rRbBuUfF]{0,2}(?:"""|'''|"(?:[^"\\]|\\.)*"?|'(?:[^'\\]|\\.)*'?)|\b\d[\d_]*(?:\.\d*)?(?:[eE][+-]?\d+)?j?\b|@[\w.]+|[A-Za-z_]\w*/g;

  function highlight(line, parent) {
    var last = 0, m;
    TOKEN.lastIndex = 0;
    while ((m = TOKEN.exec(line)) !== null) {
      var t = m[0], cls = null;
      if (t.charAt(0) === "#") cls = "tok-com";
      else if (/^[rRbBuUfF]{0,2}["']/.test(t)) cls = "tok-str";
      else if (/^\d/.test(t)) cls = "tok-num";
      else if (t.charAt(0) === "@") cls = "tok-dec";
      else if (KEYWORDS[t]) cls = "tok-kw";
      if (cls) {
        if (m.index > last) parent.append(line.slice(last, m.index));
        parent.append(el("span", { "class": cls, text: t }));
        last = m.index + t.length;
      }
    }
    if (last < line.length) parent.append(line.slice(last));
  }

  // -- findings table -------------------------------------------------------------------------
  function where(f) {
    return DATA.files[f[F_FILE]][FILE_PATH] + (f[F_CELL] ? ":cell " + f[F_CELL] : "");
  }

  function badge(status) {
    var i = S.indexOf(status);
    return el("span", { "class": "badge s-" + status, text: i >= 0 ? LABELS[i] : status });
  }

  function pager(container, page, total, perPage, onPage) {
    container.textContent = "";
    var pages = Math.max(1, Math.ceil(total / perPage));
    if (pages <= 1) return;
    var prev = el("button", { type: "button", text: "‹ Previous" });
    var next = el("button", { type: "button", text: "Next ›" });
    prev.disabled = page <= 0;
    next.disabled = page >= pages - 1;
    prev.addEventListener("click", function () { onPage(page - 1); });
    next.addEventListener("click", function () { onPage(page + 1); });
    container.append(prev, el("span", { "class": "page", text: "page " + (page + 1) + " of " + pages }), next);
  }

  function renderFindings() {
    var body = $("finding-rows");
    body.textContent = "";
    var start = state.findingPage * PAGE_FINDINGS;
    var end = Math.min(shown.length, start + PAGE_FINDINGS);
    var frag = document.createDocumentFragment();
    for (var k = start; k < end; k++) {
      var idx = shown[k], f = DATA.findings[idx];
      var row = el("tr", { "data-finding": idx },
        el("td", { "class": "file path", text: where(f) }),
        el("td", { "class": "num", text: f[F_LINE] + ":" + f[F_COL] }),
        el("td", null, el("a", { href: "#rule-" + DATA.rules[f[F_RULE]], text: DATA.rules[f[F_RULE]] })),
        el("td", null, el("code", { text: DATA.apis[f[F_API]] })),
        el("td", null, badge(S[f[F_STATUS]])),
        el("td", { text: DATA.messages[f[F_MSG]] }));
      frag.append(row);
    }
    body.append(frag);
    var count = $("f-count");
    count.setAttribute("data-shown", shown.length);
    count.setAttribute("data-total", DATA.findings.length);
    count.textContent = shown.length === DATA.findings.length
      ? DATA.findings.length + " findings" + (shown.length > PAGE_FINDINGS ? ", " + (start + 1) + "–" + end + " shown" : "")
      : shown.length + " of " + DATA.findings.length + " findings match" + (shown.length > PAGE_FINDINGS ? ", " + (start + 1) + "–" + end + " shown" : "");
    pager($("finding-pager"), state.findingPage, shown.length, PAGE_FINDINGS, function (p) {
      state.findingPage = p; renderFindings(); $("findings").scrollIntoView();
    });
  }

  $("finding-rows").addEventListener("click", function (event) {
    if (event.target.closest("a")) return;
    var row = event.target.closest("tr");
    if (!row) return;
    var idx = Number(row.getAttribute("data-finding"));
    openFile(DATA.findings[idx][F_FILE], idx);
  });

  // -- files ----------------------------------------------------------------------------------
  function fileCounts(fileIndex) {
    var counts = {};
    byFile[fileIndex].forEach(function (i) { var s = S[DATA.findings[i][F_STATUS]]; counts[s] = (counts[s] || 0) + 1; });
    return counts;
  }

  function renderFiles() {
    var list = $("file-list");
    list.textContent = "";
    var start = state.filePage * PAGE_FILES;
    var end = Math.min(shownFiles.length, start + PAGE_FILES);
    var frag = document.createDocumentFragment();
    for (var k = start; k < end; k++) {
      var i = shownFiles[k], file = DATA.files[i];
      var summary = el("summary", null, el("code", { "class": "path", text: file[FILE_PATH] }), " ", badge(file[FILE_STATUS]));
      var counts = fileCounts(i);
      S.forEach(function (s) { if (counts[s]) summary.append(" ", el("span", { "class": "badge s-" + s, text: counts[s] + " " + LABELS[S.indexOf(s)] })); });
      if (file[FILE_LINES]) summary.append(" ", el("span", { "class": "badge", text: file[FILE_LINES] + " lines" }));
      var details = el("details", { "class": "file", id: "file-" + i, "data-file": i }, summary);
      details.addEventListener("toggle", function (event) { if (event.currentTarget.open) fileBody(event.currentTarget); });
      frag.append(details);
    }
    list.append(frag);
    var total = DATA.files.length;
    $("file-count").textContent = shownFiles.length + " file(s) with findings, changes or errors" +
      (shownFiles.length !== total ? " (" + total + " in the report)" : "") +
      (shownFiles.length > PAGE_FILES ? "; " + (start + 1) + "–" + end + " shown" : "");
    $("file-count").setAttribute("data-shown", shownFiles.length);
    pager($("file-pager"), state.filePage, shownFiles.length, PAGE_FILES, function (p) {
      state.filePage = p; renderFiles(); $("files").scrollIntoView();
    });
  }

  function codeBlock(excerpt, hits) {
    var pre = el("pre", { "class": "code" });
    var first = excerpt[1], lines = excerpt[2];
    for (var n = 0; n < lines.length; n++) {
      var number = first + n;
      var line = el("span", { "class": hits[number] ? "line hit" : "line" }, el("span", { "class": "ln", text: number }));
      highlight(lines[n], line);
      pre.append(line);
    }
    return pre;
  }

  function diffBlock(diff) {
    var pre = el("pre", { "class": "diff" });
    diff.split("\n").forEach(function (text, n, all) {
      if (n === all.length - 1 && text === "") return;
      var cls = "line";
      if (text.indexOf("+++ ") === 0 || text.indexOf("--- ") === 0) cls += " head";
      else if (text.charAt(0) === "+") cls += " add";
      else if (text.charAt(0) === "-") cls += " del";
      else if (text.indexOf("@@") === 0) cls += " hunk";
      pre.append(el("span", { "class": cls, text: text }));
    });
    return pre;
  }

  function fileBody(details) {
    if (details.getAttribute("data-rendered")) return;
    details.setAttribute("data-rendered", "1");
    var i = Number(details.getAttribute("data-file"));
    var file = DATA.files[i];
    var body = el("div", { "class": "body" });
    if (file[FILE_ERROR]) body.append(el("p", { "class": "error", text: file[FILE_ERROR] }));
    var all = byFile[i];
    var manual = all.filter(function (idx) { return S[DATA.findings[idx][F_STATUS]] === "manual"; });
    if (manual.length) {
      var ul = el("ul");
      manual.forEach(function (idx) {
        var f = DATA.findings[idx];
        ul.append(el("li", null, el("a", { href: "#finding-" + idx, text: (f[F_CELL] ? "cell " + f[F_CELL] + ", " : "") + "line " + f[F_LINE] }),
          " ", el("a", { href: "#rule-" + DATA.rules[f[F_RULE]], text: DATA.rules[f[F_RULE]] }), " ", DATA.messages[f[F_MSG]]));
      });
      body.append(el("div", { "class": "needs" }, el("strong", { text: "Needs a person (" + manual.length + ")" }), ul));
    }
    var visible = findingFilterActive() ? all.filter(function (idx) { return shownSet[idx]; }) : all;
    if (visible.length < all.length) body.append(el("p", { "class": "hint", text: (all.length - visible.length) + " finding(s) of this file hidden by the filters." }));
    file[FILE_EXCERPTS].forEach(function (excerpt) {
      var cell = excerpt[0], first = excerpt[1], last = first + excerpt[2].length - 1;
      var inside = visible.filter(function (idx) {
        var f = DATA.findings[idx];
        return f[F_CELL] === cell && f[F_LINE] >= first && f[F_LINE] <= last;
      });
      if (!inside.length) return;
      var hits = {};
      var block = el("div", { "class": "occurrence" });
      inside.forEach(function (idx) {
        var f = DATA.findings[idx];
        hits[f[F_LINE]] = true;
        block.append(el("div", { id: "finding-" + idx },
          el("span", { "class": "where", text: (cell ? "cell " + cell + ", " : "") + "line " + f[F_LINE] + ":" + f[F_COL] }), " ",
          el("a", { href: "#rule-" + DATA.rules[f[F_RULE]], text: DATA.rules[f[F_RULE]] }), " ",
          el("code", { text: DATA.apis[f[F_API]] }), " ", badge(S[f[F_STATUS]]), " ", DATA.messages[f[F_MSG]]));
      });
      block.append(codeBlock(excerpt, hits));
      body.append(block);
    });
    if (file[FILE_DIFF]) {
      body.append(el("h4", { text: DATA.written ? "What changed" : "What convert would change" }), diffBlock(file[FILE_DIFF]));
    }
    details.append(body);
  }

  function openFile(fileIndex, findingIndex) {
    var pos = shownFiles.indexOf(fileIndex);
    if (pos < 0) return;
    var page = Math.floor(pos / PAGE_FILES);
    if (page !== state.filePage || !$("file-" + fileIndex)) { state.filePage = page; renderFiles(); }
    var details = $("file-" + fileIndex);
    fileBody(details);
    details.open = true;
    var target = (findingIndex !== undefined && $("finding-" + findingIndex)) || details;
    target.scrollIntoView({ block: "center" });
  }

  // -- filters --------------------------------------------------------------------------------
  function markApiRows() {
    Array.prototype.forEach.call(document.querySelectorAll("tr.api-row"), function (row) {
      var on = (state.api && row.getAttribute("data-api") === state.api) && (!state.rule || row.getAttribute("data-rule") === state.rule);
      row.classList.toggle("selected", !!on);
    });
  }

  function readFilters() {
    state.api = $("f-api").value;
    state.rule = $("f-rule").value;
    S.forEach(function (s) { state.statuses[s] = $("f-status-" + s).checked; });
    state.file = $("f-file").value.trim().toLowerCase();
    state.q = $("f-q").value.trim().toLowerCase();
    applyFilters();
  }

  var timer = null;
  function readSoon() { clearTimeout(timer); timer = setTimeout(readFilters, 120); }

  $("f-api").addEventListener("change", readFilters);
  $("f-rule").addEventListener("change", readFilters);
  S.forEach(function (s) { $("f-status-" + s).addEventListener("change", readFilters); });
  $("f-file").addEventListener("input", readSoon);
  $("f-q").addEventListener("input", readSoon);
  $("filters").addEventListener("submit", function (event) { event.preventDefault(); readFilters(); });
  $("f-clear").addEventListener("click", function () {
    $("f-api").value = "";
    $("f-rule").value = "";
    S.forEach(function (s) { $("f-status-" + s).checked = true; });
    $("f-file").value = "";
    $("f-q").value = "";
    readFilters();
  });

  function pickApi(row) {
    $("f-api").value = row.getAttribute("data-api");
    $("f-rule").value = row.getAttribute("data-rule");
    readFilters();
    $("findings").scrollIntoView();
  }
  Array.prototype.forEach.call(document.querySelectorAll("tr.api-row"), function (row) {
    row.addEventListener("click", function (event) {
      if (event.target.closest("a, summary, details")) return;
      pickApi(row);
    });
    row.addEventListener("keydown", function (event) { if (event.key === "Enter") pickApi(row); });
  });

  applyFilters();
  document.documentElement.setAttribute("data-ready", "1");
})();
