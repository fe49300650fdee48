"""The report page: ``render_html`` puts the declared sections (``sections.SECTIONS``) into one
self-contained HTML string; ``write_html`` writes it atomically. Drawing that takes longer
than ``PROGRESS_AFTER_S`` says so on stderr, figure by figure."""
from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

from simcli.errors import SimError
from simcli.report.html import load, plots, sections
from simcli.report.html.markup import CSS, esc

PROGRESS_AFTER_S = 2.0


class Progress:
    """A stderr line at most every two seconds, once drawing has taken two seconds: the
    section being drawn and the figures drawn so far."""

    def __init__(self, name: str, stream=None):
        self.t0 = self.last = time.perf_counter()
        self.name = name
        self.stream = stream if stream is not None else sys.stderr
        self.where = ""
        self.figures = 0

    def __call__(self, where: str | None = None) -> None:
        if where is not None:
            self.where = where
        else:
            self.figures += 1
        now = time.perf_counter()
        if now - self.t0 >= PROGRESS_AFTER_S and now - self.last >= PROGRESS_AFTER_S:
            self.last = now
            print(f"writing {self.name}: {self.where}, {self.figures} figures drawn ({now - self.t0:.0f} s)",
                  file=self.stream, flush=True)


def _toc(rep, shown: list) -> str:
    items = ['<ul class="toc">']
    for s in shown:
        items += sections.job_toc(rep) if s.id == "jobs" else [f'<li><a href="#{s.id}">{esc(s.title)}</a></li>']
    return "".join(items + ["</ul>"])


def render_html(report_dir: Path, shown_as: Path | None = None, progress: Progress | None = None) -> str:
    """The whole report page for the folder's tables, as one self-contained HTML string."""
    rep = load.load(report_dir, shown_as)
    tick = progress or (lambda where=None: None)
    figs = plots.Figures(tick=tick)
    shown = [s for s in sections.SECTIONS if s.applies(rep)]
    body = []
    for s in shown:
        tick(f"section {s.title or 'per job'}")
        html = s.render(rep, figs)
        body.append(html if s.id == "jobs" else f'<h2 id="{s.id}">{esc(s.title)}</h2>{html}')
    title = "simcli report"
    games = {j.get("game") for j in rep.jobs} or {rep.meta.get("jobs", [{}])[0].get("game")
                                                 if isinstance(rep.meta.get("jobs"), list) and rep.meta["jobs"] else None}
    if len(games) == 1 and next(iter(games)):
        title += f" — {next(iter(games))}"
    folder = (Path(shown_as) if shown_as else rep.folder.resolve()).name
    count = f"{len(rep.jobs)} job{'s' if len(rep.jobs) != 1 else ''}; " if rep.jobs else ""
    head = [f"<h1>{esc(title)}</h1>",
            f'<p class="muted">Report folder <code>{esc(folder)}</code>; {count}tables: '
            f"{esc(', '.join(n for n in load.TABLES if n in rep.tables))}.</p>"]
    if figs.skipped:
        head.append(f'<p class="cut">{figs.skipped} figure{"s" if figs.skipped != 1 else ""} left out: '
                    f"this page draws at most {figs.limit}. Every number is still in the tables.</p>")
    head.append(_toc(rep, shown))
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>{esc(title)}</title><style>{CSS}</style></head><body>\n"
            + "\n".join(head + body) + "\n</body></html>\n")


def default_html_path(report_dir: Path) -> Path:
    """Where ``simcli report DIR`` and ``--html`` put the page when no file is named."""
    return Path(report_dir) / "report.html"


def write_html(report_dir: Path, out_file: Path, shown_as: Path | None = None) -> Path:
    """Render ``report_dir`` and write the page to ``out_file`` atomically; returns the path.
    ``shown_as``: the folder's name to print (a staging folder is renamed after writing)."""
    out_file = Path(out_file)
    if not Path(report_dir).is_dir():
        raise SimError(f"{report_dir} is a file; give a folder written by run, sweep or ladder"
                       if Path(report_dir).exists() else f"report folder {report_dir} does not exist")
    if out_file.is_dir():
        raise SimError(f"--out {out_file} is a folder; give a file path such as {out_file / 'report.html'}")
    parent = out_file.parent if str(out_file.parent) else Path(".")
    if not parent.is_dir():
        raise SimError(f"--out {out_file}: folder {parent} does not exist")
    text = render_html(report_dir, shown_as, Progress(out_file.name))
    try:
        fd, tmp = tempfile.mkstemp(prefix=".simcli-html-", suffix=".tmp", dir=parent)
    except OSError as e:
        raise SimError(f"--out {out_file} is not writable ({e.strerror or e})") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, out_file)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return out_file
