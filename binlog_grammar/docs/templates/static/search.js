// Client-side search of the binlog-grammar docs: no network; the index is the JSON element
// #search-index of search.html: {"entries": [[title, url, kind, text], ...]}.
(function () {
  "use strict";
  var box = document.getElementById("q");
  var list = document.getElementById("results");
  var count = document.getElementById("count");
  var data = document.getElementById("search-index");
  var entries = data ? JSON.parse(data.textContent).entries : [];
  if (!box || !list) { return; }

  // equal ranks: events first, then pages, types, enums, then the rest
  var PRIORITY = {"event": 0, "page": 1, "type": 2, "enum": 3, "flags": 3};

  // rank: exact name, name prefix, name substring, text substring (every word must match)
  function rank(e, words, whole) {
    var title = e[0].toLowerCase(), text = e[3].toLowerCase(), best = 0;
    if (title === whole) { return 0; }
    for (var i = 0; i < words.length; i++) {
      var w = words[i];
      var r = title.indexOf(w) === 0 ? 1 : title.indexOf(w) > 0 ? 2 : text.indexOf(w) >= 0 ? 3 : -1;
      if (r < 0) { return -1; }
      best = Math.max(best, r);
    }
    return best;
  }

  function show() {
    var whole = box.value.trim().toLowerCase();
    var words = whole.split(/\s+/).filter(Boolean);
    while (list.firstChild) { list.removeChild(list.firstChild); }
    if (!words.length) { count.textContent = entries.length + " entries in the index."; return; }
    var hits = [];
    for (var i = 0; i < entries.length; i++) {
      var r = rank(entries[i], words, whole);
      if (r >= 0) {
        var p = PRIORITY.hasOwnProperty(entries[i][2]) ? PRIORITY[entries[i][2]] : 5;
        hits.push([r, p, entries[i][0].length, i]);
      }
    }
    hits.sort(function (a, b) { return a[0] - b[0] || a[1] - b[1] || a[2] - b[2] || a[3] - b[3]; });
    count.textContent = hits.length ? hits.length + " match" + (hits.length === 1 ? "" : "es") +
      (hits.length > 100 ? " (first 100 shown)" : "") + "." : "No match.";
    hits.slice(0, 100).forEach(function (h) {
      var e = entries[h[3]];
      var li = document.createElement("li");
      var a = document.createElement("a");
      a.href = e[1];
      a.textContent = e[0];
      var kind = document.createElement("span");
      kind.className = "kind";
      kind.textContent = e[2];
      li.appendChild(a);
      li.appendChild(kind);
      if (e[3]) {
        var snip = document.createElement("span");
        snip.className = "snip";
        snip.textContent = e[3];
        li.appendChild(snip);
      }
      list.appendChild(li);
    });
  }

  var q = new URLSearchParams(window.location.search).get("q");
  if (q) { box.value = q; }
  box.addEventListener("input", show);
  show();
}());
