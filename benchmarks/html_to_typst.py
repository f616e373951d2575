"""The report's HTML (templates/base.html and its partials, the subset they write) as Typst markup, for
benchmarks/report_typst.py: the same document laid out by another typesetter, so that its cost can be measured
against WeasyPrint's. A benchmark's converter, not a product: it knows the report's elements and classes and the
print style sheet's main rules (templates/print.css), and nothing else.

What it keeps: every heading, paragraph, list, key-value list, table (header rows repeated on a page break,
column and row spans, highlighted rows, right-aligned numbers), the plots (the same SVG text, as images: Typst
keeps their text as text), the contents with page numbers and dot leaders, page breaks before the families and
the appendices, the running header from page 2 and the footer (report date, "Page n of N"), the document's
metadata and the two attachments. What it approximates: boxes, colours, borders and spacing (close to the style
sheet, not measured against it); the spec's YAML colours come from Typst's own highlighter.

    from html_to_typst import convert
    stats = convert(html, root, attachments=[("spec.yaml", data, "source", "application/yaml", "The spec")])
    # root/main.typ, root/plots/*.svg and the attachments' files are written; compile root/main.typ
"""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

REM = 9.2                   # print.css: html { font-size: 9.2pt }: 1rem in pt
INK, MUTED, RULE, SOFT, ACCENT = "#1a1a1a", "#555555", "#c8c8c8", "#f3f3f3", "#1f3a5f"
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
BLOCK = {"p", "div", "section", "header", "main", "nav", "aside", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol",
         "li", "dl", "dt", "dd", "table", "figure", "figcaption", "pre", "details", "summary", "caption", "body"}
BLOCK_SPANS = {"sub", "ci-line", "query", "hash"}                 # spans with display: block in report.css
INLINE = {"strong": "#strong", "em": "#emph", "sub": "#sub", "sup": "#super", "small": "#text(size: 0.83em)"}
NOWRAP_SPANS = {"vi", "nw", "ci-line"}                            # white-space: nowrap
PAGE_BEFORE = {"sweeps", "provenance", "methods"}                 # print.css: break-before: page (by id)
WRAP = {  # class: the text style of an element of that class (a span's or a paragraph's)
    "v": "#strong", "org": "#strong", "undefined": "#emph", "not-defined": "#emph",
    "ci": '#text(fill: rgb("#333333"))', "description": '#text(fill: rgb("#333333"))',
    "title": f'#text(fill: rgb("{MUTED}"))', "mono": '#text(font: "DejaVu Sans Mono", size: 0.88em)',
    "hash": f'#text(font: "DejaVu Sans Mono", size: {0.75 * REM:.2f}pt, fill: rgb("#333333"))',
    "sub": f'#text(size: {0.78 * REM:.2f}pt, fill: rgb("{MUTED}"))', "query": f"#text(size: {0.8 * REM:.2f}pt)",
    "headline": f"#text(size: {1.1 * REM:.2f}pt)",
}
BADGES = {  # class: (symbol, fill, text colour, stroke)
    "badge-amplifies": ("▲", INK, "#ffffff", f"0.75pt + rgb(\"{INK}\")"),
    "badge-against": ("●", INK, "#ffffff", f"0.75pt + rgb(\"{INK}\")"),
    "badge-reduces": ("▼", None, INK, f"1.5pt + rgb(\"{INK}\")"),
    "badge-insufficient": ("○", None, "#333333", f"(paint: rgb(\"{INK}\"), thickness: 0.75pt, dash: \"dashed\")"),
    "badge-clear": ("✓", None, INK, f"1.5pt + rgb(\"{INK}\")"),
    "badge-descriptive": ("", None, "#333333", f"(paint: rgb(\"{INK}\"), thickness: 0.75pt, dash: \"dotted\")"),
    "badge-undefined": ("–", None, MUTED, f"(paint: rgb(\"{INK}\"), thickness: 0.75pt, dash: \"dotted\")"),
    "badge-lb-biased": ("◆", None, INK, f"1.5pt + rgb(\"{INK}\")"),
    "badge-lb-detectable": ("", None, "#333333", f"0.75pt + rgb(\"{INK}\")"),
    "badge-lb-small": ("–", None, MUTED, f"(paint: rgb(\"{INK}\"), thickness: 0.75pt, dash: \"dotted\")"),
}
GATES = {"gate-pass": ("✓ ", None, INK, "solid"), "gate-fail": ("✗ ", INK, "#ffffff", "solid"),
         "gate-inconclusive": ("? ", None, INK, "dashed")}
ROW_FILLS = (("family-head", ACCENT), ("metric-head", SOFT), ("hl", "#ececec"))   # print.css: tr.hl td #ececec
# A plot as reportgen.report.svg.finish writes it (the product's own pattern, reportgen.report._PLOT_SVG)
PLOT_SVG = re.compile(r'<svg\b[^>]*\sclass="plot"[^>]*>.*?</svg>', re.S)
_ATTR = re.compile(r'\s([a-zA-Z:-]+)="([^"]*)"')
_LABEL_OK = re.compile(r"^[A-Za-z0-9_.:-]+$")


@dataclass
class Node:
    tag: str
    attrs: dict[str, str]
    children: list = field(default_factory=list)

    @property
    def classes(self) -> set[str]:
        return set(self.attrs.get("class", "").split())


class _Tree(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("#root", {})
        self.stack = [self.root]

    def handle_starttag(self, tag, attrs):
        node = Node(tag, {k: (v or "") for k, v in attrs})
        self.stack[-1].children.append(node)
        if tag not in VOID:
            self.stack.append(node)

    def handle_startendtag(self, tag, attrs):
        self.stack[-1].children.append(Node(tag, {k: (v or "") for k, v in attrs}))

    def handle_endtag(self, tag):
        for i in range(len(self.stack) - 1, 0, -1):
            if self.stack[i].tag == tag:
                del self.stack[i:]
                return

    def handle_data(self, data):
        self.stack[-1].children.append(data)


def parse(html: str) -> Node:
    tree = _Tree()
    tree.feed(html)
    tree.close()
    return tree.root


def text_of(node) -> str:
    if isinstance(node, str):
        return node
    return "".join(text_of(c) for c in node.children)


def find(node: Node, pred) -> Node | None:
    for c in node.children:
        if isinstance(c, Node):
            if pred(c):
                return c
            hit = find(c, pred)
            if hit is not None:
                return hit
    return None


def lit(s: str) -> str:
    """A Typst string literal (no markup is read inside it)."""
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "") + '"'


def pt(rem: float) -> str:
    return f"{rem * REM:.2f}pt"


class Converter:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.ids: set[str] = set()
        self.labelled: set[str] = set()
        self.plots: list[str] = []
        self.in_toc = 0
        self.nowrap = 0
        self.hl_first = False

    # --- text ------------------------------------------------------------------------------------------------
    def text(self, s: str) -> str:
        if self.hl_first and s.strip():
            s, self.hl_first = "◆ " + s.lstrip(), False
        body = re.sub(r"[ \t\r\n\f]+", " ", s)
        if not body.strip():
            return " " if body else ""
        lead = " " if body[0] == " " else ""
        tail = " " if body[-1] == " " else ""
        return f"{lead}#{lit(body.strip())}{tail}"

    def inline(self, children) -> str:
        return "".join(self.node(c) for c in children)

    def label(self, node: Node) -> str:
        """``<id>`` for an element that links point at (once per id; ids Typst cannot spell are dropped)."""
        i = node.attrs.get("id")
        if not i or i not in self.ids or i in self.labelled or not _LABEL_OK.match(i):
            return ""
        self.labelled.add(i)
        return f" <{i}>"

    def anchor(self, node: Node) -> str:
        lab = self.label(node)
        return f"#metadata(none){lab}\n" if lab else ""

    # --- elements --------------------------------------------------------------------------------------------
    def node(self, n) -> str:
        if isinstance(n, str):
            return self.text(n)
        tag, cls = n.tag, n.classes
        if tag in INLINE:
            return f"{INLINE[tag]}[{self.inline(n.children)}]"
        method = getattr(self, "tag_" + tag, None)
        if method is not None:
            return method(n, cls)
        if tag == "span":
            return self.span(n, cls)
        if tag in ("head", "style", "script", "title", "meta"):
            return ""
        if tag in BLOCK or tag == "#root":
            return self.block_children(n)
        return self.inline(n.children)

    def block_children(self, n: Node) -> str:
        return "\n\n" + self.anchor(n) + self.inline(n.children) + "\n\n"

    def span(self, n: Node, cls: set[str]) -> str:
        if "badge" in cls:
            return self.badge(n, cls)
        if "gate" in cls:
            return self.gate(text_of(n), cls)
        body = self.styled(self.inline(n.children), cls)
        if "expl" in cls:
            body = f"#h({pt(0.4)})#text(size: {pt(0.8)}, fill: rgb(\"{MUTED}\"), weight: \"regular\")[{body}]"
        if cls & NOWRAP_SPANS and not cls & BLOCK_SPANS:
            body = f"#box[{body}]"
        if cls & BLOCK_SPANS:
            body = f"\n#block(above: 0.6em, below: 0.6em)[{body}]\n"
        return body

    @staticmethod
    def styled(body: str, cls: set[str]) -> str:
        """``body`` in the text styles of its classes (report.css and print.css, by hand)."""
        for c in sorted(cls & WRAP.keys()):
            body = f"{WRAP[c]}[{body}]"
        return body

    def badge(self, n: Node, cls: set[str]) -> str:
        plain = ("", None, INK, f"0.75pt + rgb(\"{INK}\")")
        sym, fill, ink, stroke = next((BADGES[c] for c in cls if c in BADGES), plain)
        weight = ', weight: "bold"' if "badge-lb-biased" in cls else ""
        body = self.inline(n.children)
        if sym:
            body = f"#{lit(sym + ' ')}{body}"
        fill_arg = f', fill: rgb("{fill}")' if fill else ""
        return (f"#box(inset: (x: {pt(0.45)}, y: 0.6pt), radius: {pt(0.8)}, stroke: {stroke}"
                f"{fill_arg})[#text(size: {pt(0.8)}, fill: rgb(\"{ink}\"){weight})[{body}]]")

    def gate(self, s: str, cls: set[str]) -> str:
        sym, fill, ink, dash = next((GATES[c] for c in cls if c in GATES), ("", None, INK, "solid"))
        fill_arg = f', fill: rgb("{fill}")' if fill else ""
        return (f"#box(inset: (x: {pt(0.5)}, y: 0.6pt), stroke: (paint: rgb(\"{INK}\"), "
                f"thickness: 1.5pt, dash: \"{dash}\"){fill_arg})[#text(size: {pt(0.8)}, weight: \"bold\", "
                f"tracking: 0.05em, fill: rgb(\"{ink}\"))[#{lit(sym + s.strip())}]]")

    def tag_a(self, n: Node, cls: set[str]) -> str:
        target = n.attrs.get("href", "")[1:]
        body = self.inline(n.children)
        if target not in self.ids or not _LABEL_OK.match(target):
            return body
        if self.in_toc:   # print.css: leader(".") target-counter(attr(href), page)
            return (f"#link(<{target}>)[{body}#box(width: 1fr, repeat[.])"
                    f"#context counter(page).at(<{target}>).first()]")
        return f"#link(<{target}>)[{body}]"

    def tag_bdi(self, n: Node, cls: set[str]) -> str:
        return self.span(n, cls)

    def tag_wbr(self, n: Node, cls: set[str]) -> str:
        return "#sym.zws"

    def tag_br(self, n: Node, cls: set[str]) -> str:
        return "#linebreak()"

    def tag_code(self, n: Node, cls: set[str]) -> str:
        return f"#raw({lit(text_of(n))})"

    def tag_div(self, n: Node, cls: set[str]) -> str:
        if "running-header" in cls:
            return ""                                   # the page header (document_settings)
        if "formula" in cls:                            # white-space: pre-wrap, monospace, a rule on the left
            return (f"\n\n{self.anchor(n)}#block(width: 100%, fill: rgb(\"#fafafa\"), inset: (x: {pt(0.7)}, "
                    f"y: {pt(0.4)}), stroke: (left: 2.25pt + rgb(\"{RULE}\")))[#set text(size: {pt(0.85)}); "
                    f"#raw({lit(text_of(n))}, block: true)]\n\n")
        if "explainer" in cls:
            return (f"\n\n{self.anchor(n)}#block(width: 100%, fill: rgb(\"{SOFT}\"), inset: (x: {pt(0.9)}, "
                    f"y: {pt(0.6)}), radius: 3pt)[{self.inline(n.children)}]\n\n")
        return self.block_children(n)

    def tag_section(self, n: Node, cls: set[str]) -> str:
        out = "\n\n"
        if "family" in cls or n.attrs.get("id") in PAGE_BEFORE:
            out += "#pagebreak(weak: true)\n"
        if "metric" in cls:                             # .metric { border-top: 1px solid var(--rule) }
            out += f"#v({pt(1.0)})#line(length: 100%, stroke: 0.75pt + rgb(\"{RULE}\"))\n"
        return out + self.anchor(n) + self.inline(n.children) + "\n\n"

    def tag_header(self, n: Node, cls: set[str]) -> str:
        return (f"\n\n{self.anchor(n)}#block(width: 100%, stroke: (bottom: 0.75pt + rgb(\"{RULE}\")), "
                f"inset: (bottom: {pt(0.6)}))[{self.inline(n.children)}]\n\n")

    def tag_aside(self, n: Node, cls: set[str]) -> str:
        return (f"\n\n{self.anchor(n)}#block(width: 100%, breakable: false, fill: rgb(\"{SOFT}\"), "
                f"inset: (x: {pt(0.8)}, y: {pt(0.5)}), radius: 3pt)[#set text(size: {pt(0.88)})\n"
                f"{self.inline(n.children)}]\n\n")

    def tag_nav(self, n: Node, cls: set[str]) -> str:
        self.in_toc += "toc" in cls
        try:
            return self.block_children(n)
        finally:
            self.in_toc -= "toc" in cls

    def heading(self, n: Node, level: int) -> str:
        return f"\n\n#heading(level: {level})[{self.inline(n.children)}]{self.label(n)}\n\n"

    def tag_h1(self, n, cls):
        return self.heading(n, 1)

    def tag_h2(self, n, cls):
        return self.heading(n, 2)

    def tag_h3(self, n, cls):
        return self.heading(n, 3)

    def tag_h4(self, n, cls):
        return self.heading(n, 4)

    def tag_p(self, n: Node, cls: set[str]) -> str:
        body = self.anchor(n) + self.inline(n.children)
        if "overall" in cls:
            width = "4.5pt" if "failed" in cls else "3pt"
            body = (f"#block(width: 100%, fill: rgb(\"{SOFT}\"), inset: (x: {pt(0.7)}, y: {pt(0.5)}), "
                    f"stroke: (left: {width} + rgb(\"{INK}\")))[#text(size: {pt(1.05)})[{body}]]")
        elif "note" in cls:
            body = (f"#block(inset: (left: {pt(0.6)}), stroke: (left: 2.25pt + rgb(\"{RULE}\")))"
                    f"[#text(size: {pt(0.85)}, fill: rgb(\"#333333\"))[{body}]]")
        elif "kicker" in cls:
            body = f"#text(size: {pt(0.8)}, tracking: 0.08em, fill: rgb(\"{MUTED}\"))[#upper[{body}]]"
        else:
            body = self.styled(body, cls)
        return f"\n\n{body}\n\n"

    def tag_pre(self, n: Node, cls: set[str]) -> str:   # the spec, verbatim (7pt, print.css)
        return (f"\n\n{self.anchor(n)}#block(width: 100%, stroke: 0.75pt + rgb(\"{RULE}\"), "
                f"inset: (x: {pt(0.8)}, y: {pt(0.6)}))[#set text(size: 7pt); #set par(leading: 0.45em)\n"
                f"#raw({lit(text_of(n))}, lang: \"yaml\", block: true)]\n\n")

    def tag_figure(self, n: Node, cls: set[str]) -> str:
        return f"\n\n#block(breakable: false, above: {pt(1)}, below: {pt(1)})[{self.inline(n.children)}]\n\n"

    def tag_figcaption(self, n: Node, cls: set[str]) -> str:
        return (f"\n#block(above: {pt(0.3)})[#text(size: {pt(0.82)}, fill: rgb(\"#333333\"))"
                f"[{self.inline(n.children)}]]\n")

    def tag_img(self, n: Node, cls: set[str]) -> str:
        alt = n.attrs.get("alt", "")
        if "data-plot" in n.attrs:
            k = int(n.attrs["data-plot"])
            width = float(n.attrs.get("data-width") or 0)
            size = f"width: {width:.3f}pt" if 0 < width <= 510 else "width: 100%"
            return f"#image(\"plots/{k}.svg\", {size}, alt: {lit(alt)})"
        m = re.match(r"data:image/(png|jpeg|svg\+xml);base64,(.*)$", n.attrs.get("src", ""), re.S)
        if not m:
            return ""                                   # the report's images are data: URIs; nothing is fetched
        ext = {"png": "png", "jpeg": "jpg", "svg+xml": "svg"}[m.group(1)]
        path = f"img{len(self.plots)}.{ext}"
        self.plots.append(path)
        (self.root / path).write_bytes(base64.b64decode(m.group(2)))
        return f"#box(height: {pt(3)}, image(\"{path}\", alt: {lit(alt)}))#h({pt(0.5)})"

    # --- lists -----------------------------------------------------------------------------------------------
    def items(self, n: Node) -> list[Node]:
        return [c for c in n.children if isinstance(c, Node) and c.tag == "li"]

    def tag_ul(self, n: Node, cls: set[str]) -> str:
        items = ", ".join(f"[{self.inline(li.children).strip()}{self.anchor(li).strip()}]" for li in self.items(n))
        return f"\n\n{self.anchor(n)}#list(spacing: {pt(0.3)}, {items})\n\n"

    def tag_ol(self, n: Node, cls: set[str]) -> str:
        if self.in_toc:   # nav.toc ol { list-style: none } and nested lists indented 1.2rem
            gap = f"{pt(0.2)} + 0.65em"
            inner = "\n".join(f"#block(above: {gap}, below: {gap})[{self.inline(li.children).strip()}]"
                              for li in self.items(n))
            return f"\n#pad(left: {pt(1.2) if self.in_toc > 1 else '0pt'})[{inner}]\n"
        items = []
        for i, li in enumerate(self.items(n), start=1):
            num = int(li.attrs.get("value", i)) if li.attrs.get("value", "").isdigit() else i
            items.append(f"enum.item({num})[{self.inline(li.children).strip()}]")
        return f"\n\n{self.anchor(n)}#enum(spacing: {pt(0.4)}, {', '.join(items)})\n\n"

    def tag_li(self, n: Node, cls: set[str]) -> str:   # nested <ol> in the contents
        if self.in_toc:
            self.in_toc += 1
            try:
                return self.inline(n.children)
            finally:
                self.in_toc -= 1
        return self.block_children(n)

    def tag_details(self, n: Node, cls: set[str]) -> str:
        return self.block_children(n)

    def tag_summary(self, n: Node, cls: set[str]) -> str:
        return f"\n\n#strong[{self.inline(n.children)}]\n\n"

    def tag_dl(self, n: Node, cls: set[str]) -> str:
        kids = [c for c in n.children if isinstance(c, Node)]
        if "facts" in cls:                              # three boxes of 32% side by side
            cells = []
            for div in kids:
                dt = find(div, lambda c: c.tag == "dt")
                dd = find(div, lambda c: c.tag == "dd")
                cells.append(f"[#text(size: {pt(0.78)}, tracking: 0.05em, fill: rgb(\"{MUTED}\"))"
                             f"[#upper[{self.inline(dt.children) if dt else ''}]]\\ "
                             f"{self.inline(dd.children) if dd else ''}]")
            return (f"\n\n#grid(columns: (32%, 32%, 32%), column-gutter: 2%, row-gutter: {pt(0.5)}, "
                    f"{', '.join(cells)})\n\n")
        if "kv" in cls:                                 # print.css: terms in a 13rem column
            cells, pending = [], None
            for c in kids:
                if c.tag == "dt":
                    if pending is not None:
                        cells += [pending, "[]"]
                    pending = f"[#text(fill: rgb(\"{MUTED}\"))[{self.inline(c.children)}]]"
                elif c.tag == "dd":
                    cells += [pending or "[]", f"[{self.inline(c.children)}]"]
                    pending = None
            if pending is not None:
                cells += [pending, "[]"]
            return (f"\n\n{self.anchor(n)}#block(above: {pt(0.4)}, below: {pt(0.4)})[#set text(size: {pt(0.9)})\n"
                    f"#grid(columns: ({pt(13)}, 1fr), row-gutter: {pt(0.35)}, {', '.join(cells)})]\n\n")
        out = []                                        # plain: term in bold, description indented
        for c in kids:
            if c.tag == "dt":
                out.append(f"#block(above: {pt(0.5)}, below: {pt(0.1)})[#strong[{self.inline(c.children)}]]")
            elif c.tag == "dd":
                out.append(f"#pad(left: {pt(1)})[{self.inline(c.children)}]")
        return "\n\n" + self.anchor(n) + "\n".join(out) + "\n\n"

    # --- tables ----------------------------------------------------------------------------------------------
    def tag_table(self, n: Node, cls: set[str]) -> str:
        size = 7.4 if "lb-clusters" in cls else 7.6 if "runs" in cls else 8.2
        inset = (0.28, 0.2) if "lb-clusters" in cls else (0.3, 0.2) if "runs" in cls else (0.5, 0.3)
        caption = ""
        head_rows: list[Node] = []
        body_rows: list[Node] = []
        for c in n.children:
            if not isinstance(c, Node):
                continue
            if c.tag == "caption":
                caption = (f"#block(below: {pt(0.2)})[#text(size: {pt(0.85)}, fill: rgb(\"{MUTED}\"))"
                           f"[{self.inline(c.children)}]]\n")
            elif c.tag == "thead":
                head_rows += [r for r in c.children if isinstance(r, Node) and r.tag == "tr"]
            elif c.tag in ("tbody", "tfoot"):
                body_rows += [r for r in c.children if isinstance(r, Node) and r.tag == "tr"]
            elif c.tag == "tr":
                body_rows.append(c)
        columns = _columns(head_rows + body_rows)  # auto widths (Typst shrinks them to fit the page)
        wrap_head = not cls & {"pairs", "lb-clusters"}  # print.css lets these headers wrap
        head = [self.cell(td, tr, cls, True, wrap_head, first=j == 0) for tr in head_rows
                for j, td in enumerate(_cells(tr))]
        body = [self.cell(td, tr, cls, False, False, first=j == 0) for tr in body_rows
                for j, td in enumerate(_cells(tr))]
        header = (f"table.header({', '.join(head)}, table.hline(stroke: 1.5pt + rgb(\"{INK}\"))), "
                  if head else "")
        return (f"\n\n{self.anchor(n)}#block(above: {pt(0.5)}, below: {pt(1)})[{caption}#set text(size: {size}pt)\n"
                f"#table(columns: {columns}, inset: (x: {pt(inset[0])}, y: {pt(inset[1])} + 0.33em), "
                f"stroke: (x, y) => (bottom: 0.75pt + rgb(\"{RULE}\")), {header}{', '.join(body)})]\n\n")

    def cell(self, td: Node, tr: Node, table_cls: set[str], in_head: bool, head_nowrap: bool, first: bool) -> str:
        cls, rcls = td.classes, tr.classes
        self.hl_first = first and "hl" in rcls
        body = self.inline(td.children).strip()
        self.hl_first = False
        if in_head:
            body = f"#text(size: {pt(0.8)}, tracking: 0.03em)[#upper[{body}]]"
        if "family-head" in rcls:
            body = f"#text(size: {pt(0.75)}, tracking: 0.06em, fill: white)[#upper[{body}]]"
        if td.tag == "th" or "hl" in rcls:
            body = f"#strong[{body}]"
        if "undefined-row" in rcls:
            body = f"#text(fill: rgb(\"{MUTED}\"))[{body}]"
        if (cls & {"n", "nw", "vi"} or in_head and head_nowrap or "nw" in cls) and "\n" not in body:
            body = f"#box[{body}]"
        args = []
        for span in ("colspan", "rowspan"):
            if td.attrs.get(span, "1").isdigit() and int(td.attrs.get(span, "1")) > 1:
                args.append(f"{span}: {int(td.attrs[span])}")
        if "n" in cls:
            args.append("align: right")
        fill = next((f for c, f in ROW_FILLS if c in rcls), None)
        if fill:
            args.append(f"fill: rgb(\"{fill}\")")
        if first and "summary-table" in table_cls and td.tag == "td":
            args.append(f"inset: (left: {pt(1.2)}, right: {pt(0.5)}, y: {pt(0.3)} + 0.33em)")
        return f"table.cell({', '.join(args)})[{body}]" if args else f"[{body}]"


def _cells(tr: Node) -> list[Node]:
    return [c for c in tr.children if isinstance(c, Node) and c.tag in ("td", "th")]


def _columns(rows: list[Node]) -> int:
    """The table's column count, row spans taken into account."""
    busy: dict[tuple[int, int], bool] = {}
    width = 1
    for r, tr in enumerate(rows):
        col = 0
        for td in _cells(tr):
            while busy.get((r, col)):
                col += 1
            cs = int(td.attrs.get("colspan", "1") or 1)
            rs = int(td.attrs.get("rowspan", "1") or 1)
            for dr in range(rs):
                for dc in range(cs):
                    busy[(r + dr, col + dc)] = True
            col += cs
        width = max(width, col, max((c + 1 for (rr, c) in busy if rr == r), default=0))
    return width


def document_settings(doc: Node, page_size: str, date: str | None) -> str:
    """The document's metadata, fonts and page (margins, running header from page 2, footer)."""
    meta = {}
    for m in _all(doc, "meta"):
        if m.attrs.get("name") in ("author", "description", "keywords"):
            meta[m.attrs["name"]] = m.attrs.get("content", "")
    title = find(doc, lambda c: c.tag == "title")
    header = find(doc, lambda c: "running-header" in c.classes)
    right = find(header, lambda c: "rh-right" in c.classes) if header else None
    left = "".join(text_of(c) for c in header.children if c is not right) if header else ""
    stamp = find(doc, lambda c: "generated-stamp" in c.classes)
    keywords = ", ".join(lit(k.strip()) for k in meta.get("keywords", "").split(",") if k.strip())
    parts = [f"title: {lit(text_of(title).strip()) if title else 'none'}"]
    if meta.get("author"):
        parts.append(f"author: {lit(meta['author'])}")
    if meta.get("description"):
        parts.append(f"description: {lit(meta['description'])}")
    if keywords:
        parts.append(f"keywords: ({keywords},)")
    m = re.match(r"^(\d{4})-(\d{2})-(\d{2})$", date or "")
    if m:
        parts.append(f"date: datetime(year: {int(m[1])}, month: {int(m[2])}, day: {int(m[3])})")
    paper = {"a4": "a4", "letter": "us-letter", "a3": "a3", "legal": "us-legal"}.get(page_size.lower().split()[0], "a4")
    small = '#set text(size: 7.5pt, fill: rgb("#333333"))'
    foot = small.replace("#333333", "#444444")
    head_left = lit(re.sub(r"\s+", " ", left).strip())
    head_right = lit(text_of(right).strip() if right else "")
    stamp_text = lit(text_of(stamp).strip() if stamp else "")
    return f"""#set document({', '.join(parts)})
#set text(font: "DejaVu Sans", size: {REM}pt, lang: "en", fill: rgb("{INK}"))
#set par(spacing: {pt(0.45)} + 0.65em, leading: 0.65em)
#set block(spacing: {pt(0.45)} + 0.65em)
#show raw: set text(font: "DejaVu Sans Mono")
#show heading: set text(fill: rgb("{ACCENT}"))
#show heading.where(level: 1): set text(size: 19pt)
#show heading.where(level: 1): set block(above: {pt(0.2)}, below: {pt(0.8)})
#show heading.where(level: 2): it => block(width: 100%, above: {pt(1.5)}, below: {pt(0.6)},
  inset: (bottom: {pt(0.25)}), stroke: (bottom: 1.5pt + rgb("{ACCENT}")), text(size: 14pt, it.body))
#show heading.where(level: 3): set text(size: 11.5pt)
#show heading.where(level: 3): set block(above: {pt(1.5)}, below: {pt(0.4)})
#show heading.where(level: 4): set text(size: {REM}pt)
#show heading.where(level: 4): set block(above: {pt(1.1)}, below: {pt(0.3)})
#set page(paper: "{paper}", margin: (top: 18mm, right: 15mm, bottom: 17mm, left: 15mm),
  header: context if here().page() > 1 {{
    block(width: 100%, stroke: (bottom: 0.5pt + rgb("#999999")), inset: (bottom: 1mm))[{small}
    #{head_left}#h(1fr)#{head_right}] }},
  footer: context [{foot}
    #{stamp_text}#h(1fr)Page #counter(page).get().first() of #counter(page).final().first()])
"""


def _all(node: Node, tag: str):
    for c in node.children:
        if isinstance(c, Node):
            if c.tag == tag:
                yield c
            yield from _all(c, tag)


def convert(html: str, root: Path, *, page_size: str = "A4", date: str | None = None,
            attachments: list[tuple[str, bytes, str, str, str]] = ()) -> dict:
    """Write ``root/main.typ`` (and ``root/plots/<k>.svg``, the attachments' files) from the report's HTML.
    ``attachments``: (name, data, relationship, MIME type, description). Returns what was written."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "plots").mkdir(exist_ok=True)
    svgs: list[str] = []

    def placeholder(m: re.Match) -> str:
        svg = m.group(0)
        head = dict(_ATTR.findall(svg[: svg.index(">") + 1]))
        width = head.get("width", "").removesuffix("pt")
        (root / "plots" / f"{len(svgs)}.svg").write_text(svg, encoding="utf-8")
        svgs.append(svg)
        alt = head.get("aria-label", "").replace('"', "&quot;")
        return f'<img class="plot" data-plot="{len(svgs) - 1}" data-width="{width}" alt="{alt}">'

    doc = parse(PLOT_SVG.sub(placeholder, html))
    conv = Converter(root)
    conv.ids = {c.attrs["id"] for c in _walk(doc) if c.attrs.get("id")}
    conv.ids &= {c.attrs["href"][1:] for c in _walk(doc) if c.tag == "a" and c.attrs.get("href", "").startswith("#")}
    body = find(doc, lambda c: c.tag == "body") or doc
    parts = [document_settings(doc, page_size, date)]
    for name, data, relationship, mime, description in attachments:
        (root / name).write_bytes(data)
        parts.append(f"#pdf.attach({lit(name)}, read({lit(name)}, encoding: none), relationship: {lit(relationship)}, "
                     f"mime-type: {lit(mime)}, description: {lit(description)})")
    parts.append(re.sub(r"\n{3,}", "\n\n", conv.node(body)))
    source = "\n".join(parts) + "\n"
    (root / "main.typ").write_text(source, encoding="utf-8")
    return {"typ_chars": len(source), "plots": len(svgs), "labels": len(conv.labelled)}


def _walk(node: Node):
    for c in node.children:
        if isinstance(c, Node):
            yield c
            yield from _walk(c)
