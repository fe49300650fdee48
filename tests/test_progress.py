"""Progress that tells the truth (issue #25): compile estimates from this machine's recorded
compile times, small chunks for slow players under a bar, HTML progress after two seconds."""
from __future__ import annotations

import io
import json
import time

import pytest

from simcli.engine import compile as comp


def test_compile_estimate_comes_from_recorded_times_and_fills_the_free_lane(tmp_path):
    lines = []
    first = comp.CompileProgress(["b", "a", "c"], 2, [str(tmp_path)], lines.append)
    assert first.estimate_left() is None          # never measured on this machine
    first.report()
    first.last = 0.0
    first.t0 -= 100
    first.report()
    assert "no estimate yet" in lines[-1]
    (tmp_path / comp.TIMES_FILE).write_text(json.dumps({"a": 10.0, "b": 20.0, "c": 5.0}))
    p = comp.CompileProgress(["b", "a", "c"], 2, [str(tmp_path)], lines.append)
    p.started("b")
    p.started("a")
    # lanes: b 20 s and a 10 s; c (5 s) queues behind a: 15 s; the run ends with b at 20 s
    assert p.estimate_left() == pytest.approx(20.0, abs=0.5)
    p.finished("a")
    p.started("c")
    assert p.estimate_left() == pytest.approx(20.0, abs=0.5)
    p.save()
    saved = json.loads((tmp_path / comp.TIMES_FILE).read_text())
    assert set(saved) == {"a", "b", "c"} and saved["a"] < 1.0      # a's own (short) time replaced 10 s
    assert any(line.startswith("  compiled a in") for line in lines)


def test_a_search_player_plays_small_chunks_only_under_a_progress_bar():
    from simcli.config import jobs as cfg
    from simcli.engine import runner
    mc = cfg.resolve("forecasts-cubes", seats="mc:4,heuristic,heuristic,heuristic")
    plain = cfg.resolve("forecasts-cubes", policy="heuristic")
    assert runner.progress_chunk(mc, 1 << 16, True) == runner.SLOW_CHUNK
    assert runner.progress_chunk(mc, 1 << 16, False) == 1 << 16
    assert runner.progress_chunk(plain, 1 << 16, True) == 1 << 16


def test_html_progress_says_nothing_for_two_seconds_then_at_most_every_two(monkeypatch):
    from simcli.report.html import page
    out = io.StringIO()
    p = page.Progress("report.html", out)
    p("section Verdict")
    assert out.getvalue() == ""
    p.t0 -= 3
    p.last -= 3
    p()
    p()
    text = out.getvalue().splitlines()
    assert len(text) == 1 and text[0].startswith("writing report.html: section Verdict, 1 figures drawn")
