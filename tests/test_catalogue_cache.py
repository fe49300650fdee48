"""`simcli list` reads the game catalogue from a cache keyed by its source files (issue #26)."""
from __future__ import annotations

import json

from simcli.config import catalogue


def test_the_cache_holds_what_describe_games_says_and_is_read_back(tmp_path, monkeypatch):
    monkeypatch.setattr(catalogue, "_cache_folder", lambda: tmp_path)
    fresh = catalogue.describe_games()
    assert catalogue.cached_games() == fresh
    (path,) = tmp_path.glob("simcli-catalogue-*.json")
    assert catalogue.lines(json.loads(path.read_text())) == catalogue.lines(fresh)
    path.write_text(json.dumps([{"marker": 1}]))      # the next call reads the file, not the modules
    assert catalogue.cached_games() == [{"marker": 1}]


def test_an_edited_source_gives_a_new_key_and_the_old_file_goes(tmp_path, monkeypatch):
    src = tmp_path / "src.toml"
    src.write_text("a = 1\n")
    sources = catalogue._sources()
    monkeypatch.setattr(catalogue, "_sources", lambda: [*sources, src])
    monkeypatch.setattr(catalogue, "_cache_folder", lambda: tmp_path / "cache")
    catalogue.cached_games()
    (first,) = (tmp_path / "cache").glob("simcli-catalogue-*.json")
    first.write_text(json.dumps([{"marker": 1}]))
    src.write_text("a = 22\n")                        # another size: another key
    assert catalogue.cached_games() == catalogue.describe_games()
    (second,) = (tmp_path / "cache").glob("simcli-catalogue-*.json")
    assert second != first


def test_a_cache_folder_that_cannot_be_made_means_no_cache(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setattr(catalogue, "_cache_folder", lambda: blocker / "sub")
    assert catalogue.cached_games() == catalogue.describe_games()
    assert catalogue.cached_games() == catalogue.describe_games()
