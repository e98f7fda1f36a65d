"""output/quoting.py's html(), script_json() and shell(), the only way binlog text enters the
report page of `stats --html`: fixed attacks and drawn names (quotes, `</script>`, NUL, controls,
bytes that are not UTF-8 as surrogateescape gives them, U+2028)."""
import html as std_html
import json
import re
import shlex
import subprocess

from hypothesis import given, settings
from hypothesis import strategies as st

from binlog_grammar.output import quoting
from binlog_grammar.output.report_html import page
from binlog_grammar.output.stats import Stats

ATTACKS = ["</script><script>alert(1)</script>", "<!--<script>", "\"'><img src=x onerror=alert(1)>",
           "a\x00b", "\udcff\udcfe", "line\u2028sep", "&amp;&lt;", "`$(touch /tmp/x)`", "a'b", "\\"]
_ALPHABET = st.sampled_from(list("<>/&\"'`;=$()\\ \n\r\t\x00\x1a\x7f\x85\u2028\u2029\udc80\udcff") +
                            ["script", "</script", "<!--", "é", "€", "a"])
NAMES = st.lists(_ALPHABET, max_size=12).map("".join)


def _checks(text):
    h = quoting.html(text)
    assert not re.search(r"[<>\"'\x00-\x08\x0b-\x1f\x7f\ud800-\udfff\u2028\u2029]", h)
    assert not re.search(r"&(?!(amp|lt|gt|quot|#39);)", h)
    # what the browser shows is the text, with unseen characters as visible escapes
    shown = std_html.unescape(h)
    if not re.search(r"[\\\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]", text):
        assert shown == text
    j = quoting.script_json({"name": text})
    assert j.isascii() and not re.search(r"[<>&]", j)
    assert json.loads(j) == {"name": text}
    s = quoting.shell(text)
    assert not re.search(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]", s)  # one visible line
    if not re.search(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]", text):
        assert shlex.split(s) == [text]


def test_fixed_attacks():
    for text in ATTACKS:
        _checks(text)
    assert quoting.html("</script>") == "&lt;/script&gt;"
    assert quoting.html("a\x00\udcff") == "a\\0\\xff"
    assert quoting.script_json("</script>") == '"\\u003c/script\\u003e"'


@settings(max_examples=300, derandomize=True, deadline=None)
@given(NAMES)
def test_drawn_names(text):
    _checks(text)


def test_shell_words_reach_a_shell_as_they_are():
    """The copyable command's words, bytes that are not UTF-8 and controls included, read back by
    bash as the same bytes."""
    for text in ATTACKS + ["x\ny", "tab\there", "\x1b[31m"]:
        word = quoting.shell(text)
        r = subprocess.run(["bash", "-c", f"printf %s {word}"], capture_output=True)
        assert r.stdout == text.encode("utf-8", "surrogateescape").replace(b"\x00", b"")[:len(r.stdout)]
        if "\x00" not in text:
            assert r.stdout == text.encode("utf-8", "surrogateescape"), text


class _Ev:
    inner = False

    def __init__(self, name, ts):
        self.name, self.file, self.offset, self.raw, self.data = name, "f", 4, b"x" * 10, {}
        self.header = type("H", (), {"server_id": 1, "timestamp": ts})()
        self.type = None


@settings(max_examples=25, derandomize=True, deadline=None)
@given(st.lists(NAMES, min_size=1, max_size=4))
def test_page_holds_names_only_as_text(names):
    """A page whose event types, GTIDs and files are drawn names: no `<` of them is markup, and
    the island reads back as the dict."""
    stats = Stats(figures=True)
    for i, n in enumerate(names):
        stats.events[n] += 1
        stats.files.add(n)
        stats.add_summary({"gtid": n, "file": n, "pos": 4, "end_pos": 9, "bytes": 5, "changes": 0,
                           "seconds": 0, "end": "commit", "timestamp": 1700000000 + i})
    stats.filters = {"tables": names}
    d = stats.as_dict()
    text = page(d)
    body = text[text.index("</head>"):]
    # the only elements are the page's own
    tags = set(re.findall(r"<(/?[a-zA-Z0-9]+)", body))
    assert tags <= {"body", "/body", "h1", "h2", "h3", "p", "/p", "b", "/b", "span", "/span", "div",
                    "/div", "table", "/table", "tr", "/tr", "th", "/th", "td", "/td", "code",
                    "/code", "button", "/button", "script", "/script", "/html", "/head", "/h1", "/h2", "/h3"}
    assert body.count("<script") == 3 and body.count("</script") == 3
    island = body.split("<script type='application/json' id='bg-stats'>", 1)[1].split("</script>")[0]
    assert json.loads(island) == json.loads(json.dumps(d))
