"""Shared test settings: Numba compiles on first call, so Hypothesis gets no deadline."""
import os

from hypothesis import settings

# Printed tables wrap at $COLUMNS (simcli/report/fmt.py). pytest-xdist's workers inherit
# COLUMNS=80 from execnet, a plain pytest process none: every test sees the same environment
# (no COLUMNS: the not-a-tty width); a test about the width sets it itself (monkeypatch).
os.environ.pop("COLUMNS", None)

settings.register_profile("simcli", deadline=None, max_examples=100)
settings.load_profile("simcli")

# The tests compile every kernel in this process, as a compile child does: CPython's frame chunks
# from malloc instead of one mmap/munmap per swing of Numba's recursion (simcli/engine/pyarena.py).
from simcli.engine import pyarena  # noqa: E402

pyarena.install()


# The fast set (`pytest -m "not slow"`, under two minutes on 2 cores with a warm Numba cache) leaves
# out the tests marked slow in their files and these, each measured at 2.5 s or more warm
# (`pytest -m "not slow" --durations=40`, 2026-12-02), or a Dask cluster, or a long replay
# against a plain-Python statement of the rules (the rules tests with hand-built deals stay fast),
# or a study (interval coverage, CLI fuzzing).
# The full suite (`pytest`, what .ci/run runs) runs everything.
SLOW = (
    "tests/test_compile.py::test_fresh_cache_is_cold_compiled_is_warm_and_loaded_from_disk",
    "tests/test_contract.py::test_result_rows_are_well_formed[daily-weather-",
    "tests/test_cli_fuzz.py::",
    "tests/test_sudden_skies_mc.py::test_search_ends_games_at_the_turn_cap_less_often_than_the_drawer",
    "tests/test_forecasts_cubes_mc.py::test_mc_results_are_identical_across_threads_and_chunks",
    "tests/test_tuned.py::test_train_command_writes_through_the_output_contract",
    "tests/test_tune.py::test_cubes_length_target_is_exactly_eight_tricks_per_round",
    "tests/test_output_contract.py::test_a_failed_run_leaves_no_folder_behind",
    "tests/test_reliability.py::test_an_interrupted_dask_run_leaves_no_scratch_space",
    "tests/test_daily_weather_mc.py::test_mc_beats_greedy_on_paired_deals",
    "tests/test_coverage.py::",
    "tests/test_deal_unit.py::test_until_ci_stops_at_the_same_deal_for_any_chunk",
    "tests/test_cli.py::test_dask_backend_from_the_command_line_matches_local",
    "tests/test_dask_backend.py::",
    "tests/test_pipeline.py::test_dask_gives_the_local_tables",
    "tests/test_pgc_games.py::test_kernel_agrees_with_the_plain_statement",
    "tests/test_daily_weather.py::test_reference_agrees_random",
)


def pytest_configure(config):
    """With xdist workers (`-n`, the default in pyproject.toml), compile every game's two big
    builds (plain and search: `simcli compile`) once, in this controller process, before the
    workers start, in two processes. Otherwise each worker compiles whatever its first test
    needs, and on a cold cache both can compile the same build at the same time. A warm cache
    costs a check of each build (about a second); `SIMCLI_TEST_PRECOMPILE=0` skips it."""
    if hasattr(config, "workerinput") or not getattr(config.option, "numprocesses", None):
        return
    if os.environ.get("SIMCLI_TEST_PRECOMPILE", "1") == "0":
        return
    import sys

    from simcli.engine.compile import compile_jobs, compile_jobs_for_games
    compile_jobs(compile_jobs_for_games([]), lambda line: print(line, file=sys.stderr))


def pytest_collection_modifyitems(config, items):
    import pytest
    for item in items:
        if item.nodeid.startswith(SLOW):
            item.add_marker(pytest.mark.slow)
