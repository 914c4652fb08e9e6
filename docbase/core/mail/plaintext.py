"""The plain-text part of a message, derived from its HTML with :mod:`html.parser`.

Block elements (paragraphs, headings, lists, tables) become lines separated by a blank
line, ``<br>`` and list items a new line (items prefixed ``- ``), a link its text
followed by its address, ``<pre>`` keeps its lines; scripts, styles and the head are
dropped and every other run of whitespace becomes one space.
"""

from __future__ import annotations

from html.parser import HTMLParser

_SKIPPED = frozenset({"script", "style", "head", "title", "template", "noscript"})
_PARAGRAPHS = frozenset({
    "address", "article", "aside", "blockquote", "dl", "div", "figure", "footer", "form",
    "h1", "h2", "h3", "h4", "h5", "h6", "header", "main", "nav", "ol", "p", "pre",
    "section", "table", "ul",
})
_LINES = frozenset({"br", "dd", "dt", "hr", "li", "tr"})
_CELLS = frozenset({"td", "th"})


class _TextCollector(HTMLParser):
    """Collects the lines of text an HTML document shows."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.lines: list[str] = []
        self.line: list[str] = []
        self.skipping = 0
        self.preformatted = 0
        self.links: list[tuple[str, list[str]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _SKIPPED:
            self.skipping += 1
            return
        if tag in _PARAGRAPHS:
            self.end_line(blank=True)
        elif tag in _LINES:
            self.end_line(blank=False)
        attributes = dict(attrs)
        if tag == "li":
            self.line.append("- ")
        elif tag in _CELLS:
            self.space()
        elif tag == "pre":
            self.preformatted += 1
        elif tag == "a":
            self.links.append((attributes.get("href") or "", []))
        elif tag == "img" and attributes.get("alt"):
            self.words(attributes["alt"] or "")

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIPPED:
            self.skipping = max(0, self.skipping - 1)
        elif tag in _PARAGRAPHS:
            self.end_line(blank=True)
            if tag == "pre":
                self.preformatted = max(0, self.preformatted - 1)
        elif tag in _LINES:
            self.end_line(blank=False)
        elif tag == "a" and self.links:
            href, shown = self.links.pop()
            text = " ".join("".join(shown).split())
            if href and not href.startswith(("#", "javascript:")) and \
                    href.removeprefix("mailto:") != text:
                self.space()
                self.line.append(f"({href})")

    def handle_data(self, data: str) -> None:
        if self.skipping:
            return
        for _, shown in self.links:
            shown.append(data)
        if self.preformatted:
            first, *rest = data.split("\n")
            self.line.append(first)
            for part in rest:
                self.lines.append("".join(self.line).rstrip())
                self.line = [part]
            return
        self.words(data)

    def words(self, data: str) -> None:
        """Add ``data`` to the current line, its whitespace runs made one space."""
        if data[:1].isspace():
            self.space()
        words = data.split()
        if words:
            self.line.append(" ".join(words))
            if data[-1:].isspace():
                self.space()

    def space(self) -> None:
        """Separate what follows from what the line holds, by one space."""
        if self.line and not self.line[-1].endswith(" "):
            self.line.append(" ")

    def end_line(self, *, blank: bool) -> None:
        """Finish the current line; with ``blank``, leave one empty line after it."""
        text = "".join(self.line)
        text = text.rstrip() if self.preformatted else text.strip()
        self.line = []
        if text:
            self.lines.append(text)
        if blank and self.lines and self.lines[-1]:
            self.lines.append("")

    def text(self) -> str:
        """The collected text: lines joined, no leading or trailing blank lines."""
        self.close()
        self.end_line(blank=False)
        kept: list[str] = []
        for line in self.lines:
            if line or (kept and kept[-1]):
                kept.append(line)
        while kept and not kept[-1]:
            kept.pop()
        return "\n".join(kept)


def html_to_text(html: str) -> str:
    """The text an HTML message shows, as readable plain text.

    For example ``<h1>Order</h1><p>Ready: <a href="https://x.test/1">see it</a></p>``
    gives the two lines ``Order`` and ``Ready: see it (https://x.test/1)`` with a blank
    line between them.
    """
    collector = _TextCollector()
    collector.feed(html)
    return collector.text()
