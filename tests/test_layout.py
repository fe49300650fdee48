"""The shape of the house (issue #22): short functions, thin CLI commands, imports that point
down the layers (cli -> analyses -> engine/report -> config -> kernels), nothing importing the CLI."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SIMCLI = ROOT / "simcli"
MAX_FUNCTION = 120
MAX_COMMAND = 25


def _functions(path: Path):
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node, node.end_lineno - node.lineno + 1


def test_no_function_in_simcli_is_longer_than_120_lines():
    long = [f"{p.relative_to(ROOT)}:{n.lineno} {n.name} ({k} lines)"
            for p in sorted(SIMCLI.rglob("*.py")) for n, k in _functions(p) if k > MAX_FUNCTION]
    assert not long, "\n".join(long)


def test_cli_commands_are_thin():
    """A command function parses and hands over: its body (after the signature) is short."""
    fat = []
    for p in sorted((SIMCLI / "cli").rglob("*.py")):
        for node, _ in _functions(p):
            if any(isinstance(d, ast.Call) and getattr(d.func, "attr", "") == "command"
                   for d in node.decorator_list):
                body = node.end_lineno - node.body[0].lineno + 1
                if body > MAX_COMMAND:
                    fat.append(f"{node.name}: {body} lines")
    assert not fat, fat


def _imports(path: Path) -> set[str]:
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return out


LAYER = {"cli": 4, "analyses": 3, "engine": 2, "report": 2, "config": 1}


def _layer(module: str) -> int | None:
    parts = module.split(".")
    if parts[0] == "kernels":
        return 0
    if parts[0] == "simcli" and len(parts) > 1 and parts[1] in LAYER:
        return LAYER[parts[1]]
    return None


def test_imports_point_down_the_layers():
    """No layer imports a layer above it (cli 4 > analyses 3 > engine, report 2 > config 1 > kernels 0),
    and no simcli module imports the package ``__init__`` (the Python API) for its own use."""
    wrong = []
    for p in sorted(SIMCLI.rglob("*.py")):
        rel = p.relative_to(SIMCLI).parts
        if len(rel) < 2 or rel[0] not in LAYER:
            continue
        mine = LAYER[rel[0]]
        for m in _imports(p):
            theirs = _layer(m)
            if theirs is not None and theirs > mine:
                wrong.append(f"{'/'.join(rel)} imports {m}")
    assert not wrong, "\n".join(wrong)


def test_kernels_never_import_simcli():
    wrong = [str(p) for p in (ROOT / "kernels").rglob("*.py") if any(m.startswith("simcli") for m in _imports(p))]
    assert not wrong


def test_row_layout_names_every_column_once():
    """RowLayout's named columns tile the row exactly (scores, places, the four fixed columns,
    counters, the arc block) and agree with the kernels' col_* functions."""
    from kernels import layout
    for S, C in ((1, 3), (2, 0), (4, 7), (6, 12)):
        row = layout.RowLayout(S, C)
        cols = (list(range(row.width))[row.scores] + list(range(row.width))[row.places]
                + [row.winners, row.length, row.flags, row.decisions]
                + list(range(row.width))[row.counters] + list(range(row.width))[row.arc])
        assert sorted(cols) == list(range(row.width)) == list(range(layout.out_width(S, C)))
        assert (row.winners, row.length, row.flags, row.decisions) == (
            layout.col_winners(S), layout.col_length(S), layout.col_flags(S), layout.col_decisions(S))
        assert [row.counter(i) for i in range(C)] == [layout.col_counter(S, i) for i in range(C)]
        assert row.arc.start == layout.col_arc(S, C)
        assert layout.RowLayout.of_width(row.width, C) == row
