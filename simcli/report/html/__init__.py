"""One self-contained HTML page for a report folder (``simcli report DIR``, ``--html``): a report
to send a co-designer. Verdicts first (the ``findings`` table, or findings computed from an older
folder's tables), provenance last, a glossary of every metric and method.

Modules: ``load`` (the folder's tables and meta.json -> one ``Report``), ``markup`` (CSS,
escaping, tables), ``plots`` and ``charts`` (matplotlib PNGs as data URIs), ``sections`` (every
section, and ``SECTIONS``: the one declared list, in page order, that drives both the contents
and the body), ``page`` (``render_html``, ``write_html``). The page needs nothing else: CSS
inline, no scripts, links, fonts or web addresses (a ``://`` in any text is written as an HTML
entity).
"""
from simcli.report.html.charts import arc_figure, arc_png
from simcli.report.html.load import TABLES, read_report
from simcli.report.html.markup import esc, fmt
from simcli.report.html.page import default_html_path, render_html, write_html

__all__ = ["TABLES", "arc_figure", "arc_png", "default_html_path", "esc", "fmt", "read_report",
           "render_html", "write_html"]
